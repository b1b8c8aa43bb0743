/**
 * Serving the Proxmox API on its own port: HTTPS with the given certificate (TLS 1.2 and 1.3 — bpg/proxmox
 * requires 1.3 by default, proxmoxer always speaks https) or plain HTTP without one (npm proxmox-api and curl
 * can use that). HTTP/1.1 only: HTTP/2 has no reason phrase, and Proxmox clients read their errors from it.
 */
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { generate } from 'selfsigned';
import { API_PREFIX, PVE_CONTENT_TYPE } from './wire';

export interface TlsMaterial {
  cert: string;
  key: string;
}

export interface ServeOptions {
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  host?: string;
  port?: number;
  tls?: TlsMaterial;
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

export async function serveProxmox(options: ServeOptions): Promise<ServingProxmox> {
  const route = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
      void options.handle(req, res);
      return;
    }
    const body = JSON.stringify({ data: null, message: `only ${API_PREFIX}/ is served here\n` });
    res
      .writeHead(404, 'Not Found', { 'Content-Type': PVE_CONTENT_TYPE, 'Content-Length': Buffer.byteLength(body) })
      .end(body);
  };
  const server: Server = options.tls
    ? createHttpsServer(
        { cert: options.tls.cert, key: options.tls.key, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.3' },
        route,
      )
    : createHttpServer(route);
  const host = options.host ?? '127.0.0.1';
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
