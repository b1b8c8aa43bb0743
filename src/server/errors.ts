/**
 * Corral's one error vocabulary. The cluster layer maps Kubernetes failures into it, domain code throws it, and each
 * transport (REST, tRPC, Proxmox) maps it once more into its own envelope — so a status code is decided in one place.
 */
export type CorralErrorCode =
  | 'BAD_REQUEST' // 400: invalid input (names the field)
  | 'FORBIDDEN' // 403: read-only caller, cross-site request, RBAC refusal
  | 'NOT_FOUND' // 404: no such object
  | 'CONFLICT' // 409: state does not allow it (pause a stopped VM, name taken)
  | 'UNPROCESSABLE' // 422: the cluster refused the object as invalid
  | 'NOT_IMPLEMENTED' // 501: not available here
  | 'BAD_GATEWAY' // 502: the cluster answered with a failure
  | 'UNAVAILABLE' // 503: the cluster cannot be reached / caches not synced
  | 'TIMEOUT'; // 504: the cluster did not answer in time

export const httpStatusOf: Record<CorralErrorCode, number> = {
  BAD_REQUEST: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  UNPROCESSABLE: 422,
  NOT_IMPLEMENTED: 501,
  BAD_GATEWAY: 502,
  UNAVAILABLE: 503,
  TIMEOUT: 504,
};

export class CorralError extends Error {
  readonly code: CorralErrorCode;
  constructor(code: CorralErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CorralError';
    this.code = code;
  }
}

export function isCorralError(err: unknown): err is CorralError {
  return err instanceof CorralError;
}

/** A message for any thrown value, for logs and task journals. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

const ADDRESS_PATTERNS: RegExp[] = [
  // URLs of any scheme a client library prints (https://, http://, wss://, tcp://)
  /\b[a-z][a-z0-9+.-]*:\/\/[^\s'"<>),]+/gi,
  // [IPv6]:port, full IPv6, and compressed IPv6 (a '::'); MAC addresses (six 2-digit groups) stay
  /\[[0-9a-f:.]+\](?::\d{1,5})?/gi,
  /\b(?:[0-9a-f]{1,4}:){7}[0-9a-f]{1,4}\b/gi,
  /(?:\b[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?::(?:[0-9a-f]{1,4}(?::[0-9a-f]{1,4})*)?\b/gi,
  // IPv4, with or without a port
  /\b(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?\b/g,
  // host.domain:port (a dot is required, so `local-lvm:10` or a Proxmox UPID is left alone)
  /\b[a-z0-9-]+(?:\.[a-z0-9-]+)+:\d{1,5}\b/gi,
];

/**
 * The message with network addresses replaced, for callers who may not learn the cluster's internals (anonymous and
 * read-only callers): "connect ECONNREFUSED 10.0.0.1:6443" becomes "connect ECONNREFUSED <address>". The one
 * implementation for every front door; the Proxmox API passes its own wording ("the cluster").
 */
export function redactAddresses(message: string, replacement = '<address>'): string {
  return ADDRESS_PATTERNS.reduce((m, re) => m.replace(re, replacement), message);
}
