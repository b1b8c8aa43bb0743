import { describe, expect, it } from 'vitest';
import { FakeCluster, makeVmi } from '../testing/fake-cluster';
import { IoCounters } from './io-counters';
import { createCorralServices } from './services';

const T0 = Date.parse('2026-12-01T12:00:00Z');

function vmi(name: string, uid: string, startedAt = T0 - 60_000) {
  const o = makeVmi(name, 'tailvm', {
    phaseTransitionTimestamps: [{ phase: 'Running', phaseTransitionTimestamp: new Date(startedAt).toISOString() }],
  });
  o.metadata.uid = uid;
  return o;
}

const reading = (name: string, uid: string, netin: number, diskwrite?: number) => ({
  namespace: 'tailvm',
  name,
  uid,
  node: 'corral-1',
  reading: { cpu: 100, mem: 1e6, netin, netout: netin / 2, ...(diskwrite !== undefined ? { diskwrite } : {}) },
});

describe('IoCounters', () => {
  it('integrates the store’s rates per round, never goes down, and restarts from 0 with a new instance', async () => {
    const cluster = new FakeCluster();
    const services = createCorralServices(cluster);
    const counters = new IoCounters(services.deps, services.metricsStore);
    const store = services.metricsStore;
    store.record(T0 - 15_000, []);
    // The instance starts 5 s before the next round: its first rates cover those 5 s.
    cluster.put('VirtualMachineInstance', vmi('web', 'vmi-1', T0 - 5_000));
    store.record(T0, [reading('web', 'vm-uid', 1000, 200)]);
    expect(counters.totals('tailvm', 'web')).toEqual({ netin: 5000, netout: 2500, diskread: 0, diskwrite: 1000 });
    // 15 s at 2000 B/s in, no disk reading this round (absent adds nothing).
    store.record(T0 + 15_000, [reading('web', 'vm-uid', 2000)]);
    expect(counters.totals('tailvm', 'web')).toEqual({ netin: 35_000, netout: 17_500, diskread: 0, diskwrite: 1000 });
    // A round without the VM measured (metrics-server hiccup for it): nothing added, nothing lost.
    store.record(T0 + 30_000, []);
    expect(counters.totals('tailvm', 'web').netin).toBe(35_000);
    // Stale (metrics-server away): ignored.
    store.markStale();
    expect(counters.totals('tailvm', 'web').netin).toBe(35_000);

    // A restart is a new VMI: counting starts again from its start.
    await cluster.remove('VirtualMachineInstance', 'tailvm', 'web');
    cluster.put('VirtualMachineInstance', vmi('web', 'vmi-2', T0 + 40_000));
    store.record(T0 + 45_000, [reading('web', 'vm-uid', 100)]);
    expect(counters.totals('tailvm', 'web')).toEqual({ netin: 500, netout: 250, diskread: 0, diskwrite: 0 });

    // Stopped (instance gone): zeros, and the entry is forgotten.
    await cluster.remove('VirtualMachineInstance', 'tailvm', 'web');
    store.record(T0 + 60_000, []);
    expect(counters.totals('tailvm', 'web')).toEqual({ netin: 0, netout: 0, diskread: 0, diskwrite: 0 });
    counters.close();
    services.close();
  });

  it('integrates the raw rates, not the rings’ 16-bit codes', async () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachineInstance', vmi('exact', 'vmi-x'));
    const services = createCorralServices(cluster);
    const counters = new IoCounters(services.deps, services.metricsStore);
    services.metricsStore.record(T0, [reading('exact', 'x', 12_345)]);
    services.metricsStore.record(T0 + 10_000, [reading('exact', 'x', 12_345)]);
    // 12,345 B/s is stored as 12,344 in the rings (10 mantissa bits); the counter keeps the rate as measured.
    expect(services.metricsStore.vmNow('tailvm', 'exact').netin).toBe(12_344);
    expect(counters.totals('tailvm', 'exact').netin).toBe(123_450);
    counters.close();
    services.close();
  });

  it('counts a VM that already ran when Corral started from Corral’s first round, not from its start', () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachineInstance', vmi('old', 'vmi-old', T0 - 86_400_000));
    const services = createCorralServices(cluster);
    const counters = new IoCounters(services.deps, services.metricsStore);
    services.metricsStore.record(T0, [reading('old', 'old-uid', 1000)]);
    expect(counters.totals('tailvm', 'old').netin).toBe(0);
    services.metricsStore.record(T0 + 10_000, [reading('old', 'old-uid', 1000)]);
    expect(counters.totals('tailvm', 'old').netin).toBe(10_000);
    counters.close();
    services.close();
  });
});
