/**
 * API token grants. `CORRAL_PROXMOX_TOKEN` / `--token` hold one or more grants separated by commas or
 * whitespace, each `[user@realm!tokenid=]SECRET[:Role]`:
 *   - `SECRET` alone is the shared secret: any `user@realm!id` token with that secret, and a password login of
 *     any user with it, act as Administrator;
 *   - `root@pam!ci=SECRET` binds the secret to that one token id (and to password logins as `root@pam`);
 *   - `:Viewer` / `:Operator` / `:Administrator` / `:NoAccess` sets the grant's role (default Administrator).
 * Real PVE secrets are UUIDs (npm proxmox-api refuses anything else), so `corral proxmox serve` prints a
 * UUID-shaped one when asked to generate it.
 */
import { timingSafeEqual, createHash } from 'node:crypto';
import { isRole, type Role } from './roles';

export interface TokenGrant {
  /** `user@realm!tokenid`, or undefined for the shared secret that matches any token id. */
  tokenId?: string;
  secret: string;
  role: Role;
}

export class TokenConfigError extends Error {}

const TOKEN_ID = /^([^\s!@:=]+@[^\s!@:=]+)!([A-Za-z][A-Za-z0-9._-]*)$/;

export function parseGrants(text: string | undefined): TokenGrant[] {
  if (!text || !text.trim()) return [];
  return text
    .trim()
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((entry) => {
      let body = entry;
      let role: Role = 'Administrator';
      const colon = body.lastIndexOf(':');
      if (colon >= 0) {
        const maybeRole = body.slice(colon + 1);
        if (!isRole(maybeRole))
          throw new TokenConfigError(
            `token grant '${redact(entry)}': unknown role '${maybeRole}' (Administrator, Operator, Viewer, NoAccess)`,
          );
        role = maybeRole;
        body = body.slice(0, colon);
      }
      const eq = body.indexOf('=');
      if (eq < 0) {
        if (body.length < 8) throw new TokenConfigError('a shared secret must be at least 8 characters');
        return { secret: body, role };
      }
      const tokenId = body.slice(0, eq);
      const secret = body.slice(eq + 1);
      if (!TOKEN_ID.test(tokenId))
        throw new TokenConfigError(`token grant '${redact(entry)}': token id must look like user@realm!name`);
      if (secret.length < 8)
        throw new TokenConfigError(`token grant for ${tokenId}: secret must be at least 8 characters`);
      return { tokenId, secret, role };
    });
}

function redact(entry: string): string {
  const eq = entry.indexOf('=');
  return eq < 0 ? '***' : `${entry.slice(0, eq)}=***`;
}

/**
 * Constant-time string equality: both sides are hashed first so neither the content nor the length of the
 * secret leaks through timing.
 */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest();
  const hb = createHash('sha256').update(b).digest();
  return timingSafeEqual(ha, hb);
}

export interface ParsedTokenHeader {
  userid: string;
  tokenName: string;
  secret: string;
}

/** `PVEAPIToken=root@pam!ci=SECRET` (PBS's `:` separator accepted too). */
export function parseTokenHeader(header: string): ParsedTokenHeader | undefined {
  const m = /^PVEAPIToken[= ]([^\s!]+@[^\s!]+)!([^\s=:]+)[=:](\S+)$/.exec(header.trim());
  if (!m) return undefined;
  return { userid: m[1] as string, tokenName: m[2] as string, secret: m[3] as string };
}

/** The grant matching a presented token, checking every grant so timing does not reveal which one matched. */
export function matchToken(grants: TokenGrant[], presented: ParsedTokenHeader): TokenGrant | undefined {
  const id = `${presented.userid}!${presented.tokenName}`;
  let found: TokenGrant | undefined;
  for (const g of grants) {
    const secretOk = safeEqual(g.secret, presented.secret);
    if (secretOk && (g.tokenId === undefined || g.tokenId === id) && !found) found = g;
  }
  return found;
}

/** The grant a password login as `userid` proves: the shared secret, or a grant of one of that user's tokens. */
export function matchPassword(grants: TokenGrant[], userid: string, password: string): TokenGrant | undefined {
  let found: TokenGrant | undefined;
  for (const g of grants) {
    const secretOk = safeEqual(g.secret, password);
    const userOk = g.tokenId === undefined || g.tokenId.split('!')[0] === userid;
    if (secretOk && userOk && !found) found = g;
  }
  return found;
}
