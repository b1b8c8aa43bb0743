import { describe, expect, it } from 'vitest';
import { ProxmoxError } from '../wire';
import { authenticate, login, type AuthConfig } from './authenticate';
import { LoginLimiter } from './login-limiter';
import { TicketSigner } from './tickets';
import { parseGrants } from './tokens';

const SECRET = '5f0c2c64-6a53-4d7c-9d5b-2f3a1f0e9b11';

function setup() {
  let now = 1_000_000;
  const lines: string[] = [];
  const limiter = new LoginLimiter({ log: (l) => lines.push(l), now: () => now });
  const config: AuthConfig = {
    grants: parseGrants(`root@pam!ci=${SECRET}`),
    signer: new TicketSigner(Buffer.from('k')),
    limiter,
  };
  const attempt = (password: string, username = 'root@pam', remoteAddress = '198.51.100.7'): number => {
    try {
      login(config, { remoteAddress }, { username, password });
      return 200;
    } catch (e) {
      if (e instanceof ProxmoxError) return e.status;
      throw e;
    }
  };
  return { lines, attempt, advance: (ms: number) => (now += ms) };
}

describe('failed logins', () => {
  it('answers 429 after 5 failures a minute, even to the right password, and logs one line per burst', () => {
    const { lines, attempt, advance } = setup();
    const codes = Array.from({ length: 1000 }, (_, i) => attempt(`guess-${i}`));
    expect(codes.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(codes.slice(5).every((c) => c === 429)).toBe(true);
    expect(attempt(SECRET)).toBe(429);
    expect(lines).toEqual(['[proxmox] login failure for root@pam from 198.51.100.7 (1 in the last minute)']);
    // A guesser that keeps going (every 10 s) stays blocked, and gets one more line a minute with the count.
    for (let t = 0; t < 12; t++) {
      advance(10_000);
      expect(attempt(`later-${t}`)).toBe(429);
    }
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(
      /^\[proxmox\] login failure for root@pam from 198\.51\.100\.7 \(\d+ in the last minute\)$/,
    );
    // After a quiet minute the address may log in again.
    advance(61_000);
    expect(attempt(SECRET)).toBe(200);
  });

  it('limits per user across addresses, and per address across users', () => {
    const { attempt, advance } = setup();
    for (let i = 0; i < 5; i++) expect(attempt('x', 'root@pam', `203.0.113.${i}`)).toBe(401);
    expect(attempt(SECRET, 'root@pam', '203.0.113.200')).toBe(429);
    advance(61_000);
    for (let i = 0; i < 5; i++) expect(attempt('x', `user${i}@pve`, '192.0.2.1')).toBe(401);
    expect(attempt(SECRET, 'root@pam', '192.0.2.1')).toBe(429);
    expect(attempt(SECRET, 'root@pam', '192.0.2.2')).toBe(200);
  });

  it('bounds log lines across many addresses and keeps them on one line', () => {
    const { lines, attempt } = setup();
    for (let i = 0; i < 500; i++) attempt('x', 'root\n[proxmox] forged@pam', `2001:db8::${i.toString(16)}`);
    expect(lines.length).toBeLessThanOrEqual(20);
    expect(lines.every((l) => !l.includes('\n'))).toBe(true);
  });

  it('logs wrong API token secrets once per burst, without blocking valid tokens from the same address', () => {
    let now = 5_000_000;
    const lines: string[] = [];
    const limiter = new LoginLimiter({ log: (l) => lines.push(l), now: () => now });
    const config: AuthConfig = {
      grants: parseGrants(`root@pam!ci=${SECRET}`),
      signer: new TicketSigner(Buffer.from('k')),
      limiter,
    };
    const call = (secret: string, remoteAddress: string): number => {
      try {
        authenticate(config, {
          method: 'GET',
          remoteAddress,
          headers: { authorization: `PVEAPIToken=root@pam!ci=${secret}` },
        });
        return 200;
      } catch (e) {
        if (e instanceof ProxmoxError) return e.status;
        throw e;
      }
    };
    const codes = Array.from({ length: 100 }, (_, i) => call(`guess-${i}`, '127.0.0.1'));
    expect(codes.every((c) => c === 401)).toBe(true);
    // Behind a proxy everybody is 127.0.0.1: Terraform's valid token keeps working.
    expect(call(SECRET, '127.0.0.1')).toBe(200);
    expect(lines).toEqual(['[proxmox] API token failure for root@pam!ci from 127.0.0.1 (1 in the last minute)']);
    now += 61_000;
    call('again', '127.0.0.1');
    expect(lines).toHaveLength(2);
  });
});
