import { describe, expect, it } from 'vitest';
import { crc32 } from './crc32';
import { VmidIndex, fallbackVmid, labelVmid, type VmRef } from './vmids';

/** Two names whose fallback ids collide, found once by brute force over a small alphabet. */
function collidingNames(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; ; i++) {
    const name = `vm-${i.toString(36)}`;
    const id = fallbackVmid(name);
    const other = seen.get(id);
    if (other) return [other, name];
    seen.set(id, name);
    if (i > 2_000_000) throw new Error('no collision found');
  }
}

describe('crc32', () => {
  it('is the IEEE checksum', () => {
    expect(crc32('')).toBe(0);
    expect(crc32('123456789')).toBe(0xcbf43926);
    expect(crc32('web')).toBe(crc32('web'));
  });
});

describe('fallbackVmid', () => {
  it('is the original Corral formula', () => {
    expect(fallbackVmid('web')).toBe(100 + (crc32('web') % 899999900));
    expect(fallbackVmid('web')).toBeGreaterThanOrEqual(100);
  });

  it('ignores labels that are not vmids', () => {
    expect(labelVmid('123')).toBe(123);
    expect(labelVmid('99')).toBeUndefined();
    expect(labelVmid('12a')).toBeUndefined();
    expect(labelVmid('1000000000')).toBeUndefined();
    expect(labelVmid(undefined)).toBeUndefined();
  });
});

describe('VmidIndex', () => {
  const web = { namespace: 'tailvm', name: 'web' };

  it('lets the label win and looks up both ways', () => {
    const idx = new VmidIndex();
    expect(idx.upsert({ ...web, label: '123' })).toBe(123);
    expect(idx.refOf(123)).toEqual(web);
    expect(idx.vmidOf(web)).toBe(123);
    expect(idx.isFree(123)).toBe(false);
  });

  it('gives unlabelled VMs the fallback id, stable across upserts', () => {
    const idx = new VmidIndex();
    const id = idx.upsert(web);
    expect(id).toBe(fallbackVmid('web'));
    expect(idx.upsert(web)).toBe(id);
  });

  it('moves the newcomer of a fallback collision to a free id and asks to label it', () => {
    const [a, b] = collidingNames();
    const assigned: Array<[VmRef, number]> = [];
    const idx = new VmidIndex((ref, vmid) => assigned.push([ref, vmid]));
    const first = idx.upsert({ namespace: 'n', name: a });
    const second = idx.upsert({ namespace: 'n', name: b });
    expect(first).toBe(fallbackVmid(a));
    expect(second).not.toBe(first);
    expect(second).toBe(100);
    expect(assigned).toEqual([[{ namespace: 'n', name: b }, 100]]);
    expect(idx.refOf(first)?.name).toBe(a);
    expect(idx.refOf(second)?.name).toBe(b);
  });

  it('keeps a VM and a CT of the same namespace/name apart: two entries, two ids, the CT asked to be labelled', () => {
    const assigned: Array<[VmRef, number]> = [];
    const idx = new VmidIndex((ref, vmid) => assigned.push([ref, vmid]));
    const vm = idx.upsert(web);
    const ct = idx.upsert({ ...web, kind: 'ct' });
    expect(vm).toBe(fallbackVmid('web'));
    expect(ct).toBe(100);
    expect(idx.refOf(vm)).toEqual(web);
    expect(idx.refOf(ct)).toEqual({ ...web, kind: 'ct' });
    expect(idx.vmidOf({ ...web, kind: 'ct' })).toBe(ct);
    expect(assigned).toEqual([[{ ...web, kind: 'ct' }, 100]]);
    // A CT's label wins over the VM's unpersisted fallback, and removing the CT leaves the VM alone.
    const other = idx.upsert({ namespace: 'tailvm', name: 'box', kind: 'ct', label: String(vm) });
    expect(other).toBe(vm);
    expect(idx.refOf(vm)).toEqual({ namespace: 'tailvm', name: 'box', kind: 'ct' });
    expect(idx.vmidOf(web)).not.toBe(vm);
    idx.remove({ ...web, kind: 'ct' });
    expect(idx.vmidOf(web)).toBeDefined();
    expect(idx.isFree(ct)).toBe(true);
  });

  it('separates same-named VMs in different namespaces', () => {
    const assigned: number[] = [];
    const idx = new VmidIndex((_ref, vmid) => assigned.push(vmid));
    const one = idx.upsert({ namespace: 'a', name: 'web' });
    const two = idx.upsert({ namespace: 'b', name: 'web' });
    expect(one).not.toBe(two);
    expect(assigned).toEqual([two]);
  });

  it('displaces an unlabelled fallback holder when a labelled VM claims the id', () => {
    const assigned: Array<[string, number]> = [];
    const idx = new VmidIndex((ref, vmid) => assigned.push([ref.name, vmid]));
    const fb = idx.upsert(web);
    expect(idx.upsert({ namespace: 'tailvm', name: 'db', label: String(fb) })).toBe(fb);
    expect(idx.refOf(fb)?.name).toBe('db');
    expect(idx.vmidOf(web)).toBe(100);
    expect(assigned).toEqual([['web', 100]]);
  });

  it('never puts two labelled VMs on one vmid: the later one moves', () => {
    const assigned: string[] = [];
    const idx = new VmidIndex((ref) => assigned.push(ref.name));
    idx.upsert({ namespace: 'n', name: 'orig', label: '500' });
    const copy = idx.upsert({ namespace: 'n', name: 'copy', label: '500' });
    expect(copy).not.toBe(500);
    expect(idx.refOf(500)?.name).toBe('orig');
    expect(assigned).toEqual(['copy']);
  });

  it('follows a relabel and frees the old id; remove frees too', () => {
    const idx = new VmidIndex();
    idx.upsert({ ...web, label: '200' });
    idx.upsert({ ...web, label: '201' });
    expect(idx.isFree(200)).toBe(true);
    expect(idx.refOf(201)).toEqual(web);
    idx.remove(web);
    expect(idx.isFree(201)).toBe(true);
    expect(idx.size).toBe(0);
  });

  it('hands out the lowest free id and honours reservations', () => {
    const idx = new VmidIndex();
    idx.upsert({ namespace: 'n', name: 'a', label: '100' });
    idx.upsert({ namespace: 'n', name: 'b', label: '101' });
    expect(idx.nextFree()).toBe(102);
    expect(idx.reserve(102)).toBe(true);
    expect(idx.reserve(102)).toBe(false);
    expect(idx.nextFree()).toBe(103);
    // The created VM arrives with the reserved id as its label: the reservation is fulfilled.
    expect(idx.upsert({ namespace: 'n', name: 'c', label: '102' })).toBe(102);
    idx.release(102);
    expect(idx.isFree(102)).toBe(false);
    expect(idx.nextFree(150)).toBe(150);
  });

  it('rebuilds independently of list order: labels first, then the oldest unlabelled', () => {
    const [a, b] = collidingNames();
    const sources = [
      { namespace: 'n', name: b, created: 2 },
      { namespace: 'n', name: a, created: 1 },
      { namespace: 'n', name: 'x', label: '100' },
    ];
    const idx1 = new VmidIndex();
    idx1.rebuild(sources);
    const idx2 = new VmidIndex();
    idx2.rebuild([...sources].reverse());
    for (const idx of [idx1, idx2]) {
      expect(idx.refOf(100)?.name).toBe('x');
      expect(idx.refOf(fallbackVmid(a))?.name).toBe(a);
      expect(idx.vmidOf({ namespace: 'n', name: b })).toBe(101);
    }
  });
});
