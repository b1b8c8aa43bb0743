/**
 * Who is calling, and with which role. Three ways in, as PVE clients speak them:
 *   - `Authorization: PVEAPIToken=user@realm!id=SECRET` — stateless, no CSRF;
 *   - `Cookie: PVEAuthCookie=<ticket>` — plus a `CSRFPreventionToken` header on every state-changing request;
 *   - no secret configured ("open mode") — only loopback callers are served, everybody else is refused with a
 *     message saying how to configure a secret. A request relayed by a reverse proxy counts as remote, and a
 *     state-changing browser request is refused unless its Origin is this host on a loopback name (or an allowed
 *     host), which a DNS-rebinding page cannot forge.
 * CORRAL_ADMINS caps anyone not on the list at Viewer (read-only). Only the *Proxmox* principal counts: identity
 * headers (`Tailscale-User-Login`) never raise a token's or ticket's role, and a user id counts only when the
 * grant that proved it is bound to that user (the shared secret lets its holder name any user).
 */
import { ProxmoxError } from '../wire';
import type { LoginLimiter } from './login-limiter';
import { lesserRole, type Role } from './roles';
import type { TicketSigner } from './tickets';
import { matchPassword, matchToken, parseTokenHeader, type TokenGrant } from './tokens';
import { isLoopbackAddress, relayedByHeaders } from '@/server/http/trust';

export interface Principal {
  /** `root@pam` — the user the caller acts as. */
  userid: string;
  /** `root@pam!ci` when authenticated by an API token (tasks carry it as their user). */
  tokenId?: string;
  role: Role;
  via: 'token' | 'ticket' | 'open';
}

export interface AuthConfig {
  /** Empty: open mode (loopback only). */
  grants: TokenGrant[];
  signer: TicketSigner;
  /** CORRAL_ADMINS: undefined when unset (everybody keeps their role). */
  admins?: ReadonlySet<string>;
  /**
   * Host names (or host:port) besides loopback names that a browser page may be served from and still write in
   * open mode (CORRAL_ALLOWED_HOSTS).
   */
  allowedHosts?: ReadonlySet<string>;
  /** Throttles failed `POST /access/ticket` attempts per source address and per user; none → unlimited. */
  limiter?: LoginLimiter;
}

export interface RequestFacts {
  method: string;
  headers?: Record<string, string | string[] | undefined>;
  remoteAddress?: string;
  /**
   * The request was relayed by a reverse proxy on behalf of another client, so `remoteAddress` is the proxy's,
   * not the caller's. Open mode treats such a request as remote.
   */
  forwarded?: boolean;
}

/** What a login needs to know about its request (no method: it is always a POST). */
export type LoginFacts = Omit<RequestFacts, 'method'>;

export const OPEN_MODE_REFUSAL =
  "Corral's Proxmox API has no secret configured, so it only answers on loopback. Set CORRAL_PROXMOX_TOKEN (or --token) to serve other hosts.";

/** Loopback peers (127.0.0.0/8, ::1, IPv4-mapped): the front door's rule, one implementation. */
export const isLoopback = isLoopbackAddress;

/** Whether a request carries the marks of a reverse proxy relaying it for another client (the front door's rule). */
export const relayedByProxy = relayedByHeaders;

/** `localhost` (and `*.localhost`), 127.0.0.0/8 and ::1, as a host name from a URL (brackets allowed). */
export function isLoopbackName(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h.endsWith('.localhost') || isLoopback(h);
}

function header(facts: LoginFacts, name: string): string | undefined {
  const v = facts.headers?.[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** `PVEAuthCookie` from a Cookie header; values may arrive percent-encoded. */
export function ticketFromCookie(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== 'PVEAuthCookie') continue;
    const value = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(value);
    } catch {
      return value;
    }
  }
  return undefined;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CORRAL_ADMINS caps callers not on the list at Viewer. Only the Proxmox user id (`root@pam`, or its user part
 * `root`) is looked up, and only when `bound`: the secret that proved the caller belongs to that very user (a
 * grant `root@pam!ci=…`), not the shared secret, whose holder may call itself anything. Never raises a role.
 */
export function capRole(config: AuthConfig, role: Role, userid: string, bound: boolean): Role {
  if (!config.admins) return role;
  const listed = bound && (config.admins.has(userid) || config.admins.has(userid.split('@')[0] ?? ''));
  return listed ? role : lesserRole(role, 'Viewer');
}

/** Whether a state-changing open-mode request comes from a page that is not this server on a loopback name. */
function isCrossSite(config: AuthConfig, facts: RequestFacts): boolean {
  if (header(facts, 'sec-fetch-site') === 'cross-site') return true;
  const origin = header(facts, 'origin');
  if (origin === undefined) return false; // not a browser (curl, Proxmox clients)
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return true; // includes "null" (sandboxed frames, file: pages)
  }
  if (url.host !== header(facts, 'host')) return true;
  // A DNS-rebinding page has Origin == Host under the attacker's name: only loopback names or allowed hosts pass.
  const allowed = config.allowedHosts;
  return !(
    isLoopbackName(url.hostname) ||
    allowed?.has(url.host.toLowerCase()) ||
    allowed?.has(url.hostname.toLowerCase())
  );
}

/** Open mode serves the local machine only: a loopback peer that is not a proxy relaying someone else. */
function requireLocal(facts: LoginFacts): void {
  if (!isLoopback(facts.remoteAddress) || facts.forwarded) throw new ProxmoxError(403, OPEN_MODE_REFUSAL);
}

/** The user open mode acts as when no ticket names another one. */
const OPEN_MODE_USER = 'root@pam';

export function authenticate(config: AuthConfig, facts: RequestFacts): Principal {
  const method = facts.method.toUpperCase();
  if (config.grants.length === 0) {
    requireLocal(facts);
    if (!SAFE_METHODS.has(method) && isCrossSite(config, facts))
      throw new ProxmoxError(403, 'Permission denied - cross-site request refused');
    const claims = ((t) => (t ? config.signer.verify(t) : undefined))(ticketFromCookie(header(facts, 'cookie')));
    // A ticket's role was capped when it was issued; the default user is the server's choice, not a claim.
    if (claims) return { userid: claims.userid, role: capRole(config, claims.role, claims.userid, true), via: 'open' };
    return { userid: OPEN_MODE_USER, role: capRole(config, 'Administrator', OPEN_MODE_USER, true), via: 'open' };
  }

  const authz = header(facts, 'authorization');
  if (authz && /^PVEAPIToken[= ]/.test(authz)) {
    const presented = parseTokenHeader(authz);
    const claimed = presented ? `${presented.userid}!${presented.tokenName}` : 'a malformed token';
    const grant = presented ? matchToken(config.grants, presented) : undefined;
    if (!presented || !grant) {
      // Logged once per burst; not throttled (see login-limiter.ts).
      config.limiter?.tokenFailure(claimed, facts.remoteAddress ?? 'unknown');
      throw new ProxmoxError(401, 'permission denied - invalid PVE API token');
    }
    const tokenId = `${presented.userid}!${presented.tokenName}`;
    return {
      userid: presented.userid,
      tokenId,
      role: capRole(config, grant.role, presented.userid, grant.tokenId !== undefined),
      via: 'token',
    };
  }

  const ticket = ticketFromCookie(header(facts, 'cookie'));
  if (!ticket) throw new ProxmoxError(401, 'No ticket');
  const claims = config.signer.verify(ticket);
  if (!claims) throw new ProxmoxError(401, 'permission denied - invalid PVE ticket');
  if (!SAFE_METHODS.has(method) && !config.signer.verifyCsrf(claims.userid, header(facts, 'csrfpreventiontoken')))
    throw new ProxmoxError(401, 'Permission denied - invalid csrf token');
  // The role inside the ticket was capped at login, when it was known whether the grant bound the user.
  return { userid: claims.userid, role: capRole(config, claims.role, claims.userid, true), via: 'ticket' };
}

export interface LoginResult {
  username: string;
  ticket: string;
  CSRFPreventionToken: string;
  role: Role;
}

/**
 * `POST /access/ticket`. The password is a configured secret, or a still-valid ticket of the same user (PVE's
 * renewal, which proxmoxer does after an hour). Failures are `401 authentication failure`; a source address or
 * user with too many recent failures gets `429` without its password being checked (see login-limiter.ts).
 * The ticket carries the role already capped by CORRAL_ADMINS.
 */
export function login(
  config: AuthConfig,
  facts: LoginFacts,
  input: { username: string; password: string; realm?: string },
): LoginResult {
  let userid = input.username.trim();
  if (!userid.includes('@')) userid = `${userid}@${input.realm?.trim() || 'pam'}`;
  const address = facts.remoteAddress ?? 'unknown';
  config.limiter?.check(userid, address);
  const fail = () => {
    config.limiter?.failure(userid, address);
    return new ProxmoxError(401, 'authentication failure');
  };
  if (!/^[^\s:!]+@[^\s:!]+$/.test(userid)) throw fail();

  let role: Role | undefined;
  if (input.password.startsWith('PVE:')) {
    const claims = config.signer.verify(input.password);
    // Renewal keeps the (already capped) role of the ticket.
    if (claims && claims.userid === userid) role = claims.role;
  }
  if (!role) {
    if (config.grants.length === 0) {
      requireLocal(facts);
      // Open mode: any name is accepted, so only the default user can be on CORRAL_ADMINS.
      role = capRole(config, 'Administrator', userid, userid === OPEN_MODE_USER);
    } else {
      const grant = matchPassword(config.grants, userid, input.password);
      if (grant) role = capRole(config, grant.role, userid, grant.tokenId !== undefined);
    }
  }
  if (!role) throw fail();
  const issued = config.signer.issue(userid, role);
  return { username: userid, ticket: issued.ticket, CSRFPreventionToken: issued.csrf, role };
}

/** CORRAL_ADMINS as a set: comma- or space-separated logins; unset or blank → undefined (no enforcement). */
export function parseAdmins(text: string | undefined): ReadonlySet<string> | undefined {
  const list = (text ?? '').split(/[\s,]+/).filter(Boolean);
  return list.length ? new Set(list) : undefined;
}
