/**
 * Serving the Proxmox API on its own port: HTTPS with the given certificate (TLS 1.2 and 1.3 — bpg/proxmox
 * requires 1.3 by default, proxmoxer always speaks https) or plain HTTP without one (npm proxmox-api and curl
 * can use that). HTTP/1.1 only: HTTP/2 has no reason phrase, and Proxmox clients read their errors from it.
 * The same front door as Corral's own server runs first (docs/security.md): Host allow-list (421), URL length (414),
 * identity headers believed only from trusted proxies, and the header/time-out/per-peer connection limits.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { frontDoor } from '@/server/http/front-door';
import { applyServerLimits, resolveLimits, serverOptions, type HttpLimits } from '@/server/http/limits';
import { trustConfig } from '@/server/http/trust';
import { API_PREFIX, PVE_CONTENT_TYPE, reasonPhrase } from './wire';

export interface TlsMaterial {
  cert: string;
  key: string;
}

export interface ServeOptions {
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  host?: string;
  port?: number;
  tls?: TlsMaterial;
  /** Overrides of the HTTP limits (default: Corral's, from the environment). */
  limits?: Partial<HttpLimits>;
}

export interface ServingProxmox {
  server: Server;
  url: string;
  close(): Promise<void>;
}

/** `:8006`, `8006`, `0.0.0.0:8006`, `[::1]:8006` → host and port. */
export function parseAddr(addr: string): { host: string; port: number } {
  const text = addr.trim();
  const m =
    /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d+)$/.exec(text) ?? (/^(\d+)$/.test(text) ? ['', undefined, '', text] : null);
  if (!m) throw new Error(`--addr '${addr}': expected [host]:port, e.g. :8006`);
  const port = Number(m[3]);
  if (port > 65535) throw new Error(`--addr '${addr}': port out of range`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

/** A throwaway self-signed certificate for a host name (tests, first runs). */
export async function selfSignedTls(commonName = 'localhost'): Promise<TlsMaterial> {
  const pems = await generate([{ name: 'commonName', value: commonName }], {
    keySize: 2048,
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: commonName },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

function answer(res: ServerResponse, status: number, message: string): void {
  const body = JSON.stringify({ data: null, message: `${message}\n` });
  res
    .writeHead(status, reasonPhrase(message), {
      'Content-Type': PVE_CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
      Connection: 'close',
    })
    .end(body);
}

export async function serveProxmox(options: ServeOptions): Promise<ServingProxmox> {
  const host = options.host ?? '127.0.0.1';
  const limits = resolveLimits(options.limits);
  const trust = trustConfig({ listenHost: host });
  const route = (req: IncomingMessage, res: ServerResponse) => {
    const refusal = frontDoor(req, trust, limits);
    if (refusal) {
      answer(res, refusal.status, refusal.message);
      return;
    }
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      void options.handle(req, res);
      return;
    }
    answer(res, 404, `only ${API_PREFIX}/ is served here`);
  };
  const server: Server = options.tls
    ? createHttpsServer(
        {
          cert: options.tls.cert,
          key: options.tls.key,
          minVersion: 'TLSv1.2',
          maxVersion: 'TLSv1.3',
          ...serverOptions(limits),
        },
        route,
      )
    : createHttpServer(serverOptions(limits), route);
  applyServerLimits(server, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8006, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return {
    server,
    url: `${options.tls ? 'https' : 'http'}://${shownHost}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
