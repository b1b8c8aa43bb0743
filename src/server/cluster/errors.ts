/**
 * Kubernetes failures mapped once into CorralError, keeping the apiserver's message (it names the object and the
 * rule). Transport failures become 503 (unreachable) or 504 (no answer in time), so callers fail fast and clearly.
 */
import { CorralError, type CorralErrorCode } from '../errors';

interface KubeStatus {
  kind?: string;
  message?: string;
  reason?: string;
  code?: number;
}

const BY_STATUS: Record<number, CorralErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'BAD_GATEWAY', // Corral's own credentials were refused: a server-side problem, not the caller's
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'BAD_GATEWAY',
  409: 'CONFLICT',
  410: 'CONFLICT',
  415: 'BAD_GATEWAY',
  422: 'UNPROCESSABLE',
  429: 'UNAVAILABLE',
  500: 'BAD_GATEWAY',
  501: 'NOT_IMPLEMENTED',
  502: 'BAD_GATEWAY',
  503: 'UNAVAILABLE',
  504: 'TIMEOUT',
};

export function fromKubeResponse(status: number, bodyText: string, what: string): CorralError {
  let message: string;
  try {
    const parsed = JSON.parse(bodyText) as KubeStatus;
    message = parsed.message ?? '';
  } catch {
    message = bodyText.trim().slice(0, 500);
  }
  const code = BY_STATUS[status] ?? (status >= 500 ? 'BAD_GATEWAY' : 'BAD_REQUEST');
  const prefix = status === 401 ? "the cluster refused Corral's credentials: " : '';
  return new CorralError(code, `${prefix}${message || `${what}: HTTP ${status}`}`);
}

export function fromTransportError(err: unknown, what: string, server: string, timeoutMs: number): CorralError {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new CorralError('TIMEOUT', `the cluster at ${server} did not answer ${what} within ${timeoutMs} ms`, {
      cause: err,
    });
  }
  const detail = e?.cause?.code ?? e?.cause?.message ?? e?.message ?? String(err);
  return new CorralError('UNAVAILABLE', `cannot reach the cluster at ${server} (${detail}) while ${what}`, {
    cause: err,
  });
}
