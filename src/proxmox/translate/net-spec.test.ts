import { describe, expect, it } from 'vitest';
import { NetSpecError, formatNet, parseNetKey, parseNetSpec, stableMac } from './net-spec';

describe('parseNetSpec', () => {
  it('reads the PVE answer form model=MAC', () => {
    expect(parseNetSpec('virtio=bc:24:11:aa:bb:cc,bridge=vmbr0,firewall=1,tag=5')).toEqual({
      model: 'virtio',
      mac: 'BC:24:11:AA:BB:CC',
      bridge: 'vmbr0',
      options: { firewall: '1', tag: '5' },
    });
  });

  it("reads bpg's model=…,macaddr=… form", () => {
    expect(parseNetSpec('model=e1000,bridge=vmbr0,firewall=0,macaddr=02:00:00:00:00:01')).toEqual({
      model: 'e1000',
      mac: '02:00:00:00:00:01',
      bridge: 'vmbr0',
      options: { firewall: '0' },
    });
  });

  it('reads a bare model without a MAC', () => {
    expect(parseNetSpec('virtio,bridge=vmbr0')).toEqual({ model: 'virtio', bridge: 'vmbr0', options: {} });
  });

  it.each([
    ['bridge=vmbr0', /missing network model/],
    ['ne3000,bridge=vmbr0', /unsupported network model/],
    ['virtio=zz:00:00:00:00:00', /invalid MAC/],
    ['virtio=01:00:00:00:00:00', /multicast/],
    ['virtio,bridge=a b', /invalid bridge/],
  ])('rejects %j', (text, message) => {
    expect(() => parseNetSpec(text)).toThrow(NetSpecError);
    expect(() => parseNetSpec(text)).toThrow(message);
  });
});

describe('formatNet', () => {
  it('puts model=MAC first, then bridge, then sorted options (Ansible regex =(.*?), finds the MAC)', () => {
    const line = formatNet({
      model: 'virtio',
      mac: 'BC:24:11:01:02:03',
      bridge: 'vmbr0',
      options: { tag: '5', firewall: '1' },
    });
    expect(line).toBe('virtio=BC:24:11:01:02:03,bridge=vmbr0,firewall=1,tag=5');
    expect(/=(.*?),/.exec(line)?.[1]).toBe('BC:24:11:01:02:03');
    expect(parseNetSpec(line).mac).toBe('BC:24:11:01:02:03');
  });
});

describe('stableMac', () => {
  it('is deterministic per VM and slot, unicast, under the Proxmox OUI', () => {
    const a = stableMac('tailvm', 'web', 0);
    expect(a).toBe(stableMac('tailvm', 'web', 0));
    expect(a).not.toBe(stableMac('tailvm', 'web', 1));
    expect(a).not.toBe(stableMac('other', 'web', 0));
    expect(a).toMatch(/^BC:24:11(:[0-9A-F]{2}){3}$/);
  });
});

describe('parseNetKey', () => {
  it('accepts net0…net31', () => {
    expect(parseNetKey('net0')).toBe(0);
    expect(parseNetKey('net31')).toBe(31);
    expect(parseNetKey('net32')).toBeUndefined();
    expect(parseNetKey('net01')).toBeUndefined();
    expect(parseNetKey('scsi0')).toBeUndefined();
  });
});
