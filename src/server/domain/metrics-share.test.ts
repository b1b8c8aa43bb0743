import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CorralError } from '../errors';
import type { ClusterPort, KObject, MetricsReadings, SharedSample, WatchChange } from './cluster-port';
import { METRICS_SHARE_NAME, MetricsShare, encodeSample, sampleFromConfigMap } from './metrics-share';

const round = (t: number, pods = 1): SharedSample => ({
  t,
  pods: Object.fromEntries(
    Array.from({ length: pods }, (_, i) => [
      `tailvm/virt-launcher-vm-${i}-abcde`,
      {
        total: { cpuCores: 0.25, memoryBytes: 2 ** 30 },
        containers: { compute: { cpuCores: 0.2, memoryBytes: 2 ** 29 } },
      },
    ]),
  ),
  nodes: { 'corral-1': { cpuCores: 1, memoryBytes: 2 ** 32 } },
  io: { 'tailvm/virt-launcher-vm-0-abcde': { netin: 10, netout: 20 } },
  volumes: {},
});

/** A sampler and an apiserver holding one ConfigMap, whose watch hands every write to `watchers`. */
function fakes() {
  let sample: SharedSample | undefined;
  const sampleListeners = new Set<(ok: boolean) => void>();
  const imported: (SharedSample | undefined)[] = [];
  const metrics: MetricsReadings = {
    pod: () => undefined,
    node: () => undefined,
    sampledAt: () => sample?.t ?? 0,
    onSample: (l) => (sampleListeners.add(l), () => sampleListeners.delete(l)),
    exportSample: () => sample,
    importSample: (s) => void imported.push(s),
  };
  let stored: KObject | undefined;
  const watchers = new Set<(c: WatchChange) => void>();
  const writes: string[] = [];
  const save = (cm: KObject) => {
    stored = cm;
    for (const w of watchers) w({ type: 'MODIFIED', object: cm });
    return Promise.resolve(cm);
  };
  const cluster = {
    metrics,
    listPage: () => Promise.resolve({ items: stored ? [stored] : [], resourceVersion: '1' }),
    watch: (_k: unknown, _o: unknown, onChange: (c: WatchChange) => void, signal: AbortSignal) => {
      watchers.add(onChange);
      return new Promise((resolve) =>
        signal.addEventListener('abort', () => (watchers.delete(onChange), resolve('closed'))),
      );
    },
    patch: (_k: unknown, _ns: unknown, _name: string, body: { metadata: KObject['metadata']; binaryData: unknown }) => {
      writes.push('patch');
      if (!stored) return Promise.reject(new CorralError('NOT_FOUND', 'configmaps "corral-metrics-sample" not found'));
      return save({ ...stored, metadata: { ...stored.metadata, ...body.metadata }, binaryData: body.binaryData });
    },
    create: (_k: unknown, cm: KObject) => (writes.push('create'), save(cm)),
  } as unknown as ClusterPort;
  return {
    cluster,
    imported,
    writes,
    stored: () => stored,
    emit: (s: SharedSample) => {
      sample = s;
      for (const l of sampleListeners) l(true);
    },
  };
}

// The clock is the test's: the interval bound is counted in simulated milliseconds, never raced against real time.
const sleep = (ms: number) => vi.advanceTimersByTimeAsync(ms);
beforeEach(() => void vi.useFakeTimers());
afterEach(() => void vi.useRealTimers());

describe('MetricsShare', () => {
  it('the leader writes at most once per interval, with the newest round; a follower takes it as its own', async () => {
    const f = fakes();
    const logs: string[] = [];
    const leader = new MetricsShare(f.cluster, {
      namespace: 'tailvm',
      identity: 'lead',
      isLeader: () => true,
      minWriteMs: 200,
      log: (l) => logs.push(l),
    });
    const follower = new MetricsShare(f.cluster, {
      namespace: 'tailvm',
      identity: 'follow',
      isLeader: () => false,
      minWriteMs: 200,
    });
    leader.start();
    follower.start();
    await sleep(20);
    // Ten rounds within ~100 ms: one write at once, one trailing write with the tenth.
    for (let i = 1; i <= 10; i++) {
      f.emit(round(1000 + i));
      await sleep(10);
    }
    await sleep(300);
    expect(f.writes).toEqual(['patch', 'create', 'patch']);
    expect(sampleFromConfigMap(f.stored()!)?.t).toBe(1010);
    expect(f.stored()!.metadata.name).toBe(METRICS_SHARE_NAME);
    expect(f.imported.map((s) => s?.t)).toEqual([1001, 1010]);
    expect(f.imported[1]).toEqual(round(1010));
    expect(logs).toEqual([]);
    // Silence for three intervals: the follower forgets the readings rather than show old ones.
    await sleep(800);
    expect(f.imported.at(-1)).toBeUndefined();
    leader.close();
    follower.close();
  });

  it('does not write a round over the size bound, and says so once', async () => {
    const f = fakes();
    const logs: string[] = [];
    const leader = new MetricsShare(f.cluster, {
      namespace: 'tailvm',
      identity: 'lead',
      isLeader: () => true,
      minWriteMs: 100,
      maxBytes: 1000,
      log: (l) => logs.push(l),
    });
    leader.start();
    expect(encodeSample(round(1, 1)).length).toBeLessThan(1000);
    expect(encodeSample(round(1, 500)).length).toBeGreaterThan(1000);
    f.emit(round(1, 500));
    await sleep(150);
    f.emit(round(2, 500));
    await sleep(150);
    expect(f.writes).toEqual([]);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatch(/a round of 500 pods is \d+ bytes compressed, over 1000/);
    f.emit(round(3, 1));
    await sleep(150);
    expect(f.writes).toEqual(['patch', 'create']);
    leader.close();
  });
});
