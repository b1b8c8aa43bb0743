import { describe, expect, it } from 'vitest';
import type { FleetEvent } from '../schemas/live';
import type { VmRow } from '../schemas/vms';
import { coalesceEvents, coalesceFrame } from './live-coalesce';

const vm = (name: string, status: string) =>
  ({ type: 'vm', op: 'upsert', vm: { namespace: 'ns', name, status } as VmRow }) as FleetEvent;
const gone = (name: string): FleetEvent => ({ type: 'vm', op: 'delete', namespace: 'ns', name });

describe('coalesceEvents', () => {
  it('keeps the newest change per row, in the order of those newest changes', () => {
    const out = coalesceEvents([
      vm('a', 'Starting'),
      vm('b', 'Starting'),
      vm('a', 'Running'),
      gone('c'),
      vm('b', 'Running'),
      { type: 'ready', ready: false },
      { type: 'ready', ready: true },
    ]);
    expect(out).toEqual([vm('a', 'Running'), gone('c'), vm('b', 'Running'), { type: 'ready', ready: true }]);
  });

  it('a delete after an upsert wins, and an upsert after a delete brings the row back', () => {
    expect(coalesceEvents([vm('a', 'Running'), gone('a')])).toEqual([gone('a')]);
    expect(coalesceEvents([gone('a'), vm('a', 'Provisioning')])).toEqual([vm('a', 'Provisioning')]);
  });

  it('rows of different clusters are different rows; metrics rounds are all kept', () => {
    const inCtx = (ctx: string): FleetEvent =>
      ({
        type: 'vm',
        op: 'upsert',
        vm: { namespace: 'ns', name: 'a', context: ctx } as unknown as VmRow,
      }) as FleetEvent;
    expect(coalesceEvents([inCtx('one'), inCtx('two')])).toHaveLength(2);
    const tick = { type: 'metrics' } as unknown as FleetEvent;
    expect(coalesceEvents([tick, tick])).toHaveLength(2);
  });
});

describe('coalesceFrame', () => {
  it('one event is sent as itself; several as one batch under the last id; earlier batches are opened up', () => {
    expect(coalesceFrame([])).toBeUndefined();
    expect(coalesceFrame([{ id: 'e-1', event: vm('a', 'Running') }])).toEqual({ id: 'e-1', event: vm('a', 'Running') });
    const frame = coalesceFrame([
      { id: 'e-1', event: { type: 'batch', events: [vm('a', 'Starting'), vm('b', 'Starting')] } },
      { id: 'e-2', event: vm('a', 'Running') },
      { id: 'e-3', event: vm('c', 'Running') },
    ]);
    expect(frame).toEqual({
      id: 'e-3',
      event: { type: 'batch', events: [vm('b', 'Starting'), vm('a', 'Running'), vm('c', 'Running')] },
    });
    // Changes of one row only: the newest, unwrapped.
    expect(
      coalesceFrame([
        { id: 'e-4', event: vm('a', 'Stopping') },
        { id: 'e-5', event: vm('a', 'Stopped') },
      ]),
    ).toEqual({ id: 'e-5', event: vm('a', 'Stopped') });
  });
});
