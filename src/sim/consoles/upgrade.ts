/**
 * WebSocket plumbing shared by the console endpoints: refuse an upgrade with a Kubernetes `Status` (real
 * apiservers and virt-api validate before upgrading, so clients see plain HTTP errors), and accept one with a
 * chosen subprotocol through `ws` in noServer mode.
 */
import type { IncomingMessage } from 'node:http';
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { ApiError } from '../store/errors.js';

/** Client→server messages larger than this are refused (console input is keystrokes and resize events). */
const MAX_CLIENT_MESSAGE = 1 << 20;

/** Write `error` as an HTTP response on the not-yet-upgraded socket and close it. */
export function refuseUpgrade(socket: Duplex, error: unknown): void {
  const apiError =
    error instanceof ApiError
      ? error
      : new ApiError(500, 'InternalError', `Internal error occurred: ${(error as Error)?.message ?? String(error)}`);
  const body = JSON.stringify(apiError.toStatus());
  const head =
    `HTTP/1.1 ${apiError.code} ${STATUS_CODES[apiError.code] ?? 'Error'}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Cache-Control: no-cache, private\r\n' +
    'Connection: close\r\n\r\n';
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(head + body);
}

/**
 * Path segment decoding that never throws: a malformed escape (`%zz`) makes the path simply not match, so the
 * apiserver answers 404 instead of an exception escaping the upgrade handler.
 */
export function decodeSegment(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The request is a WebSocket upgrade at all (a plain GET on a streaming subresource is a client error). */
export function isWebSocketUpgrade(req: IncomingMessage): boolean {
  return (req.headers.upgrade ?? '').toLowerCase() === 'websocket';
}

/**
 * A noServer WebSocketServer that echoes the first of `preferred` the client offered (in server preference
 * order), or no subprotocol when none matches — what gorilla/websocket's Upgrader does for virt-api and kubelet.
 */
export function websocketAcceptor(preferred: readonly string[]) {
  const server = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_CLIENT_MESSAGE,
    handleProtocols: (offered: Set<string>) => preferred.find((p) => offered.has(p)) ?? false,
  });
  return {
    accept(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<WebSocket> {
      return new Promise((resolve) => server.handleUpgrade(req, socket, head, (ws) => resolve(ws)));
    },
    /** Offered subprotocols of a request, for validation before upgrading. */
    offered(req: IncomingMessage): string[] {
      return (req.headers['sec-websocket-protocol'] ?? '')
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
    },
  };
}
