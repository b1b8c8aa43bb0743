/**
 * The checks every request and WebSocket upgrade passes before any handler (docs/security.md), shared by Corral's
 * server and the standalone Proxmox server: Host allow-list (421), URL length (414), and identity headers removed
 * unless the peer is a trusted proxy. The request's trust is recorded for identityFor().
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { HttpLimits } from './limits';
import { assessRequest, hostAllowed, IDENTITY_HEADERS, rememberTrust, type TrustConfig } from './trust';

export interface Refusal {
  status: 414 | 421;
  message: string;
}

const REASONS: Record<Refusal['status'], string> = { 414: 'URI Too Long', 421: 'Misdirected Request' };

const ignoredIdentityPeers = new Set<string>();

/**
 * The checks every request and upgrade passes before any handler: a refusal (status + message), or undefined with
 * the request's trust recorded and identity headers from untrusted peers removed (logged once per peer).
 */
export function frontDoor(
  req: IncomingMessage,
  trust: TrustConfig,
  limits: Pick<HttpLimits, 'maxUrlBytes'>,
): Refusal | undefined {
  if (!hostAllowed(trust, req.headers.host))
    return {
      status: 421,
      message: `this server does not answer to Host ${JSON.stringify(req.headers.host ?? '')}; add it to CORRAL_ALLOWED_HOSTS`,
    };
  if ((req.url ?? '').length > limits.maxUrlBytes)
    return { status: 414, message: `request URL longer than ${limits.maxUrlBytes} bytes` };
  const assessed = assessRequest(trust, req.socket.remoteAddress, req.headers);
  if (!assessed.trustedPeer) {
    const sent = IDENTITY_HEADERS.filter((h) => req.headers[h] !== undefined);
    for (const h of sent) delete req.headers[h];
    if (sent.length && !ignoredIdentityPeers.has(assessed.peer) && ignoredIdentityPeers.size < 1000) {
      ignoredIdentityPeers.add(assessed.peer);
      console.warn(
        `[corral] ignoring ${sent.join(', ')} from ${assessed.peer}: not a trusted proxy (CORRAL_TRUSTED_PROXIES)`,
      );
    }
  }
  rememberTrust(req, assessed);
  return undefined;
}

/** Answers a refused upgrade on the raw socket, before any WebSocket handshake. */
export function refuseUpgrade(socket: Duplex, refusal: Refusal): void {
  const body = JSON.stringify({ error: refusal.message });
  socket.end(
    `HTTP/1.1 ${refusal.status} ${REASONS[refusal.status]}\r\nConnection: close\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** Answers a refused request: `{"error": …}` and the connection closed. */
export function refuseRequest(
  res: ServerResponse,
  refusal: Refusal,
  body = JSON.stringify({ error: refusal.message }),
): void {
  res.writeHead(refusal.status, REASONS[refusal.status], {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close',
  });
  res.end(body);
}
