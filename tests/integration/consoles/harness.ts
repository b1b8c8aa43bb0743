/** Mounts a console gateway on a bare node:http server, the way the Corral server routes `/api/vnc|tty/`. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { WebSocket } from 'ws';
import { createConsoleGateway, type ConsoleGateway, type ConsoleGatewayOptions } from '@/server/consoles/gateway.js';

export function kubeConfigFor(server: string, token = 'sim-admin-token'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [{ name: 'u', token }],
    contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
    currentContext: 'ctx',
  });
  return kc;
}

/** Identity like the REST API: Tailscale-User-Login, admins from a list (empty list = everybody is admin). */
export function callerFromHeaders(admins: string[]): ConsoleGatewayOptions['resolveCaller'] {
  return (req) => {
    const login = String(req.headers['tailscale-user-login'] ?? '');
    const name = String(req.headers['tailscale-user-name'] ?? '') || login;
    return { login, name, admin: admins.length === 0 || admins.includes(login) };
  };
}

export interface GatewayServer {
  base: string;
  gateway: ConsoleGateway;
  close(): Promise<void>;
}

export async function startGatewayServer(options: ConsoleGatewayOptions): Promise<GatewayServer> {
  const gateway = createConsoleGateway(options);
  const server = http.createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket, head) => {
    if (gateway.matches(req.url ?? '')) return gateway.handleUpgrade(req, socket, head);
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `ws://127.0.0.1:${port}`,
    gateway,
    async close() {
      gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface Probe {
  ws: WebSocket;
  data: Buffer[];
  opened: Promise<void>;
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once the concatenated received bytes satisfy `predicate`. */
  waitFor(predicate: (all: Buffer) => boolean, timeoutMs?: number): Promise<Buffer>;
}

export function connect(url: string, headers: Record<string, string> = {}, protocols: string[] = []): Probe {
  const ws = new WebSocket(url, protocols, { headers, perMessageDeflate: false });
  const data: Buffer[] = [];
  const waiters = new Set<() => void>();
  ws.on('message', (d: Buffer) => {
    data.push(d);
    for (const w of waiters) w();
  });
  ws.on('error', () => undefined);
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('close', () => reject(new Error('closed before open')));
  });
  opened.catch(() => undefined);
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  return {
    ws,
    data,
    opened,
    closed,
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const all = Buffer.concat(data);
          if (predicate(all)) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve(all);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(
            new Error(`timed out; received ${JSON.stringify(Buffer.concat(data).toString('latin1').slice(-300))}`),
          );
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}
