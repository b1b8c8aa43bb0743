import { describe, expect, it } from 'vitest';
import type { CtRow, NodeRow, VmRow } from './model';
import { groupsOf, groupsOfSteps } from './tree-groups';

const vm = (i: number): VmRow =>
  ({ name: `vm-${i}`, namespace: `ns-${i % 4}`, node: i % 3 ? `n${i % 3}` : '', context: '' }) as VmRow;
const ct = (i: number): CtRow => ({ name: `ct-${i}`, namespace: `ns-${i % 5}`, node: i % 2 ? 'n1' : 'gone' }) as CtRow;
const nodes = [{ name: 'n2', ready: true } as NodeRow, { name: 'n1', ready: false } as NodeRow];

describe('groupsOf', () => {
  it('server view: nodes by name with their guests, a vanished node kept, unplaced apart', () => {
    const groups = groupsOf('server', [vm(0), vm(1), vm(2), vm(3)], [ct(1), ct(2)], nodes, '');
    expect(groups.map((g) => [g.key, g.vms.map((v) => v.name), g.cts.map((c) => c.name)])).toEqual([
      ['node:n1', ['vm-1'], ['ct-1']],
      ['node:n2', ['vm-2'], []],
      ['node:gone', [], ['ct-2']],
      ['unplaced', ['vm-0', 'vm-3'], []],
    ]);
  });

  it('in steps: yields every 2,048 guests and groups as groupsOf does, in both views and with a context', () => {
    const vms = Array.from({ length: 9000 }, (_, i) => vm(i));
    const cts = Array.from({ length: 3000 }, (_, i) => ct(i));
    for (const view of ['server', 'namespace'] as const)
      for (const context of ['', 'lab']) {
        const steps = groupsOfSteps(view, vms, cts, nodes, context);
        let yields = 0;
        let r = steps.next();
        for (; !r.done; r = steps.next()) yields++;
        expect(yields).toBe(Math.floor(vms.length / 2048) + Math.floor(cts.length / 2048));
        expect(r.value).toEqual(groupsOf(view, vms, cts, nodes, context));
        expect(r.value.reduce((n, g) => n + g.vms.length + g.cts.length, 0)).toBe(vms.length + cts.length);
      }
  });
});
