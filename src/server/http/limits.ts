/**
 * Limits enforced before a handler sees a request (docs/security.md "Limits"): body size while streaming, URL and
 * header size, header/request/idle time-outs, and concurrent connections per peer. Each number is overridable by
 * an environment variable so an operator behind a slow link or a busy proxy can raise it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { normaliseAddress } from './trust';

export interface HttpLimits {
  /** Largest request body read by any route (Content-Length or chunked). */
  maxBodyBytes: number;
  /** Longest request target (path + query). */
  maxUrlBytes: number;
  /** Largest header block (node's maxHeaderSize; larger requests get 431). */
  maxHeaderBytes: number;
  /** Time for a client to send its headers. */
  headersTimeoutMs: number;
  /** Time for a client to send its whole request (headers and body). */
  requestTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed (SSE streams ping well inside it). */
  idleTimeoutMs: number;
  /**
   * Idle keep-alive connections between requests are closed after this long. Longer than the 60 s that proxies and
   * load balancers keep an idle upstream connection (nginx, AWS ALB): the side that closes first races the other's
   * next request on that connection, which then fails with ECONNRESET — so Corral should not be the one to close.
   */
  keepAliveTimeoutMs: number;
  /** Concurrent connections from one peer address; more are closed at once. */
  maxConnectionsPerPeer: number;
}

export const DEFAULT_LIMITS: HttpLimits = {
  maxBodyBytes: 1024 * 1024,
  maxUrlBytes: 8 * 1024,
  maxHeaderBytes: 16 * 1024,
  headersTimeoutMs: 20_000,
  requestTimeoutMs: 60_000,
  idleTimeoutMs: 120_000,
  keepAliveTimeoutMs: 65_000,
  maxConnectionsPerPeer: 256,
};

const ENV: Record<keyof HttpLimits, string> = {
  maxBodyBytes: 'CORRAL_MAX_BODY_BYTES',
  maxUrlBytes: 'CORRAL_MAX_URL_BYTES',
  maxHeaderBytes: 'CORRAL_MAX_HEADER_BYTES',
  headersTimeoutMs: 'CORRAL_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'CORRAL_REQUEST_TIMEOUT_MS',
  idleTimeoutMs: 'CORRAL_IDLE_TIMEOUT_MS',
  keepAliveTimeoutMs: 'CORRAL_KEEPALIVE_TIMEOUT_MS',
  maxConnectionsPerPeer: 'CORRAL_MAX_CONNECTIONS_PER_PEER',
};

/** Defaults, then the environment, then explicit overrides; a malformed variable throws naming it. */
export function resolveLimits(overrides: Partial<HttpLimits> = {}, env: NodeJS.ProcessEnv = process.env): HttpLimits {
  const limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(ENV) as (keyof HttpLimits)[]) {
    const raw = env[ENV[key]]?.trim();
    if (!raw) continue;
    if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new Error(`${ENV[key]}: must be a positive whole number`);
    limits[key] = Number(raw);
  }
  return { ...limits, ...overrides };
}

export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`request body larger than ${limit} bytes`);
  }
}

/**
 * Reads a request body, refusing it as soon as it passes `limit` — by the declared Content-Length before reading
 * anything, or by counting a chunked body as it streams — so an oversized body is never held in memory. On refusal
 * the request stops being read; answer with `Connection: close` and the socket goes away with the response.
 */
export function readBodyLimited(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(new BodyTooLarge(limit));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        chunks.length = 0;
        req.pause();
        reject(new BodyTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** Options for node:http(s) createServer: header size, and a time-out check often enough to honour the limits. */
export function serverOptions(limits: HttpLimits): { maxHeaderSize: number; connectionsCheckingInterval: number } {
  return {
    maxHeaderSize: limits.maxHeaderBytes,
    // node checks headers/request time-outs on this interval (default 30 s, which would stretch a 20 s limit to 50 s).
    connectionsCheckingInterval: Math.max(100, Math.min(5_000, Math.floor(limits.headersTimeoutMs / 4))),
  };
}

const REQUEST_TIMERS = new WeakMap<IncomingMessage, NodeJS.Timeout>();

/**
 * Corral's "whole request within `requestTimeoutMs`". Node's own `server.requestTimeout` cannot spare one request,
 * and an upload from a slow link (an ISO, a disk image, a move's upload to Corral's Proxmox API) lawfully takes
 * longer than a minute, so Node's is off and this timer does its job: a request whose body has not arrived in
 * time gets Node's own answer — `408` with `Connection: close` if nothing was sent yet — and the socket is
 * destroyed. Written straight to the socket as Node does, so a handler still reading the body finds a closed
 * connection rather than an ended response it could write to twice.
 */
function armRequestTimeout(req: IncomingMessage, res: ServerResponse, ms: number): void {
  const timer = setTimeout(() => {
    REQUEST_TIMERS.delete(req);
    if (req.complete) return;
    const socket = req.socket;
    if (socket.writable && socket.bytesWritten === 0) {
      const body = JSON.stringify({ error: `the request was not complete within ${ms} ms` });
      socket.write(
        `HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  }, ms);
  timer.unref();
  REQUEST_TIMERS.set(req, timer);
  const clear = () => exemptFromRequestTimeout(req);
  req.once('end', clear);
  res.once('close', clear);
}

/**
 * Spares `req` the request time-out: for a route that streams a body at the client's pace (uploads), called once
 * the caller has been checked, so only admitted callers can hold a connection that long.
 */
export function exemptFromRequestTimeout(req: IncomingMessage): void {
  const timer = REQUEST_TIMERS.get(req);
  if (timer === undefined) return;
  clearTimeout(timer);
  REQUEST_TIMERS.delete(req);
}

/** Applies the time-outs and the per-peer connection cap to a node:http(s) server. */
export function applyServerLimits(server: Server, limits: HttpLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  // Node's request time-out spares no route; armRequestTimeout applies the same limit with exemptions.
  server.requestTimeout = 0;
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) =>
    armRequestTimeout(req, res, limits.requestTimeoutMs),
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.setTimeout(limits.idleTimeoutMs, (socket: Socket) => socket.destroy());
  const perPeer = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const peer = normaliseAddress(socket.remoteAddress);
    const open = perPeer.get(peer) ?? 0;
    if (open >= limits.maxConnectionsPerPeer) {
      socket.destroy();
      return;
    }
    perPeer.set(peer, open + 1);
    socket.once('close', () => {
      const left = (perPeer.get(peer) ?? 1) - 1;
      if (left <= 0) perPeer.delete(peer);
      else perPeer.set(peer, left);
    });
  });
}
