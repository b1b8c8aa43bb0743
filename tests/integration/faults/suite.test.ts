/**
 * The fault suite (issue 14): each fault of the embedded cluster — hang, refuse, 500s, dropped watches, 410 on
 * resume, slow lists — against a running Corral with an open live.fleet subscription (what the UI holds), checking
 *   - stale marking: while the cluster is down the live feed says `ready: false` (the UI's "cluster unreachable"
 *     banner) and keeps the last known fleet;
 *   - honest /readyz: 200 within the grace period, 503 once the cluster has been down past it, 200 after;
 *   - recovery within 5 s of the fault clearing, with the changes made in the cluster during and after the fault
 *     visible in the live feed;
 *   - no accepted mutation lost silently: every mutation sent during the fault either returned an error or is in
 *     the cluster afterwards.
 * The 60 s hang with the socket count is hang-recovery.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from '../server/harness';
import { LiveClient, sleep } from './helpers';

const GRACE_MS = 1500;
const RECOVERY_MS = 5000;
const VM_KEY = 'kubevirt.io/virtualmachines';

let h: Harness;
let live: LiveClient;
let serial = 0;

beforeAll(async () => {
  h = await startHarness({ requestTimeoutMs: 1000, unreachableAfterMs: GRACE_MS });
  expect((await h.post('/api/vms', { name: 'target', image: 'fedora' })).status).toBe(201);
  live = await LiveClient.open(h);
  await eventually(() => live.vms.has('tailvm/target'), 5000, 'target in the live feed');
});
afterAll(async () => {
  await live?.close();
  await h?.close();
});

const tagsInCluster = (name = 'target'): string[] =>
  Object.keys(h.sim.store.get(VM_KEY, 'tailvm', name)?.metadata.labels ?? {})
    .filter((k) => k.startsWith('corral.dev/tag.'))
    .map((k) => k.slice('corral.dev/tag.'.length));

interface Attempt {
  tag: string;
  status: number;
  body: unknown;
}

/** Mutations sent while a fault is active, for the "never accepted and lost" check. */
async function mutate(count: number, prefix: string): Promise<Attempt[]> {
  const out: Attempt[] = [];
  for (let i = 0; i < count; i++) {
    const tag = `${prefix}-${++serial}`;
    const r = await h.post('/api/vms/tailvm/target/tags', { tag, on: true });
    out.push({ tag, status: r.status, body: r.body });
  }
  return out;
}

/** Every 2xx mutation is in the cluster and the live feed; every other answer is an `{"error"}` 4xx/5xx. */
async function noneLost(attempts: Attempt[]): Promise<void> {
  for (const a of attempts) {
    if (a.status >= 200 && a.status < 300) {
      expect(tagsInCluster(), `accepted tag ${a.tag} is in the cluster`).toContain(a.tag);
      await eventually(() => live.vms.get('tailvm/target')?.tags.includes(a.tag), RECOVERY_MS, `${a.tag} shown`);
    } else {
      expect(a.status, JSON.stringify(a)).toBeGreaterThanOrEqual(400);
      expect(a.body).toEqual({ error: expect.any(String) });
    }
  }
}

/** A change made in the cluster itself (another client, a controller) while Corral may not see it. */
function changeInCluster(label: string): void {
  h.sim.store.mutate(VM_KEY, 'tailvm', 'target', (vm) => {
    vm.metadata.labels = { ...vm.metadata.labels, [`corral.dev/tag.${label}`]: 'true' };
  });
}

/**
 * Compacts the history and drops every watch. A write to a kind Corral does not watch comes first, so every
 * watched kind's last resourceVersion is older than the compaction point (a client already at the newest
 * revision may still resume, as with etcd).
 */
function expireAll(): void {
  h.sim.store.create('/configmaps', {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `bump-${++serial}`, namespace: 'default' },
  });
  expectEveryWatch(h.sim.faults.expireWatches());
}

/**
 * A fault that ends watches reached all of them: one per informer (each cached kind, and two for pods:
 * virt-launcher and CT pods), plus the pools store's watch of its one ConfigMap, the task journal's watch of the
 * task ConfigMaps and the metrics share's watch of its ConfigMap when they are open (after an outage any of them
 * may still be in its ≤ 5 s back-off).
 */
function expectEveryWatch(ended: number): void {
  const informers = h.corral.cluster.cache.status().length;
  expect(ended).toBeGreaterThanOrEqual(informers);
  expect(ended).toBeLessThanOrEqual(informers + 3);
}

const readyz = async () => (await h.get('/readyz')).status;

/** Every kind has an open watch again (nothing backing off or reconnecting). */
async function allWatching(timeoutMs: number, what: string): Promise<void> {
  await eventually(
    () => h.corral.cluster.cache.status().every((s) => s.streaming),
    timeoutMs,
    `${what}: every watch open (${JSON.stringify(h.corral.cluster.cache.status().filter((s) => !s.streaming))})`,
  );
}

/**
 * An outage: the fault starts, readiness stays 200 inside the grace period and turns 503 past it, the live
 * feed is marked stale and keeps its data; mutations during it are recorded; then the fault clears and
 * everything must be current within RECOVERY_MS.
 */
async function outage(name: string, start: () => void, clear: () => void, mutations = 2): Promise<void> {
  const vmsBefore = live.vms.size;
  const t0 = Date.now();
  start();
  const attempts: Attempt[] = [];
  try {
    const early = await readyz();
    if (Date.now() - t0 < GRACE_MS / 2) expect(early, 'ready inside the grace period').toBe(200);
    attempts.push(...(await mutate(mutations, `${name}-during`)));
    await eventually(async () => (await readyz()) === 503, GRACE_MS + 5000, `${name}: readyz 503`);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(GRACE_MS - 100);
    await eventually(() => live.ready === false, 5000, `${name}: live feed marked stale`);
    expect(live.vms.size, 'the last known fleet stays').toBe(vmsBefore);
    // Reads the cache can answer keep working.
    const cached = await h.get('/api/vms');
    expect(cached.status).toBe(200);
    expect(cached.text).toContain('"name":"target"');
    changeInCluster(`${name}-in-cluster`);
  } finally {
    clear();
  }
  const cleared = Date.now();
  await eventually(async () => (await readyz()) === 200, RECOVERY_MS, `${name}: readyz 200 again`);
  await eventually(() => live.ready === true, RECOVERY_MS, `${name}: live feed current`);
  await eventually(
    () => live.vms.get('tailvm/target')?.tags.includes(`${name}-in-cluster`),
    RECOVERY_MS,
    `${name}: change made during the fault shown`,
  );
  await allWatching(RECOVERY_MS, name);
  expect(Date.now() - cleared, 'recovered within 5 s').toBeLessThanOrEqual(RECOVERY_MS + 500);
  await noneLost(attempts);
  const after = await mutate(1, `${name}-after`);
  expect(after[0]!.status).toBe(200);
  await eventually(
    () => live.vms.get('tailvm/target')?.tags.includes(after[0]!.tag),
    RECOVERY_MS,
    `${name}: change after the fault shown`,
  );
}

describe('fault suite: a running Corral with an open live feed', () => {
  // Each fault starts from a settled Corral: every watch open.
  beforeEach(async () => {
    await allWatching(10_000, 'before the fault');
  });

  it('hang: stale while hung, 503 past the grace, recovered within 5 s', async () => {
    await outage(
      'hang',
      () => {
        h.sim.faults.stopAnswering('hang');
        h.sim.faults.dropWatches();
      },
      () => h.sim.faults.resumeAnswering(),
    );
  });

  it('refuse: stale while refused, 503 past the grace, recovered within 5 s', async () => {
    await outage(
      'refuse',
      () => {
        h.sim.faults.stopAnswering('refuse');
        h.sim.faults.dropWatches();
      },
      () => h.sim.faults.resumeAnswering(),
    );
  });

  it('500s: every request failing is an outage; recovered within 5 s', async () => {
    await outage(
      'fail500',
      () => {
        h.sim.faults.failRequests(1, 500);
        h.sim.faults.dropWatches();
      },
      () => h.sim.faults.clear(),
    );
  });

  it('500s on a third of the requests: no accepted mutation is lost', async () => {
    h.sim.faults.failRequests(0.33, 500);
    let attempts: Attempt[];
    try {
      attempts = await mutate(12, 'flaky');
      h.sim.faults.dropWatches();
      await sleep(300);
    } finally {
      h.sim.faults.clear();
    }
    expect(attempts.some((a) => a.status === 200)).toBe(true);
    await noneLost(attempts);
    await eventually(async () => (await readyz()) === 200, RECOVERY_MS, 'readyz 200');
    // A partial fault need not stop the heartbeat, so the watches come back through their back-off (short here:
    // one or two failures each), not through the heartbeat's "answers again" retry.
    await allWatching(10_000, 'after the flaky phase');
  });

  it('dropped watches: resumed from the last resourceVersion (no relist), ready throughout, nothing missed', async () => {
    const listsBefore = h.corral.cluster.cache.status().reduce((n, s) => n + s.lists, 0);
    const attempts: Attempt[] = [];
    for (let i = 0; i < 4; i++) {
      // A stream that ends within a second of opening without delivering anything counts as a failure (a guard
      // against a proxy that closes every watch at once); these drops come after a second of streaming.
      await allWatching(RECOVERY_MS, `drop ${i}`);
      await sleep(1100);
      expectEveryWatch(h.sim.faults.dropWatches());
      changeInCluster(`dropped-${i}`);
      attempts.push(...(await mutate(1, 'dropped-api')));
      expect(await readyz()).toBe(200);
    }
    for (let i = 0; i < 4; i++)
      await eventually(
        () => live.vms.get('tailvm/target')?.tags.includes(`dropped-${i}`),
        RECOVERY_MS,
        `dropped-${i} shown`,
      );
    await noneLost(attempts);
    expect(attempts.every((a) => a.status === 200)).toBe(true);
    expect(live.ready).toBe(true);
    const listsAfter = h.corral.cluster.cache.status().reduce((n, s) => n + s.lists, 0);
    expect(listsAfter, 'watches resumed without listing again').toBe(listsBefore);
  });

  it('410 on resume: every watch lists again and catches up, including deletions it missed', async () => {
    expect((await h.post('/api/vms', { name: 'doomed', image: 'fedora' })).status).toBe(201);
    await eventually(() => live.vms.has('tailvm/doomed'), 5000, 'doomed shown');
    // Per informer, in the cache's order (two informers may watch one kind: launcher pods and CT pods).
    const before = h.corral.cluster.cache.status().map((s) => s.lists);
    expireAll();
    // Changes in the gap, before the watches are back: only a relist can show them.
    changeInCluster('expired-gap');
    h.sim.store.delete(VM_KEY, 'tailvm', 'doomed');
    const attempts = await mutate(1, 'expired-api');
    await eventually(
      () => live.vms.get('tailvm/target')?.tags.includes('expired-gap'),
      RECOVERY_MS,
      'change in the gap shown',
    );
    await eventually(() => !live.vms.has('tailvm/doomed'), RECOVERY_MS, 'deletion in the gap shown');
    await noneLost(attempts);
    const relisted = () =>
      h.corral.cluster.cache
        .status()
        .filter((s, i) => s.lists > (before[i] ?? 0))
        .map((s) => s.kind);
    await eventually(() => relisted().length === before.length, RECOVERY_MS, 'every informer relisted').catch(
      (err: unknown) => {
        throw new Error(`${String(err)}; relisted so far: ${relisted().join(', ')}`);
      },
    );
    await allWatching(RECOVERY_MS, 'after the relists');
    expect(await readyz()).toBe(200);
    // Settled: no relist loop afterwards.
    const settled = h.corral.cluster.cache.status().reduce((n, s) => n + s.lists, 0);
    await sleep(1500);
    expect(h.corral.cluster.cache.status().reduce((n, s) => n + s.lists, 0)).toBe(settled);
  });

  it('slow lists: relists take seconds, the cache keeps serving, changes arrive, writes are not lost', async () => {
    h.sim.faults.slowLists(2500);
    const attempts: Attempt[] = [];
    try {
      expireAll(); // every kind must list again, slowly
      changeInCluster('slow-gap');
      const expired = Date.now();
      const started = Date.now();
      const cached = await h.get('/api/vms');
      expect(cached.status).toBe(200);
      expect(Date.now() - started, 'served from the cache, not a slow list').toBeLessThan(1000);
      attempts.push(...(await mutate(2, 'slow')));
      await eventually(
        () => live.vms.get('tailvm/target')?.tags.includes('slow-gap'),
        10_000,
        'change arrives through the slow relist',
      );
      expect(Date.now() - expired, 'it came through a (slow) list').toBeGreaterThanOrEqual(2400);
    } finally {
      h.sim.faults.clear();
    }
    await noneLost(attempts);
    await eventually(async () => (await readyz()) === 200, RECOVERY_MS, 'readyz 200 after slow lists');
    await eventually(() => live.ready === true, RECOVERY_MS, 'live feed current after slow lists');
  });

  it('after all of it: every watch is up, nothing is backing off', () => {
    const status = h.corral.cluster.cache.status();
    expect(status.filter((s) => !s.streaming).map((s) => s.kind)).toEqual([]);
    expect(status.every((s) => s.downForMs === 0)).toBe(true);
  });
});
