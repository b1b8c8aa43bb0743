import type { IncomingMessage } from 'node:http';
import { hostname } from 'node:os';
import { afterEach, describe, expect, it } from 'vitest';
import { identityFor, REMOTE_READ_ONLY } from '../identity-http';
import { assessRequest, hostAllowed, hostOf, parseCidrs, rememberTrust, trustConfig, TrustConfigError } from './trust';

function request(peer: string, headers: Record<string, string> = {}): IncomingMessage {
  return { headers, socket: { remoteAddress: peer } } as unknown as IncomingMessage;
}

/** A request as the front door would have recorded it, for a server listening on `listenHost`. */
function through(
  listenHost: string,
  peer: string,
  headers: Record<string, string> = {},
  env: Record<string, string> = {},
) {
  const req = request(peer, headers);
  rememberTrust(req, assessRequest(trustConfig({ listenHost, env }), peer, req.headers));
  return req;
}

const saved = process.env.CORRAL_ADMINS;
afterEach(() => {
  if (saved === undefined) delete process.env.CORRAL_ADMINS;
  else process.env.CORRAL_ADMINS = saved;
});

describe('trusted proxies', () => {
  it('parses CIDRs and refuses a bad entry by name', () => {
    const list = parseCidrs('10.0.0.0/8, 192.168.1.5 fd00::/8');
    expect(list.check('10.2.3.4', 'ipv4')).toBe(true);
    expect(list.check('192.168.1.5', 'ipv4')).toBe(true);
    expect(list.check('192.168.1.6', 'ipv4')).toBe(false);
    expect(list.check('fd00::1', 'ipv6')).toBe(true);
    expect(() => parseCidrs('10.0.0.0/33')).toThrow(TrustConfigError);
    expect(() => parseCidrs('proxy.lan')).toThrow(/proxy\.lan/);
  });

  it('believes identity headers from loopback by default, and from nobody else', () => {
    process.env.CORRAL_ADMINS = 'alice@example.com';
    const viaProxy = through('0.0.0.0', '127.0.0.1', { 'tailscale-user-login': 'alice@example.com' });
    expect(identityFor(viaProxy)).toMatchObject({ login: 'alice@example.com', admin: true });
    const spoofed = through('0.0.0.0', '::ffff:192.0.2.7', { 'tailscale-user-login': 'alice@example.com' });
    expect(identityFor(spoofed)).toMatchObject({ login: 'anonymous', admin: false });
  });

  it('honours CORRAL_TRUSTED_PROXIES instead of loopback when set', () => {
    process.env.CORRAL_ADMINS = 'alice@example.com';
    const env = { CORRAL_TRUSTED_PROXIES: '10.1.0.0/16' };
    const headers = { 'tailscale-user-login': 'alice@example.com' };
    expect(identityFor(through('0.0.0.0', '10.1.2.3', headers, env)).admin).toBe(true);
    expect(identityFor(through('0.0.0.0', '127.0.0.1', headers, env)).admin).toBe(false);
  });
});

describe('who may change state without CORRAL_ADMINS', () => {
  it('everybody, when Corral listens on loopback only (the proxy in front decides who reaches it)', () => {
    delete process.env.CORRAL_ADMINS;
    expect(identityFor(through('127.0.0.1', '127.0.0.1', { 'tailscale-user-login': 'bob' })).admin).toBe(true);
  });

  it('only the local user when Corral listens beyond loopback', () => {
    delete process.env.CORRAL_ADMINS;
    expect(identityFor(through('0.0.0.0', '127.0.0.1')).admin).toBe(true);
    const remote = identityFor(through('0.0.0.0', '192.0.2.7'));
    expect(remote).toMatchObject({ admin: false, readOnlyReason: REMOTE_READ_ONLY });
    // Relayed by a local proxy on behalf of somebody else: remote too.
    expect(identityFor(through('0.0.0.0', '127.0.0.1', { 'x-forwarded-for': '192.0.2.7' })).admin).toBe(false);
  });

  it('everybody with --open (CORRAL_OPEN=1)', () => {
    delete process.env.CORRAL_ADMINS;
    expect(identityFor(through('0.0.0.0', '192.0.2.7', {}, { CORRAL_OPEN: '1' })).admin).toBe(true);
  });
});

describe('Host allow-list', () => {
  it('reads the host part of a Host header', () => {
    expect(hostOf('Example.COM:8006')).toBe('example.com');
    expect(hostOf('[::1]:8006')).toBe('::1');
    expect(hostOf('bad host')).toBe('');
  });

  it('answers loopback names always, listed hosts and suffixes, and nothing else', () => {
    const config = trustConfig({ listenHost: '0.0.0.0', env: { CORRAL_ALLOWED_HOSTS: 'corral.lan, .ts.net' } });
    for (const ok of ['localhost:8006', '127.0.0.1', '[::1]:1', 'corral.lan', 'corral.tail1234.ts.net'])
      expect(hostAllowed(config, ok), ok).toBe(true);
    for (const bad of ['evil.example', 'corral.lan.evil.example', '', undefined])
      expect(hostAllowed(config, bad), String(bad)).toBe(false);
    expect(hostAllowed(trustConfig({ listenHost: '0.0.0.0', env: { CORRAL_ALLOWED_HOSTS: '*' } }), 'x.y')).toBe(true);
  });

  it('always answers the machine name and its listen address, with or without a list', () => {
    const config = trustConfig({ listenHost: '192.0.2.10', env: { CORRAL_ALLOWED_HOSTS: 'corral.lan' } });
    expect(hostAllowed(config, '192.0.2.10:8006')).toBe(true);
    expect(hostAllowed(config, hostname())).toBe(true);
    expect(hostAllowed(config, 'rebind.attacker.example')).toBe(false);
  });
});
