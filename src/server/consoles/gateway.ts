/**
 * The console gateway: takes the WebSocket upgrades for `/api/vnc/{ns}/{name}` and `/api/tty/{ns}/{name}`,
 * applies Corral's identity, admin gate and Origin check, records who holds the console, connects to the VMI's
 * `vnc` / `console` subresource with the cluster's own credentials and bridges the two sockets.
 *
 * Query parameters: `takeover=1` takes the console from its current holder (otherwise a console held by someone
 * else is refused with 4029 naming the holder; your own other session is replaced and told so); `watch=1` opens a
 * view-only VNC session (Multiview tiles) that never takes a console from anybody and whose input is dropped;
 * `context=<name>` picks the served cluster (kube context; default the first, unknown: closed with 4004 naming it).
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { ClientOptions, RawData } from 'ws';
import { WebSocket, WebSocketServer } from 'ws';
import { redactAddresses } from '../errors.js';
import { bridgeSockets, type Bridge } from './bridge.js';
import { CloseCode, truncateReason } from './close-codes.js';
import { checkOrigin } from './origin.js';
import { createRfbInputFilter } from './rfb-input-filter.js';
import type { SerialLogStore } from './serial-ring.js';
import type { SessionRegistry, ConsoleKind, ConsoleSession } from './session-registry.js';
import { consoleState } from './state.js';

export interface ConsoleCaller {
  login: string;
  /** Display name (falls back to the login). */
  name: string;
  /** Admins may type; everybody else may only watch VNC. */
  admin: boolean;
  /** Why a non-admin is read-only when it is not CORRAL_ADMINS (e.g. a remote caller of an exposed server). */
  readOnlyReason?: string;
}

/** What the gateway needs from a kubeconfig (a client-node KubeConfig fits). */
export interface ClusterCredentials {
  applyToHTTPSOptions(opts: ClientOptions): Promise<void>;
  getCurrentCluster(): { server: string } | null;
  /** The context's name: consoles and serial logs are held per cluster (a client-node KubeConfig has it). */
  getCurrentContext?(): string;
}

export interface ConsoleGatewayOptions {
  /** The credentials for a served kube context (undefined = the default one). Throw to refuse an unknown context. */
  cluster(context: string | undefined): ClusterCredentials;
  /** The caller of a request: identity headers + CORRAL_ADMINS, exactly as the REST API decides it. */
  resolveCaller(req: IncomingMessage): ConsoleCaller;
  /**
   * Optional: the VM's printable status when its console cannot be reached ('' when it exists without a status,
   * null when there is no such VM), to turn KubeVirt's 404 into "no such VM" vs "VM is Stopped".
   */
  vmStatus?(namespace: string, name: string, context: string | undefined): Promise<string | null>;
  /** Defaults to the process-wide console state the tRPC procedures read. */
  registry?: SessionRegistry;
  serialLogs?: SerialLogStore;
  /** Compare Origin with X-Forwarded-Host (behind a reverse proxy). */
  trustForwardedHost?: boolean;
  allowedOrigins?: string[];
  keepaliveMs?: number;
  connectTimeoutMs?: number;
}

export interface ConsoleGateway {
  /** Whether this gateway serves an upgrade for that URL path. */
  matches(url: string): boolean;
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  readonly registry: SessionRegistry;
  readonly serialLogs: SerialLogStore;
  /** Ends every session (server shutdown). */
  close(): void;
}

export interface ConsoleTarget {
  kind: ConsoleKind;
  namespace: string;
  name: string;
  takeover: boolean;
  /** View-only: input dropped, never takes a held console. */
  watch: boolean;
  context: string | undefined;
}

const PREFIXES: Record<string, ConsoleKind> = { '/api/vnc/': 'vnc', '/api/tty/': 'serial' };
// Kubernetes names: namespaces are DNS-1123 labels, VMs DNS-1123 subdomains.
const NAMESPACE_RE = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const NAME_RE = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;
const SUBPROTOCOL = 'plain.kubevirt.io';
/** The same rule as the REST routes' `context` (schemas/common.ts ContextName). */
export const CONTEXT_RE = /^[\x21-\x7e]{1,253}$/;

export function parseConsoleUrl(rawUrl: string): ConsoleTarget | Error {
  const url = new URL(rawUrl, 'http://corral.invalid');
  const prefix = Object.keys(PREFIXES).find((p) => url.pathname.startsWith(p));
  if (!prefix) return new Error(`Not a console path: ${url.pathname}`);
  const kind = PREFIXES[prefix]!;
  const parts = url.pathname.slice(prefix.length).split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length !== 2) return new Error(`Console path must be ${prefix}{namespace}/{name}, got ${url.pathname}`);
  const [namespace, name] = parts as [string, string];
  if (!NAMESPACE_RE.test(namespace))
    return new Error(`Invalid namespace ${JSON.stringify(namespace)}: lower-case letters, digits and '-' only`);
  if (!NAME_RE.test(name))
    return new Error(`Invalid VM name ${JSON.stringify(name)}: lower-case letters, digits, '-' and '.' only`);
  const flag = (key: string) => ['1', 'true', 'yes'].includes(url.searchParams.get(key) ?? '');
  const context = url.searchParams.get('context') ?? undefined;
  if (context !== undefined && !CONTEXT_RE.test(context))
    return new Error('context: must be a kube context name: printable characters, no spaces');
  const watch = flag('watch');
  if (watch && kind === 'serial')
    return new Error('watch=1 is for VNC only: a serial console cannot be watched without typing into it');
  return {
    kind,
    namespace,
    name,
    takeover: flag('takeover') && !watch,
    watch,
    context,
  };
}

export function subresourceUrl(
  server: string,
  target: Pick<ConsoleTarget, 'kind' | 'namespace' | 'name'>,
  preserveSession: boolean,
): string {
  const base = server.replace(/^http/, 'ws').replace(/\/+$/, '');
  const sub = target.kind === 'vnc' ? 'vnc' : 'console';
  const query = preserveSession && target.kind === 'vnc' ? '?preserveSession=true' : '';
  return `${base}/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(target.namespace)}/virtualmachineinstances/${encodeURIComponent(target.name)}/${sub}${query}`;
}

function kindLabel(kind: ConsoleKind): string {
  return kind === 'vnc' ? 'VNC console' : 'serial console';
}

/** Reads the apiserver's Status message out of a refused upgrade response. */
function readStatusMessage(res: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 65536) chunks.push(c);
    });
    res.on('error', () => resolve(''));
    res.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      try {
        const parsed = JSON.parse(text) as { message?: unknown };
        resolve(typeof parsed.message === 'string' ? parsed.message : text.trim());
      } catch {
        resolve(text.trim());
      }
    });
  });
}

export function createConsoleGateway(options: ConsoleGatewayOptions): ConsoleGateway {
  const registry = options.registry ?? consoleState().registry;
  const serialLogs = options.serialLogs ?? consoleState().serialLogs;
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, clientTracking: true });
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  /** Sessions this gateway serves (the registry may be shared with other gateways in tests). */
  const own = new Set<ConsoleSession>();

  function refuseBeforeUpgrade(socket: Duplex, status: number, message: string): void {
    const body = JSON.stringify({ error: message });
    socket.end(
      `HTTP/1.1 ${status} ${status === 403 ? 'Forbidden' : 'Bad Request'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }

  async function explainNotFound(
    target: ConsoleTarget,
    upstreamMessage: string,
  ): Promise<{ code: number; reason: string }> {
    const vm = `${target.namespace}/${target.name}`;
    if (options.vmStatus) {
      try {
        const status = await options.vmStatus(target.namespace, target.name, target.context);
        if (status === null) return { code: CloseCode.notFound, reason: `No VM ${vm}` };
        return {
          code: CloseCode.notRunning,
          reason: `VM ${vm} is ${status || 'not running'}: start it to open its ${kindLabel(target.kind)}`,
        };
      } catch {
        // Fall through to the apiserver's own words.
      }
    }
    return {
      code: CloseCode.notRunning,
      reason: `VM ${vm} is not running (${upstreamMessage || 'no VirtualMachineInstance'})`,
    };
  }

  async function refusalFromStatus(
    target: ConsoleTarget,
    status: number,
    message: string,
  ): Promise<{ code: number; reason: string }> {
    const vm = `${target.namespace}/${target.name}`;
    if (status === 404) return explainNotFound(target, message);
    // KubeVirt's own sentence ("... because phase is Scheduling instead of Running") already says what is wrong.
    if (status === 400 || status === 409)
      return { code: CloseCode.notRunning, reason: message || `VM ${vm} is not running` };
    if (status === 503 && /active vnc connection/i.test(message)) {
      return {
        code: CloseCode.inUse,
        reason: `The VNC console of ${vm} is in use by a viewer outside Corral; Take over to disconnect it`,
      };
    }
    if (status === 401 || status === 403)
      return {
        code: CloseCode.clusterError,
        reason: `The cluster refused Corral's credentials for the ${kindLabel(target.kind)}: ${message}`,
      };
    return {
      code: CloseCode.clusterError,
      reason: `The cluster answered HTTP ${status} for the ${kindLabel(target.kind)} of ${vm}: ${message}`,
    };
  }

  function serve(client: WebSocket, req: IncomingMessage, target: ConsoleTarget): void {
    // Messages that arrive while the upstream leg is still connecting are queued, then forwarded in order.
    const early: Buffer[] = [];
    const queue = (data: RawData) =>
      early.push(Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data));
    client.on('message', queue);
    client.on('error', () => undefined);
    const refuse = (code: number, reason: string) => {
      client.off('message', queue);
      if (client.readyState === WebSocket.OPEN) client.close(code, truncateReason(reason));
    };

    let caller: ConsoleCaller;
    try {
      caller = options.resolveCaller(req);
    } catch (err) {
      return refuse(CloseCode.forbidden, err instanceof Error ? err.message : 'Unknown caller');
    }
    const vm = `${target.namespace}/${target.name}`;
    // Transport errors can carry the apiserver's address; only admins learn it (docs/security.md "Errors").
    const reveal = (message: string) => (caller.admin ? message : redactAddresses(message));
    const readOnly = !caller.admin || target.watch;
    if (readOnly && target.kind === 'serial') {
      return refuse(
        CloseCode.forbidden,
        `Read-only: ${caller.login || 'you'} may not use the serial console of ${vm} (${caller.readOnlyReason ?? 'not in CORRAL_ADMINS'})`,
      );
    }
    if (!caller.admin && target.takeover) {
      return refuse(
        CloseCode.forbidden,
        `Read-only: ${caller.login || 'you'} may watch but not take over the console of ${vm}`,
      );
    }
    let credentials: ClusterCredentials;
    try {
      credentials = options.cluster(target.context);
    } catch (err) {
      return refuse(CloseCode.notFound, err instanceof Error ? err.message : `Unknown context ${target.context}`);
    }
    // Sessions and serial logs are keyed by the cluster too: home's default/web is not lab's default/web.
    const context = credentials.getCurrentContext?.() ?? target.context;
    const holder = registry.holder(target.kind, target.namespace, target.name, context);
    // Replacing your own session (another tab) or a watcher (read-only viewer, Multiview tile) needs no
    // confirmation; the replaced viewer is still told who took the console.
    const mayReplace = target.takeover || (!readOnly && (holder?.login === caller.login || holder?.readOnly === true));
    if (holder && !mayReplace) {
      return refuse(
        CloseCode.inUse,
        `${holder.displayName} holds the ${kindLabel(target.kind)} of ${vm} since ${holder.since}; Take over to use it`,
      );
    }
    const server = credentials.getCurrentCluster()?.server;
    if (!server) return refuse(CloseCode.clusterError, 'The kubeconfig has no current cluster');

    let bridge: Bridge | null = null;
    let upstream: WebSocket | null = null;
    let ended = false;
    const session: ConsoleSession = {
      id: randomUUID(),
      kind: target.kind,
      namespace: target.namespace,
      name: target.name,
      ...(context !== undefined ? { context } : {}),
      login: caller.login,
      displayName: caller.name || caller.login || 'anonymous',
      readOnly,
      since: new Date().toISOString(),
      end(code, reason) {
        if (bridge) return bridge.close(code, reason);
        finishEarly(code, reason);
      },
    };
    function finishEarly(code: number, reason: string): void {
      if (ended) return;
      ended = true;
      own.delete(session);
      registry.release(session);
      refuse(code, reason);
      upstream?.terminate();
    }

    own.add(session);
    const previous = registry.claim(session);
    previous?.end(CloseCode.takenOver, `Console taken over by ${session.displayName}`);
    client.on('close', () => {
      if (!bridge) finishEarly(CloseCode.normal, '');
    });

    // Plain opens and watchers must not kick a viewer Corral does not know about (virtctl, another Corral):
    // KubeVirt's preserveSession refuses instead. A take-over is the explicit "kick it"; so is replacing a session
    // Corral just ended itself, whose upstream close may not have reached the cluster yet.
    const preserve = !target.takeover && !previous;
    const connect = async () => {
      const opts: ClientOptions = { perMessageDeflate: false, handshakeTimeout: connectTimeoutMs };
      await credentials.applyToHTTPSOptions(opts);
      if (ended) return;
      const ws = new WebSocket(subresourceUrl(server, target, preserve), [SUBPROTOCOL], opts);
      upstream = ws;
      ws.binaryType = 'nodebuffer';
      let refused = false;
      ws.on('unexpected-response', (_req, res) => {
        refused = true;
        void readStatusMessage(res)
          .then((message) => refusalFromStatus(target, res.statusCode ?? 0, message))
          .then(({ code, reason }) => finishEarly(code, reason));
      });
      ws.on('error', (err) => {
        if (!bridge && !refused)
          finishEarly(
            CloseCode.clusterError,
            reveal(`Cannot reach the ${kindLabel(target.kind)} of ${vm}: ${err.message}`),
          );
      });
      ws.on('close', (code, reason) => {
        if (!bridge && !refused)
          finishEarly(
            CloseCode.clusterError,
            `The cluster closed the ${kindLabel(target.kind)} of ${vm} before it opened (${code} ${reason.toString()})`,
          );
      });
      ws.on('open', () => {
        if (ended || client.readyState !== WebSocket.OPEN) {
          ws.close(CloseCode.normal, '');
          return;
        }
        client.off('message', queue);
        const rfbFilter = readOnly ? createRfbInputFilter() : null;
        bridge = bridgeSockets(client, ws, {
          keepaliveMs: options.keepaliveMs,
          pendingFromClient: early.splice(0),
          replayToClient:
            target.kind === 'serial' ? serialLogs.read(target.namespace, target.name, context) : undefined,
          filterClientData: rfbFilter ? (chunk) => rfbFilter.push(chunk) : undefined,
          onUpstreamData:
            target.kind === 'serial'
              ? (chunk) => serialLogs.append(target.namespace, target.name, chunk, context)
              : undefined,
          describeUpstreamClose: (code, reason) => {
            const taker = registry.takenOverBy(session.id);
            if (taker) return { code: CloseCode.takenOver, reason: `Console taken over by ${taker.displayName}` };
            if (code === 1000 || code === 1005 || code === 1006) {
              return {
                code: CloseCode.normal,
                reason:
                  reason ||
                  `The cluster closed the ${kindLabel(target.kind)} of ${vm} (the VM stopped, or another viewer connected outside Corral)`,
              };
            }
            return {
              code: code >= 3000 && code <= 4999 ? code : CloseCode.internalError,
              reason: reason || `The ${kindLabel(target.kind)} of ${vm} closed (${code})`,
            };
          },
          onEnd: () => {
            ended = true;
            own.delete(session);
            registry.release(session);
          },
        });
      });
    };
    connect().catch((err: unknown) =>
      finishEarly(
        CloseCode.clusterError,
        reveal(
          `Cannot open the ${kindLabel(target.kind)} of ${vm}: ${err instanceof Error ? err.message : String(err)}`,
        ),
      ),
    );
  }

  return {
    registry,
    serialLogs,
    matches(url) {
      return Object.keys(PREFIXES).some((p) => url.startsWith(p));
    },
    handleUpgrade(req, socket, head) {
      socket.on('error', () => undefined);
      const origin = checkOrigin(req.headers, {
        trustForwardedHost: options.trustForwardedHost,
        allowedOrigins: options.allowedOrigins,
      });
      // Cross-site upgrades are refused before the handshake: a foreign page never gets a socket at all.
      if (!origin.ok) return refuseBeforeUpgrade(socket, 403, origin.reason);
      const target = parseConsoleUrl(req.url ?? '');
      wss.handleUpgrade(req, socket, head, (client) => {
        if (target instanceof Error) {
          client.close(CloseCode.badRequest, truncateReason(target.message));
          return;
        }
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
