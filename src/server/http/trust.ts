/**
 * Who is really on the other end of a connection, and which Host names this server answers to (docs/security.md).
 *
 * - Identity headers (`Tailscale-User-Login`, `Tailscale-User-Name`) and `X-Forwarded-Host` are believed only from a
 *   trusted proxy: a peer inside CORRAL_TRUSTED_PROXIES (CIDRs, default loopback). From anyone else they are
 *   dropped, and the first such request per peer is logged.
 * - A caller is *local* when its peer is loopback and nothing says it relays somebody else (no forwarding or
 *   identity headers). When Corral listens beyond loopback with no CORRAL_ADMINS, only local callers may change
 *   state unless the operator opened it (`--open`, CORRAL_OPEN=1).
 * - The Host allow-list closes DNS rebinding: a page on an attacker's name that resolves to this machine sends that
 *   name as Host, and is answered 421 before any handler runs. Loopback names, the machine's own name and
 *   addresses are always answered; CORRAL_ALLOWED_HOSTS adds the names users reach Corral by.
 */
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';

export interface TrustConfig {
  /** Peers whose identity and forwarding headers are believed. */
  trustedProxies: BlockList;
  /** The CIDR list as configured, for the startup log. */
  trustedProxyText: string;
  /** Host names/addresses (lower case, no port) this server answers to; `*` in the set allows any. */
  allowedHosts: ReadonlySet<string>;
  /** Suffixes from `.example.com` entries: any subdomain of them is allowed. */
  allowedSuffixes: readonly string[];
  /** The listen address is not loopback-only. */
  exposed: boolean;
  /** `--open` / CORRAL_OPEN=1: without CORRAL_ADMINS, remote callers may change state too. */
  open: boolean;
}

export class TrustConfigError extends Error {}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** `::ffff:10.0.0.1` → `10.0.0.1`; strips an IPv6 zone. */
export function normaliseAddress(address: string | undefined): string {
  if (!address) return '';
  const a = address.startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
  const zone = a.indexOf('%');
  return (zone >= 0 ? a.slice(0, zone) : a).toLowerCase();
}

export function isLoopbackAddress(address: string | undefined): boolean {
  const a = normaliseAddress(address);
  return a === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** `10.0.0.0/8, 192.168.1.5, ::1/128` → a BlockList; a bad entry throws naming it. */
export function parseCidrs(text: string): BlockList {
  const list = new BlockList();
  for (const entry of text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean)) {
    const [addr = '', bits] = entry.split('/');
    const family = isIP(addr);
    if (family === 0) throw new TrustConfigError(`CORRAL_TRUSTED_PROXIES: ${entry} is not an address or CIDR`);
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) {
      list.addAddress(addr, type);
      continue;
    }
    const prefix = Number(bits);
    if (!/^\d+$/.test(bits) || prefix > (family === 4 ? 32 : 128))
      throw new TrustConfigError(`CORRAL_TRUSTED_PROXIES: ${entry} has a bad prefix length`);
    list.addSubnet(addr, prefix, type);
  }
  return list;
}

function inList(list: BlockList, address: string): boolean {
  const a = normaliseAddress(address);
  const family = isIP(a);
  return family !== 0 && list.check(a, family === 4 ? 'ipv4' : 'ipv6');
}

/** The host part of a Host header, lower case, without port or IPv6 brackets; '' when malformed. */
export function hostOf(header: string | undefined): string {
  const h = (header ?? '').trim().toLowerCase();
  if (!h) return '';
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    return end > 0 ? h.slice(1, end) : '';
  }
  const colon = h.indexOf(':');
  const name = colon >= 0 ? h.slice(0, colon) : h;
  return /^[a-z0-9.-]+$/.test(name) ? name : '';
}

function ownHosts(listenHost: string): string[] {
  const hosts = [hostname()];
  const short = hostname().split('.')[0];
  if (short) hosts.push(short);
  const wildcard = listenHost === '0.0.0.0' || listenHost === '::' || listenHost === '';
  if (wildcard) {
    for (const addrs of Object.values(networkInterfaces()))
      for (const a of addrs ?? []) hosts.push(normaliseAddress(a.address));
  } else {
    hosts.push(normaliseAddress(listenHost));
  }
  return hosts;
}

export interface TrustOptions {
  /** The address the server listens on ('0.0.0.0' for all interfaces). */
  listenHost: string;
  open?: boolean;
  env?: Readonly<Record<string, string | undefined>>;
}

export function trustConfig(options: TrustOptions): TrustConfig {
  const env = options.env ?? process.env;
  const proxies = env.CORRAL_TRUSTED_PROXIES?.trim() || '127.0.0.0/8, ::1/128';
  const listed = (env.CORRAL_ALLOWED_HOSTS ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  // The machine's own names and addresses are always answered (Kubernetes probes send the pod IP as Host); no
  // rebinding page can use them, since its Host is the attacker's name. CORRAL_ALLOWED_HOSTS adds to them.
  const entries = [...LOOPBACK_NAMES, ...ownHosts(options.listenHost), ...listed];
  const hosts = new Set<string>();
  const suffixes: string[] = [];
  for (const e of entries) {
    if (e.startsWith('.')) suffixes.push(e);
    else hosts.add(e.startsWith('[') && e.endsWith(']') ? e.slice(1, -1) : e);
  }
  return {
    trustedProxies: parseCidrs(proxies),
    trustedProxyText: proxies,
    allowedHosts: hosts,
    allowedSuffixes: suffixes,
    exposed: !isLoopbackAddress(options.listenHost) && options.listenHost !== 'localhost',
    open: options.open ?? /^(1|true|yes)$/i.test(env.CORRAL_OPEN ?? ''),
  };
}

/** Is this Host header one the server answers to? Loopback names and `*.localhost` always are. */
export function hostAllowed(config: TrustConfig, header: string | undefined): boolean {
  if (config.allowedHosts.has('*')) return true;
  const host = hostOf(header);
  if (!host) return false;
  if (config.allowedHosts.has(host) || isLoopbackAddress(host) || host.endsWith('.localhost')) return true;
  return config.allowedSuffixes.some((s) => host.endsWith(s));
}

const RELAY_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip', 'tailscale-user-login'] as const;

/** Whether headers carry the marks of a reverse proxy relaying the request for another client. */
export function relayedByHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>> | undefined,
): boolean {
  return RELAY_HEADERS.some((h) => headers?.[h] !== undefined);
}
export const IDENTITY_HEADERS = ['tailscale-user-login', 'tailscale-user-name', 'x-forwarded-host'] as const;

/** What the front door established about one request (or WebSocket upgrade). */
export interface RequestTrust {
  config: TrustConfig;
  /** The TCP peer's address, normalised. */
  peer: string;
  /** The peer is a trusted proxy: its identity and forwarding headers are believed. */
  trustedPeer: boolean;
  /** The request says it relays another client (forwarding or identity headers present). */
  relayed: boolean;
  /** A loopback peer speaking for itself: the person at this machine. */
  local: boolean;
}

export function assessRequest(
  config: TrustConfig,
  peer: string | undefined,
  headers: IncomingHttpHeaders,
): RequestTrust {
  const address = normaliseAddress(peer);
  const trustedPeer = inList(config.trustedProxies, address);
  const relayed = relayedByHeaders(headers);
  return { config, peer: address, trustedPeer, relayed, local: isLoopbackAddress(address) && !relayed };
}

const trustByRequest = new WeakMap<IncomingMessage, RequestTrust>();

export function rememberTrust(req: IncomingMessage, trust: RequestTrust): void {
  trustByRequest.set(req, trust);
}

let fallbackConfig: TrustConfig | undefined;

/**
 * The trust the front door recorded for this request. A request that did not pass Corral's front door (an
 * in-process test driving a handler directly) is assessed against the environment, listening on loopback.
 */
export function trustOf(req: IncomingMessage): RequestTrust {
  const known = trustByRequest.get(req);
  if (known) return known;
  fallbackConfig ??= trustConfig({ listenHost: '127.0.0.1' });
  return assessRequest(fallbackConfig, req.socket.remoteAddress, req.headers);
}
