/**
 * The `/api2/json/…` request handler: parse (query + form/JSON body), route, authenticate, check the privilege,
 * run the endpoint, answer in Proxmox's envelope. Unknown endpoints answer an unauthenticated caller 401 (as PVE
 * does) and an authenticated one a Proxmox-shaped 501, logging `[proxmox-gap] METHOD PATH` once per method and
 * path shape, so running a new tool against Corral lists exactly what it is missing without flooding the log.
 * Errors shown to anyone but an Administrator have internal addresses redacted.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { asKubeCaller } from '@/server/cluster/rate-limiter';
import type { CorralServices } from '@/server/domain/services';
import { trustOf } from '@/server/http/trust';
import {
  authenticate,
  parseAdmins,
  relayedByProxy,
  type AuthConfig,
  type Principal,
  type RequestFacts,
} from './auth/authenticate';
import { LoginLimiter } from './auth/login-limiter';
import { hasPrivilege, requirePrivilege } from './auth/roles';
import { TicketSigner } from './auth/tickets';
import { parseGrants, type TokenGrant } from './auth/tokens';
import { registerAccess } from './endpoints/access';
import { registerCluster } from './endpoints/cluster';
import { registerNodes } from './endpoints/nodes';
import { registerAgent } from './endpoints/agent';
import { registerAgentWrites } from './endpoints/agent-writes';
import { registerCloudInit } from './endpoints/cloudinit';
import type { Endpoint, EndpointContext, Routes } from './endpoints/context';
import { registerPools } from './endpoints/pools';
import { registerQemu } from './endpoints/qemu';
import { registerQemuMigrate } from './endpoints/qemu-migrate';
import { registerQemuMoveDisk } from './endpoints/qemu-move-disk';
import { registerLxc } from './endpoints/lxc';
import { registerRrd } from './endpoints/rrddata';
import { registerSnapshots } from './endpoints/snapshots';
import { registerStorage } from './endpoints/storage';
import { Params, paramsFromJson } from './params';
import { GapLog, redactError } from './redact';
import { RouteTable, splitPath } from './routing';
import { ProxmoxState } from './state';
import { API_PREFIX, ProxmoxError, RawJson, notImplemented, sendData, sendError, sendRawData } from './wire';

export { API_PREFIX } from './wire';
const MAX_BODY = 1024 * 1024;

export interface ProxmoxOptions {
  services: CorralServices;
  /** Token grants; default: parsed from CORRAL_PROXMOX_TOKEN. Empty = open mode (loopback only). */
  grants?: TokenGrant[];
  /** CORRAL_ADMINS; default: from the environment. */
  admins?: ReadonlySet<string>;
  /** Hosts a browser page may write from in open mode besides loopback names; default: CORRAL_ALLOWED_HOSTS. */
  allowedHosts?: ReadonlySet<string>;
  /** Failed-login throttle; default: 5 failures a minute per source address and per user. */
  limiter?: LoginLimiter;
  /** One line per event worth an operator's attention (gaps, relabels, unexpected failures). */
  log?: (line: string) => void;
}

export interface ProxmoxHandler {
  handle(req: IncomingMessage, res: ServerResponse): Promise<void>;
  state: ProxmoxState;
  auth: AuthConfig;
  close(): void;
}

export function buildRoutes(): Routes {
  const table: Routes = new RouteTable<Endpoint>();
  registerAccess(table);
  registerCluster(table);
  registerNodes(table);
  registerStorage(table);
  registerQemu(table);
  registerCloudInit(table);
  registerQemuMigrate(table);
  registerQemuMoveDisk(table);
  registerPools(table);
  registerLxc(table);
  registerAgent(table);
  registerAgentWrites(table);
  registerRrd(table);
  registerSnapshots(table);
  return table;
}

/** The secret the ticket keys derive from: the configured grants (so replicas agree), else random per process. */
function signerKey(grants: TokenGrant[]): Buffer {
  return grants.length ? Buffer.from(grants.map((g) => `${g.tokenId ?? '*'}=${g.secret}`).join('\n')) : randomBytes(32);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY) throw new ProxmoxError(413, 'request entity too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function requestParams(req: IncomingMessage, url: URL): Promise<Params> {
  const query = Params.fromSearch(url.searchParams);
  if (req.method === 'GET' || req.method === 'HEAD') return query;
  const raw = await readBody(req);
  if (!raw.trim()) return query;
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (type.includes('application/json')) {
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      throw new ProxmoxError(400, 'malformed JSON body');
    }
    return query.merge(paramsFromJson(body));
  }
  return query.merge(Params.fromSearch(new URLSearchParams(raw)));
}

/** CORRAL_ALLOWED_HOSTS as a set of lower-case host names (or host:port); unset or blank → undefined. */
export function parseHosts(text: string | undefined): ReadonlySet<string> | undefined {
  const list = (text ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((h) => h.toLowerCase());
  return list.length ? new Set(list) : undefined;
}

/** Whether the server's front door found that the request relays another client (before it dropped headers). */
function relayedPerFrontDoor(req: IncomingMessage): boolean {
  try {
    return trustOf(req).relayed;
  } catch {
    return false; // a malformed CORRAL_TRUSTED_PROXIES stops the server at start; the headers still decide
  }
}

/**
 * What authentication needs to know about a request. `forwarded`: relayed by a reverse proxy for another client —
 * as the front door recorded it (src/server/http/trust.ts), or as the headers proxies add say (X-Forwarded-For,
 * Forwarded, X-Real-IP, Tailscale-User-Login).
 */
export function requestFacts(req: IncomingMessage, method = req.method ?? 'GET'): RequestFacts {
  return {
    method,
    headers: req.headers,
    forwarded: relayedByProxy(req.headers) || relayedPerFrontDoor(req),
    ...(req.socket.remoteAddress ? { remoteAddress: req.socket.remoteAddress } : {}),
  };
}

export function createProxmoxHandler(options: ProxmoxOptions): ProxmoxHandler {
  const log = options.log ?? ((line: string) => console.log(line));
  const grants = options.grants ?? parseGrants(process.env.CORRAL_PROXMOX_TOKEN);
  const admins = options.admins ?? parseAdmins(process.env.CORRAL_ADMINS);
  const allowedHosts = options.allowedHosts ?? parseHosts(process.env.CORRAL_ALLOWED_HOSTS);
  const auth: AuthConfig = {
    grants,
    signer: new TicketSigner(signerKey(grants)),
    limiter: options.limiter ?? new LoginLimiter({ log }),
    ...(admins ? { admins } : {}),
    ...(allowedHosts ? { allowedHosts } : {}),
  };
  const state = new ProxmoxState(options.services);
  const routes = buildRoutes();
  // The registry lives with the services so `GET /api/proxmox/gaps` (and the UI) read what this handler counted.
  const gaps = new GapLog(log, options.services.proxmoxGaps);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = (req.method ?? 'GET').toUpperCase();
    const rawUrl = req.url ?? '/';
    let principal: Principal | undefined;
    try {
      const rawPath = rawUrl.split('?')[0] ?? '/';
      if (!rawPath.startsWith(API_PREFIX)) throw new ProxmoxError(404, `no such path '${rawPath}'`);
      const subPath = rawPath.slice(API_PREFIX.length) || '/';
      const segments = splitPath(subPath);
      const facts = requestFacts(req, method);
      const match = routes.match(method, segments);
      if (!match) {
        // PVE checks credentials before it looks for the method; only authenticated callers reach the gap log.
        principal = authenticate(auth, facts);
        gaps.note(method, segments, principal.tokenId ?? principal.userid);
        throw notImplemented(method, subPath);
      }
      const endpoint = match.handler;
      principal = endpoint.public
        ? { userid: 'anonymous@pve', role: 'NoAccess' as const, via: 'open' as const }
        : authenticate(auth, facts);
      const url = new URL(rawUrl, 'http://localhost');
      const args = endpoint.streamsBody ? Params.fromSearch(url.searchParams) : await requestParams(req, url);
      if (endpoint.privilege)
        requirePrivilege(principal.role, endpoint.privilege.path(match.params, args), endpoint.privilege.name);
      else if (!endpoint.public && method !== 'GET' && !hasPrivilege(principal.role, 'Sys.Modify'))
        throw new ProxmoxError(403, `Permission check failed (/, Sys.Modify)`);
      const ctx: EndpointContext = {
        state,
        auth,
        path: match.params,
        args,
        principal,
        facts,
        ...(endpoint.streamsBody ? { request: req } : {}),
      };
      // Cluster requests queue as this Proxmox user's in the cluster's fair rate limiter (cluster/rate-limiter.ts).
      const result = await asKubeCaller(principal.tokenId ?? principal.userid, () => endpoint.handle(ctx));
      if (result instanceof RawJson) sendRawData(res, result);
      else sendData(res, result);
    } catch (err) {
      if (!(err instanceof ProxmoxError))
        log(`[proxmox] ${method} ${rawUrl} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      // Internal addresses (the apiserver's URL or IP) are for Administrators and the log only.
      sendError(res, principal?.role === 'Administrator' ? err : redactError(err));
    }
  };

  return { handle, state, auth, close: () => state.close() };
}
