import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ProxmoxError } from '../wire';
import {
  authenticate,
  isLoopback,
  isLoopbackName,
  login,
  parseAdmins,
  relayedByProxy,
  ticketFromCookie,
  type AuthConfig,
} from './authenticate';
import { capabilities, hasPrivilege, permissions, requirePrivilege } from './roles';
import { TICKET_LIFETIME_S, TicketSigner } from './tickets';
import { TokenConfigError, matchPassword, matchToken, parseGrants, parseTokenHeader, safeEqual } from './tokens';

const ADMIN_SECRET = '5f0c2c64-6a53-4d7c-9d5b-2f3a1f0e9b11';
const VIEWER_SECRET = '0b8e1c1d-2222-4c3c-8b7e-5a6f7e8d9c0b';
const BOUND_SECRET = '7a1d2e3f-4b5c-4d6e-8f70-81a2b3c4d5e6';

function status(fn: () => unknown): [number, string] {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProxmoxError) return [e.status, e.message];
    throw e;
  }
  throw new Error('expected a ProxmoxError');
}

describe('token grants', () => {
  it('parses shared secrets, bound tokens and roles', () => {
    expect(parseGrants(`${ADMIN_SECRET}, ro@pve!mon=${VIEWER_SECRET}:Viewer`)).toEqual([
      { secret: ADMIN_SECRET, role: 'Administrator' },
      { tokenId: 'ro@pve!mon', secret: VIEWER_SECRET, role: 'Viewer' },
    ]);
    expect(parseGrants(undefined)).toEqual([]);
    expect(parseGrants('  ')).toEqual([]);
  });

  it('refuses bad grants without echoing the secret', () => {
    expect(() => parseGrants('short')).toThrow(TokenConfigError);
    expect(() => parseGrants(`root!x=${ADMIN_SECRET}`)).toThrow(/user@realm!name/);
    try {
      parseGrants(`root@pam!x=${ADMIN_SECRET}:King`);
    } catch (e) {
      expect(String(e)).toMatch(/unknown role 'King'/);
      expect(String(e)).not.toContain(ADMIN_SECRET);
    }
  });

  it('parses PVEAPIToken headers', () => {
    expect(parseTokenHeader(`PVEAPIToken=root@pam!ci=${ADMIN_SECRET}`)).toEqual({
      userid: 'root@pam',
      tokenName: 'ci',
      secret: ADMIN_SECRET,
    });
    expect(parseTokenHeader('PVEAPIToken=root@pam=x')).toBeUndefined();
    expect(parseTokenHeader('Bearer x')).toBeUndefined();
  });

  it('matches tokens by secret and, for bound grants, by id', () => {
    const grants = parseGrants(`${ADMIN_SECRET} ro@pve!mon=${VIEWER_SECRET}:Viewer`);
    expect(matchToken(grants, { userid: 'root@pam', tokenName: 'any', secret: ADMIN_SECRET })?.role).toBe(
      'Administrator',
    );
    expect(matchToken(grants, { userid: 'ro@pve', tokenName: 'mon', secret: VIEWER_SECRET })?.role).toBe('Viewer');
    expect(matchToken(grants, { userid: 'ro@pve', tokenName: 'other', secret: VIEWER_SECRET })).toBeUndefined();
    expect(matchToken(grants, { userid: 'root@pam', tokenName: 'ci', secret: 'nope' })).toBeUndefined();
    expect(matchPassword(grants, 'ro@pve', VIEWER_SECRET)?.role).toBe('Viewer');
    expect(matchPassword(grants, 'root@pam', VIEWER_SECRET)).toBeUndefined();
    expect(safeEqual('a', 'a')).toBe(true);
    expect(safeEqual('a', 'ab')).toBe(false);
  });
});

describe('tickets', () => {
  let now = 1_800_000_000;
  const signer = new TicketSigner(Buffer.from('k'), () => now);

  it('have PVE’s shape and never contain the secret', () => {
    const secretSigner = new TicketSigner(Buffer.from(ADMIN_SECRET), () => now);
    const { ticket, csrf } = secretSigner.issue('root@pam', 'Administrator');
    expect(ticket).toMatch(/^PVE:root@pam:[0-9A-F]{8}::[A-Za-z0-9+/=]+$/);
    expect(ticket.split(':').length).toBeGreaterThan(3);
    expect(ticket).not.toContain(ADMIN_SECRET);
    expect(csrf).toMatch(/^[0-9A-F]{8}:[A-Za-z0-9+/=]+$/);
  });

  it('verify with their role, expire after 2 h, and reject tampering', () => {
    const { ticket } = signer.issue('ro@pve', 'Viewer');
    expect(signer.verify(ticket)).toEqual({ userid: 'ro@pve', role: 'Viewer', issued: now });
    expect(signer.verify(ticket.replace('ro@pve', 'root@pam'))).toBeUndefined();
    expect(new TicketSigner(Buffer.from('other'), () => now).verify(ticket)).toBeUndefined();
    now += TICKET_LIFETIME_S + 1;
    expect(signer.verify(ticket)).toBeUndefined();
  });

  it('bind CSRF tokens to the user and their age', () => {
    const { csrf } = signer.issue('root@pam', 'Administrator');
    expect(signer.verifyCsrf('root@pam', csrf)).toBe(true);
    expect(signer.verifyCsrf('ro@pve', csrf)).toBe(false);
    expect(signer.verifyCsrf('root@pam', undefined)).toBe(false);
    expect(signer.verifyCsrf('root@pam', 'garbage')).toBe(false);
    now += TICKET_LIFETIME_S + 1;
    expect(signer.verifyCsrf('root@pam', csrf)).toBe(false);
  });
});

describe('authenticate', () => {
  const signer = new TicketSigner(randomBytes(32));
  const config: AuthConfig = { grants: parseGrants(`${ADMIN_SECRET} ro@pve!mon=${VIEWER_SECRET}:Viewer`), signer };
  const remote = { remoteAddress: '10.0.0.5' };

  it('accepts tokens with their role and refuses bad ones', () => {
    const p = authenticate(config, {
      ...remote,
      method: 'POST',
      headers: { authorization: `PVEAPIToken=root@pam!ci=${ADMIN_SECRET}` },
    });
    expect(p).toEqual({ userid: 'root@pam', tokenId: 'root@pam!ci', role: 'Administrator', via: 'token' });
    const v = authenticate(config, {
      ...remote,
      method: 'GET',
      headers: { authorization: `PVEAPIToken=ro@pve!mon=${VIEWER_SECRET}` },
    });
    expect(v.role).toBe('Viewer');
    expect(
      status(() =>
        authenticate(config, {
          ...remote,
          method: 'GET',
          headers: { authorization: 'PVEAPIToken=root@pam!ci=wrong-secret' },
        }),
      )[0],
    ).toBe(401);
  });

  it('says No ticket without credentials and rejects bad tickets in the words npm re-logins on', () => {
    expect(status(() => authenticate(config, { ...remote, method: 'GET', headers: {} }))).toEqual([401, 'No ticket']);
    expect(
      status(() =>
        authenticate(config, {
          ...remote,
          method: 'GET',
          headers: { cookie: 'PVEAuthCookie=PVE:root@pam:00000000::x' },
        }),
      ),
    ).toEqual([401, 'permission denied - invalid PVE ticket']);
  });

  it('requires the CSRF token on cookie writes only', () => {
    const { ticket, CSRFPreventionToken } = login(config, remote, { username: 'root@pam', password: ADMIN_SECRET });
    const cookie = `PVEAuthCookie=${encodeURIComponent(ticket)}`;
    expect(authenticate(config, { ...remote, method: 'GET', headers: { cookie } }).via).toBe('ticket');
    expect(status(() => authenticate(config, { ...remote, method: 'POST', headers: { cookie } }))).toEqual([
      401,
      'Permission denied - invalid csrf token',
    ]);
    expect(
      authenticate(config, {
        ...remote,
        method: 'DELETE',
        headers: { cookie, csrfpreventiontoken: CSRFPreventionToken },
      }).userid,
    ).toBe('root@pam');
  });

  it('logs in with the secret, renews with a valid ticket, refuses anything else', () => {
    const first = login(config, remote, { username: 'root', password: ADMIN_SECRET });
    expect(first.username).toBe('root@pam');
    const renewed = login(config, remote, { username: 'root@pam', password: first.ticket });
    expect(renewed.ticket).toMatch(/^PVE:root@pam:/);
    expect(status(() => login(config, remote, { username: 'other@pam', password: first.ticket }))).toEqual([
      401,
      'authentication failure',
    ]);
    expect(status(() => login(config, remote, { username: 'root@pam', password: 'guess' }))[0]).toBe(401);
    expect(login(config, remote, { username: 'ro@pve', password: VIEWER_SECRET }).role).toBe('Viewer');
  });

  it('serves only loopback without a secret, and refuses cross-site writes there', () => {
    const open: AuthConfig = { grants: [], signer };
    expect(authenticate(open, { method: 'POST', headers: {}, remoteAddress: '127.0.0.1' })).toMatchObject({
      role: 'Administrator',
      via: 'open',
    });
    expect(authenticate(open, { method: 'GET', headers: {}, remoteAddress: '::ffff:127.0.0.1' }).via).toBe('open');
    const [code, message] = status(() =>
      authenticate(open, { method: 'GET', headers: {}, remoteAddress: '192.168.1.9' }),
    );
    expect(code).toBe(403);
    expect(message).toMatch(/CORRAL_PROXMOX_TOKEN/);
    expect(
      status(() =>
        authenticate(open, {
          method: 'POST',
          headers: { origin: 'https://evil.example', host: '127.0.0.1:8006' },
          remoteAddress: '127.0.0.1',
        }),
      )[0],
    ).toBe(403);
    expect(
      authenticate(open, {
        method: 'POST',
        headers: { origin: 'https://127.0.0.1:8006', host: '127.0.0.1:8006' },
        remoteAddress: '127.0.0.1',
      }).role,
    ).toBe('Administrator');
    expect(status(() => login(open, { remoteAddress: '10.1.1.1' }, { username: 'root@pam', password: 'x' }))[0]).toBe(
      403,
    );
    expect(login(open, { remoteAddress: '127.0.0.1' }, { username: 'root@pam', password: 'anything' }).username).toBe(
      'root@pam',
    );
  });

  it('caps callers not in CORRAL_ADMINS at Viewer', () => {
    const gated: AuthConfig = {
      ...config,
      grants: parseGrants(`${ADMIN_SECRET} root@pam!ci=${BOUND_SECRET}`),
      admins: parseAdmins('alice@github, root@pam'),
    };
    const token = { authorization: `PVEAPIToken=ops@pve!x=${ADMIN_SECRET}` };
    expect(authenticate(gated, { ...remote, method: 'GET', headers: token }).role).toBe('Viewer');
    // A grant bound to a listed user keeps its role.
    expect(
      authenticate(gated, {
        ...remote,
        method: 'GET',
        headers: { authorization: `PVEAPIToken=root@pam!ci=${BOUND_SECRET}` },
      }).role,
    ).toBe('Administrator');
    expect(parseAdmins('  ')).toBeUndefined();
  });

  it('never lets identity headers or a claimed user name lift a role (issue 14)', () => {
    const gated: AuthConfig = {
      ...config,
      grants: parseGrants(`${ADMIN_SECRET} root@pam!ci=${BOUND_SECRET} ro@pve!mon=${VIEWER_SECRET}:Viewer`),
      admins: parseAdmins('alice@github, root@pam, ro@pve'),
    };
    const headers = (authorization: string) => ({
      authorization,
      'tailscale-user-login': 'alice@github',
      'x-forwarded-user': 'alice@github',
    });
    // The attack: a non-admin token plus an admin's Tailscale login.
    expect(
      authenticate(gated, { ...remote, method: 'GET', headers: headers(`PVEAPIToken=ops@pve!x=${ADMIN_SECRET}`) }).role,
    ).toBe('Viewer');
    // The shared secret names whoever its holder likes: naming a listed user proves nothing.
    for (const name of ['root@pam!x', 'alice@github!x'])
      expect(
        authenticate(gated, {
          ...remote,
          method: 'GET',
          headers: { authorization: `PVEAPIToken=${name}=${ADMIN_SECRET}` },
        }).role,
      ).toBe('Viewer');
    // Nor does a password login under a listed name with the shared secret; the ticket keeps the capped role.
    const shared = login(gated, remote, { username: 'root@pam', password: ADMIN_SECRET });
    expect(shared.role).toBe('Viewer');
    const cookie = `PVEAuthCookie=${encodeURIComponent(shared.ticket)}`;
    expect(
      authenticate(gated, { ...remote, method: 'GET', headers: { cookie, 'tailscale-user-login': 'alice@github' } })
        .role,
    ).toBe('Viewer');
    // A bound grant on the list keeps its grant's role, and never more: the Viewer token stays Viewer.
    expect(login(gated, remote, { username: 'root@pam', password: BOUND_SECRET }).role).toBe('Administrator');
    expect(
      authenticate(gated, { ...remote, method: 'GET', headers: headers(`PVEAPIToken=ro@pve!mon=${VIEWER_SECRET}`) })
        .role,
    ).toBe('Viewer');
    // Open mode on loopback: root@pam unless listed; a login under a listed name is no way around it.
    const open: AuthConfig = { grants: [], signer, admins: parseAdmins('alice@github') };
    const local = { remoteAddress: '127.0.0.1' };
    expect(
      authenticate(open, { ...local, method: 'GET', headers: { 'tailscale-user-login': 'alice@github' } }).role,
    ).toBe('Viewer');
    expect(login(open, local, { username: 'alice@github', password: 'x' }).role).toBe('Viewer');
  });

  it('treats a request relayed by a proxy as remote in open mode, and refuses rebinding origins', () => {
    const open: AuthConfig = { grants: [], signer, allowedHosts: new Set(['corral.lan']) };
    const local = { remoteAddress: '127.0.0.1' };
    expect(status(() => authenticate(open, { ...local, method: 'GET', forwarded: true }))[0]).toBe(403);
    expect(status(() => login(open, { ...local, forwarded: true }, { username: 'root@pam', password: 'x' }))[0]).toBe(
      403,
    );
    expect(relayedByProxy({ 'x-forwarded-for': '203.0.113.9' })).toBe(true);
    expect(relayedByProxy({ forwarded: 'for=203.0.113.9' })).toBe(true);
    expect(relayedByProxy({ 'tailscale-user-login': 'alice@github' })).toBe(true);
    expect(relayedByProxy({ host: 'localhost' })).toBe(false);
    const write = (origin: string, host: string) => () =>
      authenticate(open, { ...local, method: 'POST', headers: { origin, host } });
    // DNS rebinding: the attacker's name resolves to 127.0.0.1, so Origin equals Host.
    expect(status(write('http://rebind.attacker.example:8006', 'rebind.attacker.example:8006'))[0]).toBe(403);
    expect(status(write('null', '127.0.0.1:8006'))[0]).toBe(403);
    for (const [origin, host] of [
      ['http://localhost:8006', 'localhost:8006'],
      ['http://127.0.0.2:8006', '127.0.0.2:8006'],
      ['http://[::1]:8006', '[::1]:8006'],
      ['https://corral.lan', 'corral.lan'],
    ] as const)
      expect(write(origin, host)().role).toBe('Administrator');
    expect(isLoopbackName('app.localhost')).toBe(true);
    expect(isLoopbackName('localhost.attacker.example')).toBe(false);
  });

  it('recognises loopback addresses and percent-encoded cookies', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
    expect(ticketFromCookie('a=b; PVEAuthCookie=PVE%3Aroot%40pam%3A1::x')).toBe('PVE:root@pam:1::x');
  });
});

describe('roles', () => {
  it('gives Viewers read privileges only', () => {
    expect(hasPrivilege('Viewer', 'VM.Audit')).toBe(true);
    expect(hasPrivilege('Viewer', 'VM.PowerMgmt')).toBe(false);
    expect(hasPrivilege('Operator', 'VM.PowerMgmt')).toBe(true);
    expect(hasPrivilege('Operator', 'Sys.Modify')).toBe(false);
    expect(() => requirePrivilege('Viewer', '/vms/100', 'VM.PowerMgmt')).toThrow(
      'Permission check failed (/vms/100, VM.PowerMgmt)',
    );
  });

  it('describes capabilities and permissions per role', () => {
    expect(capabilities('Viewer').vms).toEqual({ 'VM.Audit': 1 });
    expect(capabilities('Administrator').vms).toHaveProperty('VM.Allocate', 1);
    expect(permissions('Viewer')['/vms']).toEqual({ 'VM.Audit': 1 });
    expect(permissions('NoAccess')).toEqual({});
  });
});
