/**
 * The CT terminal: `/api/ctty/{ns}/{name}` is a WebSocket to a real shell in the container, opened through the
 * pods/exec subresource (`v5.channel.k8s.io`, else `v4`) with a tty, and the same rules as the VM consoles: the
 * Origin check before the handshake, admins only (a shell cannot be watched without typing into it), one holder
 * per CT, `takeover=1` to take it from someone else (your own other tab is replaced without asking).
 *
 * Browser side: binary frames are keystrokes (stdin) and terminal output; a text frame
 * `{"cols":120,"rows":40}` resizes the tty (sent on channel 4 as `{"Width","Height"}`). When the shell ends the
 * socket closes 1000 with the exit status as the reason. A privileged CT's shell runs inside its persistent root
 * (`chroot /data/rootfs`), so what one installs there is what survives Stop/Start.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ClientOptions, RawData } from 'ws';
import { WebSocket, WebSocketServer } from 'ws';
import { redactAddresses } from '../errors.js';
import { CloseCode, truncateReason } from './close-codes.js';
import { CONTEXT_RE, type ClusterCredentials, type ConsoleCaller } from './gateway.js';
import { checkOrigin } from './origin.js';
import { SessionRegistry, type ConsoleSession } from './session-registry.js';

export const CT_CONSOLE_PREFIX = '/api/ctty/';
const PROTOCOLS = ['v5.channel.k8s.io', 'v4.channel.k8s.io'];
const STDIN = 0;
const STDOUT = 1;
const STDERR = 2;
const STATUS = 3;
const RESIZE = 4;
const NAME_RE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

export interface CtConsoleOptions {
  /** The credentials of a served kube context (undefined = the default). Throw to refuse an unknown context. */
  cluster(context: string | undefined): ClusterCredentials;
  resolveCaller(req: IncomingMessage): ConsoleCaller;
  /** The CT as the cache knows it: its pod phase and the command of its shell; null when there is no such CT. */
  ct(
    namespace: string,
    name: string,
    context: string | undefined,
  ): { phase: string; container: string; shell: string[] } | null;
  trustForwardedHost?: boolean;
  allowedOrigins?: string[];
  connectTimeoutMs?: number;
  /** Who holds which CT terminal (a registry of its own: CT and VM names may coincide). */
  registry?: SessionRegistry;
}

export interface CtConsole {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  readonly registry: SessionRegistry;
  close(): void;
}

interface CtTarget {
  namespace: string;
  name: string;
  takeover: boolean;
  context: string | undefined;
}

export function parseCtConsoleUrl(rawUrl: string): CtTarget | Error {
  const url = new URL(rawUrl, 'http://corral.invalid');
  if (!url.pathname.startsWith(CT_CONSOLE_PREFIX)) return new Error(`Not a CT terminal path: ${url.pathname}`);
  let parts: string[];
  try {
    parts = url.pathname.slice(CT_CONSOLE_PREFIX.length).split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return new Error('Malformed CT terminal path');
  }
  if (parts.length !== 2) return new Error(`CT terminal path must be ${CT_CONSOLE_PREFIX}{namespace}/{name}`);
  const [namespace, name] = parts as [string, string];
  if (!NAME_RE.test(namespace)) return new Error(`Invalid namespace ${JSON.stringify(namespace)}`);
  if (!NAME_RE.test(name)) return new Error(`Invalid CT name ${JSON.stringify(name)}`);
  const context = url.searchParams.get('context') ?? undefined;
  if (context !== undefined && !CONTEXT_RE.test(context))
    return new Error('context: must be a kube context name: printable characters, no spaces');
  return {
    namespace,
    name,
    takeover: ['1', 'true', 'yes'].includes(url.searchParams.get('takeover') ?? ''),
    context,
  };
}

export function execUrl(server: string, namespace: string, name: string, container: string, command: string[]) {
  const base = server.replace(/^http/, 'ws').replace(/\/+$/, '');
  const query = new URLSearchParams({ container, stdin: 'true', stdout: 'true', stderr: 'true', tty: 'true' });
  for (const c of command) query.append('command', c);
  return `${base}/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(name)}/exec?${query}`;
}

/** The exit status line of a v4/v5 Status object. */
function exitReason(json: string): string {
  try {
    const status = JSON.parse(json) as {
      status?: string;
      message?: string;
      details?: { causes?: { message?: string }[] };
    };
    if (status.status === 'Success') return 'The shell exited (status 0)';
    const code = status.details?.causes?.[0]?.message;
    return code ? `The shell exited (status ${code})` : (status.message ?? 'The shell ended');
  } catch {
    return 'The shell ended';
  }
}

const toBuffer = (data: RawData): Buffer =>
  Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);

export function createCtConsole(options: CtConsoleOptions): CtConsole {
  const registry = options.registry ?? new SessionRegistry();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: true });
  const own = new Set<ConsoleSession>();

  function serve(client: WebSocket, req: IncomingMessage, target: CtTarget) {
    const early: (Buffer | string)[] = [];
    const queue = (data: RawData, isBinary: boolean) =>
      early.push(isBinary ? toBuffer(data) : toBuffer(data).toString());
    client.on('message', queue);
    client.on('error', () => undefined);
    const refuse = (code: number, reason: string) => {
      client.off('message', queue);
      if (client.readyState === WebSocket.OPEN) client.close(code, truncateReason(reason));
    };
    const ref = `${target.namespace}/${target.name}`;
    let caller: ConsoleCaller;
    try {
      caller = options.resolveCaller(req);
    } catch (err) {
      return refuse(CloseCode.forbidden, err instanceof Error ? err.message : 'Unknown caller');
    }
    if (!caller.admin)
      return refuse(
        CloseCode.forbidden,
        `Read-only: ${caller.login || 'you'} may not use the terminal of CT ${ref} (${caller.readOnlyReason ?? 'not in CORRAL_ADMINS'})`,
      );
    let credentials: ClusterCredentials;
    try {
      credentials = options.cluster(target.context);
    } catch (err) {
      return refuse(CloseCode.notFound, err instanceof Error ? err.message : `Unknown context ${target.context}`);
    }
    const context = credentials.getCurrentContext?.() ?? target.context;
    const ct = options.ct(target.namespace, target.name, target.context);
    if (!ct) return refuse(CloseCode.notFound, `No CT ${ref}`);
    if (ct.phase !== 'Running')
      return refuse(CloseCode.notRunning, `CT ${ref} is ${ct.phase}: start it to open its terminal`);
    const holder = registry.holder('serial', target.namespace, target.name, context);
    if (holder && !target.takeover && holder.login !== caller.login)
      return refuse(
        CloseCode.inUse,
        `${holder.displayName} holds the terminal of CT ${ref} since ${holder.since}; Take over to use it`,
      );

    let upstream: WebSocket | null = null;
    let ended = false;
    const end = (code: number, reason: string) => {
      if (ended) return;
      ended = true;
      own.delete(session);
      registry.release(session);
      refuse(code, reason);
      if (upstream && upstream.readyState === WebSocket.OPEN) upstream.close(1000);
      else upstream?.terminate();
    };
    const session: ConsoleSession = {
      id: randomUUID(),
      kind: 'serial',
      namespace: target.namespace,
      name: target.name,
      ...(context !== undefined ? { context } : {}),
      login: caller.login,
      displayName: caller.name || caller.login || 'anonymous',
      readOnly: false,
      since: new Date().toISOString(),
      end,
    };
    own.add(session);
    registry.claim(session)?.end(CloseCode.takenOver, `Terminal taken over by ${session.displayName}`);
    client.on('close', () => end(CloseCode.normal, ''));

    const toUpstream = (data: RawData | string) => {
      if (!upstream || upstream.readyState !== WebSocket.OPEN) return;
      if (typeof data === 'string') {
        let size: { cols?: unknown; rows?: unknown };
        try {
          size = JSON.parse(data) as typeof size;
        } catch {
          return;
        }
        const [cols, rows] = [Number(size.cols), Number(size.rows)];
        if (!Number.isInteger(cols) || !Number.isInteger(rows) || cols < 1 || rows < 1 || cols > 1000 || rows > 1000)
          return;
        upstream.send(
          Buffer.concat([Buffer.from([RESIZE]), Buffer.from(JSON.stringify({ Width: cols, Height: rows }))]),
        );
      } else upstream.send(Buffer.concat([Buffer.from([STDIN]), toBuffer(data)]));
    };

    const connect = async () => {
      const server = credentials.getCurrentCluster()?.server;
      if (!server) return end(CloseCode.clusterError, 'The kubeconfig has no current cluster');
      const opts: ClientOptions = { perMessageDeflate: false, handshakeTimeout: options.connectTimeoutMs ?? 10_000 };
      await credentials.applyToHTTPSOptions(opts);
      if (ended) return;
      const ws = new WebSocket(execUrl(server, target.namespace, target.name, ct.container, ct.shell), PROTOCOLS, opts);
      upstream = ws;
      let opened = false;
      let exit = '';
      ws.on('unexpected-response', (_r, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          let message = Buffer.concat(chunks).toString('utf8');
          try {
            message = (JSON.parse(message) as { message?: string }).message ?? message;
          } catch {
            // plain text
          }
          end(CloseCode.notRunning, `The cluster refused the terminal of CT ${ref}: ${message}`);
        });
      });
      ws.on('error', (err) => {
        if (!opened) end(CloseCode.clusterError, caller.admin ? err.message : redactAddresses(err.message));
      });
      ws.on('open', () => {
        opened = true;
        client.off('message', queue);
        client.on('message', (data, isBinary) => toUpstream(isBinary ? data : toBuffer(data).toString()));
        for (const d of early.splice(0)) toUpstream(d);
      });
      ws.on('message', (data: RawData) => {
        const buf = toBuffer(data);
        const channel = buf[0];
        if ((channel === STDOUT || channel === STDERR) && client.readyState === WebSocket.OPEN)
          client.send(buf.subarray(1), { binary: true });
        else if (channel === STATUS) exit = exitReason(buf.subarray(1).toString('utf8'));
      });
      ws.on('close', () => {
        if (opened) end(CloseCode.normal, exit || 'The shell ended');
      });
    };
    connect().catch((err: unknown) =>
      end(
        CloseCode.clusterError,
        `Cannot open the terminal of CT ${ref}: ${err instanceof Error ? err.message : String(err)}`,
      ),
    );
  }

  return {
    registry,
    handleUpgrade(req, socket, head) {
      socket.on('error', () => undefined);
      const origin = checkOrigin(req.headers, {
        trustForwardedHost: options.trustForwardedHost,
        allowedOrigins: options.allowedOrigins,
      });
      if (!origin.ok) {
        const body = JSON.stringify({ error: origin.reason });
        socket.end(
          `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
        return;
      }
      const target = parseCtConsoleUrl(req.url ?? '');
      wss.handleUpgrade(req, socket, head, (client) => {
        if (target instanceof Error) return client.close(CloseCode.badRequest, truncateReason(target.message));
        serve(client, req, target);
      });
    },
    close() {
      for (const session of [...own]) session.end(CloseCode.goingAway, 'Corral is shutting down');
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
