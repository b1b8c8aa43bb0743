import { describe, expect, it } from 'vitest';
import { LeaseObserver, microTime, replicaLeaseName } from './leases';
import { taskConfigMapName, taskFromConfigMap } from './task-store';

describe('LeaseObserver', () => {
  it('expires a record only after watching it unchanged for the lease duration, on the local clock', () => {
    let now = 1_000_000;
    const o = new LeaseObserver(() => now);
    // The record's renewTime is far in the past by the local clock: skew alone never expires it.
    const spec = { holderIdentity: 'a', renewTime: '2000-01-01T00:00:00.000000Z', leaseDurationSeconds: 2 };
    expect(o.expired('l', spec)).toBe(false);
    now += 1999;
    expect(o.expired('l', spec)).toBe(false);
    now += 1;
    expect(o.expired('l', spec)).toBe(true);
    // A renewal resets the clock.
    expect(o.expired('l', { ...spec, renewTime: '2000-01-01T00:00:01.000000Z' })).toBe(false);
    now += 1000;
    expect(o.expired('l', { ...spec, renewTime: '2000-01-01T00:00:01.000000Z' })).toBe(false);
  });
});

describe('names and records', () => {
  it('spells MicroTime with microseconds and Lease names as DNS subdomains', () => {
    expect(microTime(new Date('2026-12-01T10:00:00.123Z'))).toBe('2026-12-01T10:00:00.123000Z');
    expect(replicaLeaseName('Corral-7f9c_pod.ab12')).toBe('corral-replica-corral-7f9c-pod-ab12');
  });

  it('names a task ConfigMap after its id, with a checksum when the id had to change', () => {
    expect(taskConfigMapName('start-web-1712345678-ab.3')).toBe('corral-task-start-web-1712345678-ab.3');
    const odd = taskConfigMapName('Bulk_Run-x-1-2');
    expect(odd).toMatch(/^corral-task-bulk-run-x-1-2-[0-9a-f]+$/);
    expect(odd).not.toBe(taskConfigMapName('bulk-run-x-1-2'));
  });

  it('reads a task back from its ConfigMap and ignores what is not one', () => {
    const meta = { id: 'x-1', action: 'x', target: 'ns/y', caller: 'z', status: 'done', progress: 100, error: '' };
    const cm = {
      metadata: { name: 'corral-task-x-1' },
      data: {
        'task.json': JSON.stringify({ ...meta, startedAt: '2026-12-01T10:00:00.000Z', endedAt: null }),
        log: 'a\nb',
      },
    };
    expect(taskFromConfigMap(cm)).toMatchObject({ ...meta, log: 'a\nb' });
    expect(taskFromConfigMap({ metadata: {}, data: { 'task.json': '{' } })).toBeUndefined();
    expect(taskFromConfigMap({ metadata: {}, data: { 'task.json': '{"id":1}' } })).toBeUndefined();
  });
});
