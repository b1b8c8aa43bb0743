/**
 * Who is calling, and with which role. Three ways in, as PVE clients speak them:
 *   - `Authorization: PVEAPIToken=user@realm!id=SECRET` — stateless, no CSRF;
 *   - `Cookie: PVEAuthCookie=<ticket>` — plus a `CSRFPreventionToken` header on every state-changing request;
 *   - no secret configured ("open mode") — only loopback callers are served, everybody else is refused with a
 *     message saying how to configure a secret; cross-site browser requests are refused even on loopback.
 * CORRAL_ADMINS caps anyone not on the list at Viewer (read-only), like the rest of Corral.
 */
import { ProxmoxError } from '../wire';
import { lesserRole, type Role } from './roles';
import type { TicketSigner } from './tickets';
import { matchPassword, matchToken, parseTokenHeader, type TokenGrant } from './tokens';

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
}

export interface RequestFacts {
  method: string;
  headers?: Record<string, string | string[] | undefined>;
  remoteAddress?: string;
}

/** What a login needs to know about its request (no method: it is always a POST). */
export type LoginFacts = Omit<RequestFacts, 'method'>;

export const OPEN_MODE_REFUSAL =
  "Corral's Proxmox API has no secret configured, so it only answers on loopback. Set CORRAL_PROXMOX_TOKEN (or --token) to serve other hosts.";

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.startsWith('::ffff:') ? address.slice(7) : address;
  return a === '::1' || /^127\.\d+\.\d+\.\d+$/.test(a);
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

/** CORRAL_ADMINS caps non-listed callers at Viewer; the Tailscale login or the Proxmox user may be listed. */
export function capRole(config: AuthConfig, role: Role, userid: string, facts: LoginFacts): Role {
  if (!config.admins) return role;
  const login = header(facts, 'tailscale-user-login');
  const candidates = [login, userid, userid.split('@')[0]].filter((x): x is string => !!x);
  return candidates.some((c) => config.admins?.has(c)) ? role : lesserRole(role, 'Viewer');
}

function isCrossSite(facts: RequestFacts): boolean {
  if (header(facts, 'sec-fetch-site') === 'cross-site') return true;
  const origin = header(facts, 'origin');
  if (!origin || origin === 'null') return origin === 'null';
  const host = header(facts, 'host');
  try {
    return new URL(origin).host !== host;
  } catch {
    return true;
  }
}

export function authenticate(config: AuthConfig, facts: RequestFacts): Principal {
  const method = facts.method.toUpperCase();
  if (config.grants.length === 0) {
    if (!isLoopback(facts.remoteAddress)) throw new ProxmoxError(403, OPEN_MODE_REFUSAL);
    if (!SAFE_METHODS.has(method) && isCrossSite(facts))
      throw new ProxmoxError(403, 'Permission denied - cross-site request refused');
    const claims = ((t) => (t ? config.signer.verify(t) : undefined))(ticketFromCookie(header(facts, 'cookie')));
    const userid = claims?.userid ?? 'root@pam';
    return { userid, role: capRole(config, 'Administrator', userid, facts), via: 'open' };
  }

  const authz = header(facts, 'authorization');
  if (authz && /^PVEAPIToken[= ]/.test(authz)) {
    const presented = parseTokenHeader(authz);
    const grant = presented ? matchToken(config.grants, presented) : undefined;
    if (!presented || !grant) throw new ProxmoxError(401, 'permission denied - invalid PVE API token');
    const tokenId = `${presented.userid}!${presented.tokenName}`;
    return {
      userid: presented.userid,
      tokenId,
      role: capRole(config, grant.role, presented.userid, facts),
      via: 'token',
    };
  }

  const ticket = ticketFromCookie(header(facts, 'cookie'));
  if (!ticket) throw new ProxmoxError(401, 'No ticket');
  const claims = config.signer.verify(ticket);
  if (!claims) throw new ProxmoxError(401, 'permission denied - invalid PVE ticket');
  if (!SAFE_METHODS.has(method) && !config.signer.verifyCsrf(claims.userid, header(facts, 'csrfpreventiontoken')))
    throw new ProxmoxError(401, 'Permission denied - invalid csrf token');
  return { userid: claims.userid, role: capRole(config, claims.role, claims.userid, facts), via: 'ticket' };
}

export interface LoginResult {
  username: string;
  ticket: string;
  CSRFPreventionToken: string;
  role: Role;
}

/**
 * `POST /access/ticket`. The password is a configured secret, or a still-valid ticket of the same user (PVE's
 * renewal, which proxmoxer does after an hour). Failures are `401 authentication failure`.
 */
export function login(
  config: AuthConfig,
  facts: LoginFacts,
  input: { username: string; password: string; realm?: string },
): LoginResult {
  const fail = () => new ProxmoxError(401, 'authentication failure');
  let userid = input.username.trim();
  if (!userid.includes('@')) userid = `${userid}@${input.realm?.trim() || 'pam'}`;
  if (!/^[^\s:!]+@[^\s:!]+$/.test(userid)) throw fail();

  let role: Role | undefined;
  if (input.password.startsWith('PVE:')) {
    const claims = config.signer.verify(input.password);
    if (claims && claims.userid === userid) role = claims.role;
  }
  if (!role) {
    if (config.grants.length === 0) {
      if (!isLoopback(facts.remoteAddress)) throw new ProxmoxError(403, OPEN_MODE_REFUSAL);
      role = 'Administrator';
    } else {
      role = matchPassword(config.grants, userid, input.password)?.role;
    }
  }
  if (!role) throw fail();
  const issued = config.signer.issue(userid, role);
  return {
    username: userid,
    ticket: issued.ticket,
    CSRFPreventionToken: issued.csrf,
    role: capRole(config, role, userid, facts),
  };
}

/** CORRAL_ADMINS as a set: comma- or space-separated logins; unset or blank → undefined (no enforcement). */
export function parseAdmins(text: string | undefined): ReadonlySet<string> | undefined {
  const list = (text ?? '').split(/[\s,]+/).filter(Boolean);
  return list.length ? new Set(list) : undefined;
}
