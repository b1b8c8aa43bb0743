/**
 * One node:http server on one port (stack-notes §3): /healthz, /readyz, /metrics, /api/openapi.json, /api/docs, /api/* REST,
 * /trpc/* tRPC (superjson, SSE subscriptions), /api2/json/* → the Proxmox handler once mounted, everything else →
 * Next.js. WebSocket upgrades are routed by path prefix to registered handlers (consoles register /api/vnc/ and
 * /api/tty/); in dev, /_next/ upgrades go to Next's HMR through a private "upgrade bus" server, others are closed.
 *
 * Every request and upgrade passes the front door first (docs/security.md): Host allow-list (421), URL length
 * (414), identity headers dropped unless the peer is a trusted proxy, and the limits of http/limits.ts.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import { nodeHTTPRequestHandler } from '@trpc/server/adapters/node-http';
import type { PrometheusCollector } from '../domain/prometheus';
import type { CorralServices } from '../domain/services';
import { identityFor } from '../identity-http';
import { redactAddresses } from '../errors';
import { buildOpenApiDocument } from '../openapi';
import { createRestHandler, sendJsonError } from '../rest';
import { appRouter } from '../routers/_app';
import { createContextInner } from '../trpc';
import { API_DOCS_HTML, API_DOCS_SCRIPT } from './api-docs';
import { compressLargeJson } from './compression';
import { applyServerLimits, resolveLimits, serverOptions, type HttpLimits } from './limits';
import { frontDoor, refuseUpgrade } from './front-door';
import { serveMetrics } from './metrics-route';
import { staticPageSecurityHeaders } from './security-headers';
import { trustConfig, type TrustConfig } from './trust';

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
export type UpgradeHandler = (req: IncomingMessage, socket: Duplex, head: Buffer) => void;

export interface CorralHttpServer {
  server: Server;
  services: CorralServices;
  /** Route WebSocket upgrades whose path starts with `prefix` (e.g. '/api/vnc/') to `handler`. */
  registerUpgrade(prefix: string, handler: UpgradeHandler): void;
  /** Serve /api2/json/* (the Proxmox VE-compatible API) with `handler`; req.url is left intact. */
  mountProxmox(handler: RequestHandler): void;
  /** Everything no other route claims (Next.js). */
  setFallback(handler: RequestHandler, upgrade?: UpgradeHandler): void;
  /**
   * Runs `hook` when close() begins, before any socket is destroyed: what must say goodbye on an open connection
   * (console bridges closing with a reason) does it here.
   */
  onClose(hook: () => void): void;
  /** Closes SSE streams and upgraded sockets too (server.close alone waits for them forever). */
  close(): Promise<void>;
}

export interface CorralHttpOptions {
  services: CorralServices;
  /** Why the server is not ready beyond the cache (e.g. "Next.js still building"). */
  extraReadiness?: () => string | undefined;
  /** PEM certificate and key: serve HTTPS (TLS 1.2 and 1.3) instead of plain HTTP on the one port. */
  tls?: { cert: string; key: string };
  /** Trusted proxies, allowed hosts, exposure (default: from the environment, listening on loopback). */
  trust?: TrustConfig;
  /** Overrides of the request limits (defaults and CORRAL_* variables otherwise). */
  limits?: Partial<HttpLimits>;
  /** `--metrics`: the collector /metrics renders; without it /metrics says corral_collection_success 0. */
  prometheus?: PrometheusCollector;
}

/** The API reference runs one inline script: its hash, and nothing else, may execute there. */
const API_DOCS_HEADERS = staticPageSecurityHeaders([API_DOCS_SCRIPT]);

export function createCorralHttpServer(options: CorralHttpOptions): CorralHttpServer {
  const { services } = options;
  const trust = options.trust ?? trustConfig({ listenHost: '127.0.0.1' });
  const limits = resolveLimits(options.limits);
  const rest = createRestHandler(services, { maxBodyBytes: limits.maxBodyBytes });
  const upgrades: { prefix: string; handler: UpgradeHandler }[] = [];
  const sockets = new Set<Duplex>();
  const closeHooks: (() => void)[] = [];
  let proxmox: RequestHandler | undefined;
  let fallback: RequestHandler | undefined;
  let fallbackUpgrade: UpgradeHandler | undefined;
  let openapi: string | undefined;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    const refusal = frontDoor(req, trust, limits);
    if (refusal) {
      res.setHeader('Connection', 'close');
      sendJsonError(res, refusal.status, refusal.message);
      return;
    }
    const url = req.url ?? '/';
    const path = url.split('?')[0] ?? '/';
    if (path === '/healthz') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const extra = options.extraReadiness?.();
      if (services.cluster.isReady() && !extra) {
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ status: 'ready' }));
      } else {
        // /readyz is anonymous: the problems say which kind is down and why, without the cluster's address.
        const problems = (services.cluster.readinessProblems?.() ?? []).map((p) => redactAddresses(p));
        const reason =
          extra ??
          (problems.length
            ? problems.join('; ')
            : 'the cluster cache has not synced, or the cluster has been unreachable for a while');
        res
          .writeHead(503, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ status: 'not ready', error: reason, problems }));
      }
      return;
    }
    if (path === '/metrics') {
      await serveMetrics(req, res, options.prometheus);
      return;
    }
    // Large JSON answers of the APIs go out gzip/brotli-compressed when the client accepts it (compression.ts).
    if (path.startsWith('/api') || path.startsWith('/trpc/')) compressLargeJson(req, res);
    if (path === '/api/openapi.json') {
      openapi ??= JSON.stringify(buildOpenApiDocument(), null, 2);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(openapi);
      return;
    }
    if (path === '/api/docs' || path === '/api/docs/') {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8', ...API_DOCS_HEADERS }).end(API_DOCS_HTML);
      return;
    }
    if (path.startsWith('/api2/json/') || path === '/api2/json') {
      if (proxmox) return proxmox(req, res);
      res
        .writeHead(501, { 'Content-Type': 'application/json' })
        .end(JSON.stringify({ data: null, message: 'the Proxmox VE API is not mounted in this build' }));
      return;
    }
    if (path.startsWith('/trpc/')) {
      await nodeHTTPRequestHandler({
        router: appRouter,
        req,
        res,
        path: path.slice('/trpc/'.length),
        maxBodySize: limits.maxBodyBytes,
        createContext: () =>
          createContextInner({
            services,
            identity: identityFor(req),
            http: { method: req.method ?? 'GET', headers: req.headers },
          }),
        onError: ({ error }) => {
          if (error.code === 'INTERNAL_SERVER_ERROR')
            console.error('[corral] /trpc internal error:', error.cause ?? error);
        },
      });
      return;
    }
    if (path === '/api' || path.startsWith('/api/')) {
      req.url = url.slice('/api'.length) || '/';
      await rest(req, res);
      return;
    }
    if (fallback) {
      // The UI is pages and assets: nothing under it reads a request body, so nothing may send one.
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.setHeader('Allow', 'GET, HEAD');
        res.setHeader('Connection', 'close');
        sendJsonError(res, 405, `${req.method ?? ''} is not allowed here`);
        return;
      }
      return fallback(req, res);
    }
    res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found\n');
  };

  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      // The client went away mid-request (or the request time-out cut it): nobody to answer, nothing failed here.
      if (req.socket.destroyed && (err as { code?: unknown } | undefined)?.code === 'ECONNRESET') return;
      console.error('[corral] request failed:', err);
      // Who asked is not known here: the log keeps the detail, the answer keeps no address.
      sendJsonError(res, 500, redactAddresses(err instanceof Error ? err.message : String(err)));
    });
  };
  // TLS 1.3 must be on offer: Terraform's bpg/proxmox provider refuses anything older by default. HTTP/1.1 only,
  // because Proxmox clients read their errors from the reason phrase, which HTTP/2 does not have.
  const server: Server = options.tls
    ? createHttpsServer(
        {
          cert: options.tls.cert,
          key: options.tls.key,
          minVersion: 'TLSv1.2',
          maxVersion: 'TLSv1.3',
          ...serverOptions(limits),
        },
        onRequest,
      )
    : createServer(serverOptions(limits), onRequest);
  applyServerLimits(server, limits);

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const refusal = frontDoor(req, trust, limits);
    if (refusal) return refuseUpgrade(socket, refusal);
    const path = (req.url ?? '').split('?')[0] ?? '';
    const match = upgrades.find((u) => path.startsWith(u.prefix));
    if (match) return match.handler(req, socket, head);
    if (fallbackUpgrade && path.startsWith('/_next/')) return fallbackUpgrade(req, socket, head);
    // Nobody answers other upgrades: refuse explicitly instead of leaving the client hanging.
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });

  return {
    server,
    services,
    registerUpgrade(prefix, handler) {
      upgrades.push({ prefix, handler });
      upgrades.sort((a, b) => b.prefix.length - a.prefix.length); // longest prefix wins
    },
    mountProxmox(handler) {
      proxmox = handler;
    },
    setFallback(handler, upgrade) {
      fallback = handler;
      fallbackUpgrade = upgrade;
    },
    onClose(hook) {
      closeHooks.push(hook);
    },
    close() {
      for (const hook of closeHooks.splice(0)) hook();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        for (const s of sockets) s.destroy();
      });
    },
  };
}
