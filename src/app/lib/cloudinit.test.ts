import { describe, expect, it } from 'vitest';
import {
  ipConfigText,
  keySummary,
  lines,
  nicIndex,
  pendingLabel,
  pendingOf,
  words,
  type CloudInitView,
} from './cloudinit';

describe('cloud-init tab helpers', () => {
  it('prints an ipconfig as Proxmox does, skipping unset parts', () => {
    expect(ipConfigText({ ip: '10.0.0.5/24', gw: '10.0.0.1' })).toBe('ip=10.0.0.5/24,gw=10.0.0.1');
    expect(ipConfigText({ ip: 'dhcp', ip6: 'auto' })).toBe('ip=dhcp,ip6=auto');
    expect(ipConfigText(undefined)).toBe('');
  });

  it('finds a row’s pending change and says it without leaking a secret', () => {
    const view = {
      pending: [
        { key: 'ciuser', value: 'a', pending: 'b' },
        { key: 'cipassword', value: '**********', pending: '**********' },
        { key: 'searchdomain', value: 'x', delete: true },
      ],
    } as unknown as CloudInitView;
    expect(pendingLabel(pendingOf(view, 'ciuser')!)).toBe('b');
    expect(pendingLabel(pendingOf(view, 'cipassword')!, true)).toBe('changed');
    expect(pendingLabel(pendingOf(view, 'searchdomain')!)).toBe('removed');
    expect(pendingOf(view, 'nameserver')).toBeUndefined();
    const keys = encodeURIComponent('ssh-ed25519 AAAAC3NzaC1lZDI1 me@host\n');
    expect(pendingLabel({ key: 'sshkeys', value: '', pending: keys })).toBe('ssh-ed25519 AAAAC3NzaC1l… me@host');
  });

  it('splits key lines and DNS words, shortens keys, numbers NICs like Proxmox', () => {
    expect(lines(' ssh-ed25519 AAA a\n\n ssh-rsa BBB b \n')).toEqual(['ssh-ed25519 AAA a', 'ssh-rsa BBB b']);
    expect(words('1.1.1.1, 9.9.9.9  8.8.8.8')).toEqual(['1.1.1.1', '9.9.9.9', '8.8.8.8']);
    expect(keySummary('ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAA deploy@laptop')).toBe(
      'ssh-ed25519 AAAAC3NzaC1l… deploy@laptop',
    );
    expect(nicIndex('net2', 0)).toBe(2);
    expect(nicIndex('default', 1)).toBe(1);
  });
});
