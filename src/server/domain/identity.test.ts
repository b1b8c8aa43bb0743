import { describe, expect, it } from 'vitest';
import { identityFromHeaders, parseAdmins } from './identity';

describe('identity', () => {
  it('single-user mode: everybody is admin, not enforced', () => {
    expect(identityFromHeaders({}, parseAdmins(undefined))).toEqual({
      login: 'local',
      name: 'local user',
      admin: true,
      enforced: false,
    });
  });
  it('allowlist: listed logins are admin, others read-only, name falls back to login', () => {
    const policy = parseAdmins('alice@github, bob@github carol');
    expect(identityFromHeaders({ 'tailscale-user-login': 'carol' }, policy)).toMatchObject({
      admin: true,
      name: 'carol',
      enforced: true,
    });
    expect(identityFromHeaders({ 'tailscale-user-login': 'mallory', 'tailscale-user-name': 'M' }, policy)).toEqual({
      login: 'mallory',
      name: 'M',
      admin: false,
      enforced: true,
    });
    expect(identityFromHeaders({}, policy).admin).toBe(false);
  });
});
