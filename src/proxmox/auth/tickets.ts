/**
 * Login tickets and CSRF tokens in Proxmox's formats, signed with HMAC-SHA256 under a key derived from the
 * configured secret (or a random per-process key when none is configured). They never contain the secret.
 *   ticket: `PVE:<user@realm>:<HEXTIME>::<base64 HMAC(user, time, role)>` — valid 2 h, like PVE's
 *   CSRF:   `<HEXTIME>:<base64 HMAC(user, time)>` — bound to the user, checked on cookie-authenticated writes
 * The role is folded into the signature rather than written into the ticket, so the ticket keeps PVE's shape
 * (bpg's `auth_ticket` wants > 3 colon-separated parts and an `@` in part 1) and cannot be edited to escalate.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ROLES, type Role } from './roles';

export const TICKET_LIFETIME_S = 2 * 60 * 60;
/** Clock skew tolerated for tickets that claim to come from the future (another replica, NTP drift). */
const FUTURE_SKEW_S = 5 * 60;

export interface TicketClaims {
  userid: string;
  role: Role;
  /** Unix seconds the ticket was issued at. */
  issued: number;
}

const USERID = /^[^\s:!]+@[^\s:!]+$/;

function sign(key: Buffer, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('base64');
}

function sameSignature(a: string, b: string): boolean {
  const ba = Buffer.from(a);
  const bb = Buffer.from(b);
  return ba.length === bb.length && timingSafeEqual(ba, bb);
}

function hexTime(seconds: number): string {
  return Math.floor(seconds).toString(16).toUpperCase().padStart(8, '0');
}

export class TicketSigner {
  private readonly ticketKey: Buffer;
  private readonly csrfKey: Buffer;

  /** `secretKey` is the material both keys derive from; two replicas with the same secret accept each other's tickets. */
  constructor(
    secretKey: Buffer,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {
    this.ticketKey = createHmac('sha256', secretKey).update('corral/proxmox/ticket').digest();
    this.csrfKey = createHmac('sha256', secretKey).update('corral/proxmox/csrf').digest();
  }

  issue(userid: string, role: Role): { ticket: string; csrf: string; issued: number } {
    if (!USERID.test(userid)) throw new Error(`invalid userid '${userid}'`);
    const issued = Math.floor(this.now());
    const time = hexTime(issued);
    const ticket = `PVE:${userid}:${time}::${sign(this.ticketKey, `${userid}:${time}:${role}`)}`;
    return { ticket, csrf: this.csrfFor(userid, issued), issued };
  }

  /** The claims of a valid, unexpired ticket, or undefined. */
  verify(ticket: string): TicketClaims | undefined {
    const m = /^PVE:([^:]+):([0-9A-F]{8})::([A-Za-z0-9+/=]+)$/.exec(ticket);
    if (!m) return undefined;
    const userid = m[1] as string;
    const time = m[2] as string;
    const issued = parseInt(time, 16);
    const age = this.now() - issued;
    if (age > TICKET_LIFETIME_S || age < -FUTURE_SKEW_S) return undefined;
    let match: Role | undefined;
    // Every role is checked, so the time taken does not depend on which role the ticket carries.
    for (const role of ROLES) {
      if (sameSignature(sign(this.ticketKey, `${userid}:${time}:${role}`), m[3] as string) && !match) match = role;
    }
    return match ? { userid, role: match, issued } : undefined;
  }

  /**
   * A short-lived ticket for one purpose (PVE's `PVEVNC:` tickets for a console of one VM): `PVEVNC:<HEXTIME>::sig`
   * over the user, the purpose and the time. Valid `lifetimeS` seconds.
   */
  purposeTicket(prefix: string, userid: string, purpose: string): string {
    const time = hexTime(this.now());
    return `${prefix}:${time}::${sign(this.ticketKey, `${prefix}:${userid}:${purpose}:${time}`)}`;
  }

  verifyPurposeTicket(prefix: string, userid: string, purpose: string, ticket: string, lifetimeS: number): boolean {
    const m = new RegExp(`^${prefix}:([0-9A-F]{8})::([A-Za-z0-9+/=]+)$`).exec(ticket);
    if (!m) return false;
    const age = this.now() - parseInt(m[1] as string, 16);
    if (age > lifetimeS || age < -FUTURE_SKEW_S) return false;
    return sameSignature(sign(this.ticketKey, `${prefix}:${userid}:${purpose}:${m[1]}`), m[2] as string);
  }

  csrfFor(userid: string, issued: number): string {
    const time = hexTime(issued);
    return `${time}:${sign(this.csrfKey, `${userid}:${time}`)}`;
  }

  /** PVE checks the CSRF token against the user and its own age, not against a specific ticket. */
  verifyCsrf(userid: string, token: string | undefined): boolean {
    if (!token) return false;
    const m = /^([0-9A-F]{8}):([A-Za-z0-9+/=]+)$/.exec(token.trim());
    if (!m) return false;
    const issued = parseInt(m[1] as string, 16);
    const age = this.now() - issued;
    if (age > TICKET_LIFETIME_S || age < -FUTURE_SKEW_S) return false;
    return sameSignature(sign(this.csrfKey, `${userid}:${m[1]}`), m[2] as string);
  }
}
