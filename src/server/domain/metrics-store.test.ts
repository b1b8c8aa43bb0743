import { describe, expect, it } from 'vitest';
import type { MetricsTick } from '../schemas/metrics';
import { FakeCluster, makeVm } from '../testing/fake-cluster';
import { createCorralServices } from './services';
import type { VmReading } from './metrics-store';

function setup() {
  const cluster = new FakeCluster();
  for (const name of ['a', 'b', 'c']) cluster.put('VirtualMachine', makeVm(name));
  const services = createCorralServices(cluster);
  const store = services.metricsStore;
  const ticks: MetricsTick[] = [];
  store.subscribe((t) => ticks.push(t));
  return { cluster, services, store, ticks };
}

const r = (name: string, node: string, cpu: number, mem = 1000): VmReading => ({
  namespace: 'tailvm',
  name,
  uid: `uid-${name}`,
  node,
  reading: { cpu, mem },
});

describe('metrics store', () => {
  it('sums over the VMs measured in the newest round, per node too, and tops them', () => {
    const { store, ticks, services } = setup();
    store.record(1000, [r('a', 'n1', 100), r('b', 'n1', 300), r('c', 'n2', 50)]);
    store.record(2000, [r('a', 'n1', 200), r('c', 'n2', 60)]); // b stopped
    // b's earlier point is not part of the sums any more: it does not run now.
    expect(store.sumHistory('hour')).toEqual([
      { t: 1000, cpu: 150, mem: 2000 },
      { t: 2000, cpu: 260, mem: 2000 },
    ]);
    expect(store.sumHistory('hour', 'n1')).toEqual([
      { t: 1000, cpu: 100, mem: 1000 },
      { t: 2000, cpu: 200, mem: 1000 },
    ]);
    expect(store.vmHistory('tailvm', 'b', 'hour')).toEqual([{ t: 1000, cpu: 300, mem: 1000 }]);
    expect(store.vmNow('tailvm', 'b').cpu).toBeNull();
    expect(store.top('cpu').map((row) => row.name)).toEqual(['a', 'c']);
    expect(store.top('cpu', 'n2')).toEqual([{ namespace: 'tailvm', name: 'c', node: 'n2', cpu: 60, mem: 1000 }]);
    expect(store.top('cpu', undefined, 1)).toHaveLength(1);
    expect(ticks.at(-1)).toEqual({
      type: 'metrics',
      t: 2000,
      stale: false,
      fleet: { t: 2000, cpu: 260, mem: 2000 },
      nodes: [
        { name: 'n1', point: { t: 2000, cpu: 200, mem: 1000 } },
        { name: 'n2', point: { t: 2000, cpu: 60, mem: 1000 } },
      ],
    });
    services.close();
  });

  it('drops the series of a deleted VM and starts afresh for a VM re-created under the same name', async () => {
    const { cluster, store, services } = setup();
    store.record(1000, [r('a', 'n1', 100), r('b', 'n1', 300)]);
    await cluster.remove('VirtualMachine', 'tailvm', 'b');
    store.record(2000, [r('a', 'n1', 100)]);
    expect(store.size()).toBe(1);
    expect(store.vmHistory('tailvm', 'b', 'hour')).toEqual([]);
    store.record(3000, [{ ...r('a', 'n1', 7), uid: 'uid-a-2' }]);
    expect(store.vmHistory('tailvm', 'a', 'hour')).toEqual([{ t: 3000, cpu: 7, mem: 1000 }]);
    services.close();
  });

  it('turns stale when metrics-server stops answering, keeping the history, and says so once on the feed', () => {
    const { store, ticks, services } = setup();
    store.markStale(); // before any round (no metrics-server at all): stale, with nothing to announce on the feed
    expect(store.isStale()).toBe(true);
    expect(store.vmNow('tailvm', 'a')).toMatchObject({ t: null, cpu: null, stale: true });
    expect(ticks).toHaveLength(0);
    store.record(1000, [r('a', 'n1', 100)]);
    expect(store.isStale()).toBe(false);
    store.markStale();
    store.markStale();
    expect(store.isStale()).toBe(true);
    expect(ticks.filter((t) => t.stale)).toHaveLength(1);
    expect(store.vmNow('tailvm', 'a')).toMatchObject({ cpu: 100, stale: true });
    expect(store.vmHistory('tailvm', 'a', 'hour')).toHaveLength(1);
    store.record(2000, [r('a', 'n1', 100)]);
    expect(store.isStale()).toBe(false);
    services.close();
  });

  it('tells a follower its VM point after each round, and nothing for a VM not measured', () => {
    const { store, services } = setup();
    const seen: unknown[] = [];
    const stop = store.follow('tailvm', 'b', (e) => seen.push(e));
    store.record(1000, [r('a', 'n1', 1), r('b', 'n1', 2)]);
    store.record(2000, [r('a', 'n1', 1)]);
    stop();
    store.record(3000, [r('b', 'n1', 2)]);
    expect(seen).toEqual([
      { t: 1000, stale: false, point: { t: 1000, cpu: 2, mem: 1000 } },
      { t: 2000, stale: false },
    ]);
    services.close();
  });

  it('publishes each round on the live feed as one metrics event', () => {
    const { store, services } = setup();
    const events: string[] = [];
    services.live.subscribe((e) => events.push(e.event.type));
    store.record(1000, [r('a', 'n1', 1)]);
    expect(events).toEqual(['metrics']);
    services.close();
  });
});
