import { describe, expect, it } from 'vitest';
import { matchesFilter, parseFilter } from './filter-query';
import { bulkTarget, ctGuest, ctKey, guestKey, vmGuest } from './guest-rows';
import type { CtRow, VmRow } from './model';

const vm = {
  name: 'box',
  namespace: 'tailvm',
  status: 'Running',
  node: 'n1',
  cpu: 2,
  mem: '4Gi',
  ip: '10.0.0.2',
  tags: ['prod'],
  template: false,
} as VmRow;
const ct: CtRow = {
  context: 'home',
  name: 'box',
  namespace: 'tailvm',
  node: '',
  phase: 'Pending',
  ready: false,
  image: 'debian:bookworm',
  cpu: 1,
  mem: '512Mi',
  privileged: false,
  disk: '8Gi',
  storageClass: '',
  ip: '',
  createdAt: '',
  reason: 'ImagePullBackOff: no such image',
  diskUsage: null,
};

describe('guest rows', () => {
  it('gives a VM and a CT of the same name different keys, types and links', () => {
    const v = vmGuest(vm);
    const c = ctGuest(ct);
    expect(v).toMatchObject({ type: 'vm', key: 'tailvm/box', href: '/vms/tailvm/box', tags: ['prod'] });
    expect(c).toMatchObject({ type: 'ct', key: ctKey('tailvm', 'box'), href: '/cts/tailvm/box', tags: [] });
    expect(c.key).toBe('ct:tailvm/box');
  });

  it("takes a CT's phase as its status and colours the dot by the reason its pod cannot start", () => {
    expect(ctGuest(ct)).toMatchObject({ status: 'Pending', dot: 'ImagePullBackOff', cpu: 1, mem: '512Mi' });
    expect(ctGuest({ ...ct, reason: '', phase: 'Running' }).dot).toBe('Running');
  });

  it('feeds the filter language: type:ct keeps only CTs, status: matches the phase', () => {
    const rows = [vmGuest(vm), ctGuest(ct)];
    const keep = (q: string) => rows.filter((r) => matchesFilter(parseFilter(q), r)).map((r) => r.type);
    expect(keep('type:ct')).toEqual(['ct']);
    expect(keep('type:vm')).toEqual(['vm']);
    expect(keep('status:pending')).toEqual(['ct']);
    expect(keep('box')).toEqual(['vm', 'ct']);
  });

  it('turns a row into the bulk procedure target, with its cluster', () => {
    expect(bulkTarget(ctGuest(ct))).toEqual({ type: 'ct', namespace: 'tailvm', name: 'box', context: 'home' });
    expect(bulkTarget(vmGuest(vm))).toEqual({ type: 'vm', namespace: 'tailvm', name: 'box' });
  });

  it("keys namesakes on two clusters apart: the default cluster's keys stay plain, another's name its cluster", () => {
    const home = vmGuest({ ...vm, context: 'home' }, 'home');
    const lab = vmGuest({ ...vm, context: 'lab' }, 'home');
    expect(home).toMatchObject({ key: 'tailvm/box', cluster: '', context: 'home' });
    expect(lab).toMatchObject({
      key: 'lab//tailvm/box',
      cluster: 'lab',
      context: 'lab',
      href: '/vms/tailvm/box?context=lab',
    });
    expect(ctGuest({ ...ct, context: 'lab' }, 'home')).toMatchObject({ key: 'ct:lab//tailvm/box', cluster: 'lab' });
    expect(guestKey({ type: 'ct', namespace: 'tailvm', name: 'box', context: 'home' }, 'home')).toBe('ct:tailvm/box');
    // A selection of lab's row acts on lab's VM, not home's.
    expect(bulkTarget(lab)).toEqual({ type: 'vm', namespace: 'tailvm', name: 'box', context: 'lab' });
  });
});
