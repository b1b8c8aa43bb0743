import { describe, expect, it } from 'vitest';
import { ProxmoxGapRegistry } from './proxmox-gaps';

describe('ProxmoxGapRegistry', () => {
  it('counts each method + shape, keeps the first example and the last caller, most requested first', () => {
    let t = Date.parse('2026-12-01T10:00:00Z');
    const reg = new ProxmoxGapRegistry(10, () => new Date((t += 1000)));
    expect(reg.note('GET', '/nodes/{node}/ceph', '/nodes/corral-1/ceph', 'root@pam!ci')).toBe('new');
    expect(reg.note('POST', '/nodes/{node}/qemu/{id}/foo', '/nodes/corral-1/qemu/100/foo', 'a@pve')).toBe('new');
    expect(reg.note('GET', '/nodes/{node}/ceph', '/nodes/corral-2/ceph', 'monitor@pve!ro')).toBe('known');
    const { gaps, dropped } = reg.report();
    expect(dropped).toBe(0);
    expect(gaps[0]).toEqual({
      method: 'GET',
      path: '/nodes/{node}/ceph',
      example: '/nodes/corral-1/ceph',
      count: 2,
      firstSeen: '2026-12-01T10:00:01.000Z',
      lastSeen: '2026-12-01T10:00:03.000Z',
      lastCaller: 'monitor@pve!ro',
    });
    expect(gaps[1]).toMatchObject({ method: 'POST', count: 1, lastCaller: 'a@pve' });
  });

  it('is bounded: beyond capacity new shapes are only counted as dropped, known ones still count', () => {
    const reg = new ProxmoxGapRegistry(2);
    reg.note('GET', '/a', '/a', 'x');
    reg.note('GET', '/b', '/b', 'x');
    expect(reg.note('GET', '/c', '/c', 'x')).toBe('dropped');
    expect(reg.note('GET', '/d', '/d', 'x')).toBe('dropped');
    expect(reg.note('GET', '/a', '/a', 'y')).toBe('known');
    const report = reg.report();
    expect(report.gaps.map((g) => g.path)).toEqual(['/a', '/b']);
    expect(report).toMatchObject({ dropped: 2, capacity: 2 });
  });

  it('keeps callers printable and short', () => {
    const reg = new ProxmoxGapRegistry();
    reg.note('GET', '/a', '/a', `evil\n${'x'.repeat(200)}`);
    const caller = reg.report().gaps[0]!.lastCaller;
    expect(caller).toMatch(/^evil\?x+$/);
    expect(caller.length).toBe(64);
  });
});
