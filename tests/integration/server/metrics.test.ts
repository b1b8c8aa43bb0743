/**
 * The metrics store through /api and tRPC on the embedded cluster (api.md "…/metrics", "…/metrics/history",
 * "/api/metrics/history", "/api/nodes/{name}/metrics/history", "/api/metrics/top"), with the sampling interval
 * shortened to 250 ms: histories grow at that interval with network and disk rates, day points average the hour
 * points, fleet and node sums equal their VMs, top orders/filters/limits, bad input is a 400 naming the allowed
 * values, a stopped VM has an empty history, an outage marks the store stale and keeps what it held, and new points
 * reach the live feed and a VM's follow subscription without polling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryPoint, MetricsFollowEvent, MetricsTick, TopRow, VmMetrics } from '@/server/schemas/metrics';
import { eventually, startHarness, type Harness } from './harness';

const INTERVAL_MS = 250;
let h: Harness;
beforeAll(async () => {
  process.env.CORRAL_METRICS_INTERVAL_MS = String(INTERVAL_MS);
  h = await startHarness({ fleet: 'demo', speed: 50 });
  // Every running demo VM measured, network and disk rates included (they need two kubelet readings).
  await eventually(
    async () => {
      const top = (await h.get('/api/metrics/top')).body as TopRow[];
      if (top.length < 5) return false;
      const points = await Promise.all(top.map((r) => history(r.namespace, r.name)));
      return points.every((p) => p.length >= 3 && p.at(-1)?.netin !== undefined && p.at(-1)?.diskread !== undefined);
    },
    20_000,
    'every running VM measured',
  );
}, 60_000);
afterAll(async () => {
  delete process.env.CORRAL_METRICS_INTERVAL_MS;
  await h?.close();
});

const history = async (namespace: string, name: string, window = 'hour') =>
  (await h.get(`/api/vms/${namespace}/${name}/metrics/history?window=${window}`)).body as HistoryPoint[];
const errorOf = (r: { body: unknown }) => (r.body as { error: string }).error;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Equal up to float summation order; both absent counts as equal. */
const close = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? a === b : Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/** The same round seen by every read: retried until the newest point did not move while reading. */
async function consistent<T>(read: () => Promise<T>, newest: () => Promise<number | undefined>): Promise<T> {
  for (let i = 0; i < 20; i++) {
    const before = await newest();
    const value = await read();
    if ((await newest()) === before) return value;
  }
  throw new Error('no quiet moment between two rounds');
}
const newestFleetT = async () => ((await h.get('/api/metrics/history')).body as HistoryPoint[]).at(-1)?.t;

describe('VM histories', () => {
  it('grow by one point per sampling interval, each with cpu, memory, network and disk', async () => {
    const before = await history('tailvm', 'web');
    await sleep(INTERVAL_MS * 8);
    const after = await history('tailvm', 'web');
    expect(after.length).toBeGreaterThanOrEqual(before.length + 4);
    const gaps = after.slice(1).map((p, i) => p.t - after[i]!.t);
    const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)]!;
    // Never two points within one interval; a loaded machine may stretch a round, not squeeze it.
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(INTERVAL_MS * 0.8);
    expect(median).toBeLessThan(INTERVAL_MS * 4);
    const last = after.at(-1)!;
    expect(last.cpu).toBeGreaterThan(0);
    expect(last.mem).toBeGreaterThan(256 * 2 ** 20); // guest memory in use plus the launcher's overhead
    for (const f of ['netin', 'netout', 'diskread', 'diskwrite'] as const) expect(last[f]).toBeGreaterThan(0);
    const now = (await h.get('/api/vms/tailvm/web/metrics')).body as VmMetrics;
    expect(now.stale).toBe(false);
    expect(now.cpu).toBeGreaterThan(0);
    expect(now.diskwrite).toBeGreaterThan(0);
  });

  it('day points are the averages of the hour points in their bucket (20 rounds)', async () => {
    await eventually(async () => (await history('tailvm', 'db', 'day')).length >= 2, 20_000, 'two day points');
    const [hour, day] = await consistent(
      async () => [await history('tailvm', 'db'), await history('tailvm', 'db', 'day')] as const,
      newestFleetT,
    );
    const full = day[day.length - 2]!; // a completed bucket
    const next = day[day.length - 1]!;
    const inBucket = hour.filter((p) => p.t >= full.t && p.t < next.t);
    expect(inBucket.length).toBeGreaterThan(10);
    expect(inBucket.length).toBeLessThanOrEqual(20);
    const mean = inBucket.reduce((s, p) => s + p.cpu, 0) / inBucket.length;
    expect(Math.abs(full.cpu - mean) / mean).toBeLessThan(0.002); // 16-bit values: ~3 significant digits
    expect((await history('tailvm', 'db', 'week')).length).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it('a VM that does not run has an empty history and null readings; an unknown VM is 404', async () => {
    expect(await history('tailvm', 'fedora-template')).toEqual([]);
    const now = (await h.get('/api/vms/tailvm/fedora-template/metrics')).body as VmMetrics;
    expect(now).toEqual({
      t: null,
      cpu: null,
      mem: null,
      netin: null,
      netout: null,
      diskread: null,
      diskwrite: null,
      stale: false,
    });
    const missing = await h.get('/api/vms/tailvm/no-such-vm/metrics/history');
    expect(missing.status).toBe(404);
    expect(errorOf(missing)).toContain('tailvm/no-such-vm');
    expect((await h.get('/api/vms/tailvm/no-such-vm/metrics')).status).toBe(404);
    expect((await h.get('/api/nodes/no-such-node/metrics/history')).status).toBe(404);
  });
});

describe('fleet and node histories', () => {
  it('are, point by point, the sums over the VMs that run now', async () => {
    const { fleet, nodes, vms } = await consistent(async () => {
      const top = (await h.get('/api/metrics/top')).body as TopRow[];
      const fleet = (await h.get('/api/metrics/history')).body as HistoryPoint[];
      const nodeNames = [...new Set(top.map((r) => r.node))];
      const nodes = new Map<string, HistoryPoint[]>();
      for (const n of nodeNames) nodes.set(n, (await h.get(`/api/nodes/${n}/metrics/history`)).body as HistoryPoint[]);
      const vms = await Promise.all(top.map(async (r) => ({ row: r, points: await history(r.namespace, r.name) })));
      return { fleet, nodes, vms };
    }, newestFleetT);
    expect(vms.length).toBeGreaterThanOrEqual(5);
    expect(nodes.size).toBeGreaterThanOrEqual(2);
    const sumAt = (t: number, node?: string) => {
      const sum: Record<string, number> = {};
      for (const { row, points } of vms) {
        if (node !== undefined && row.node !== node) continue;
        const p = points.find((x) => x.t === t);
        if (!p) continue;
        for (const f of ['cpu', 'mem', 'netin', 'netout', 'diskread', 'diskwrite'] as const)
          if (p[f] !== undefined) sum[f] = (sum[f] ?? 0) + p[f];
      }
      return sum;
    };
    expect(fleet.length).toBeGreaterThan(5);
    for (const p of fleet) {
      const sum = sumAt(p.t);
      for (const f of ['cpu', 'mem', 'netin', 'diskwrite'] as const)
        expect(close(p[f], sum[f]), `fleet ${f} at ${p.t}: ${p[f]} vs ${sum[f]}`).toBe(true);
    }
    let nodeCpuTotal = 0;
    for (const [node, points] of nodes) {
      for (const p of points) {
        const sum = sumAt(p.t, node);
        expect(close(p.cpu, sum.cpu), `${node} cpu at ${p.t}`).toBe(true);
        expect(close(p.mem, sum.mem), `${node} mem at ${p.t}`).toBe(true);
      }
      nodeCpuTotal += points.at(-1)!.cpu;
    }
    expect(close(nodeCpuTotal, fleet.at(-1)!.cpu)).toBe(true);
  });
});

describe('top', () => {
  it('orders by cpu (default) or memory, busiest first, and filters by node and limit', async () => {
    const byCpu = (await h.get('/api/metrics/top')).body as TopRow[];
    expect(byCpu.length).toBeGreaterThanOrEqual(5);
    for (let i = 1; i < byCpu.length; i++) expect(byCpu[i - 1]!.cpu).toBeGreaterThanOrEqual(byCpu[i]!.cpu);
    expect(byCpu.map((r) => r.name)).not.toContain('fedora-template'); // stopped
    const byMem = (await h.get('/api/metrics/top?by=mem')).body as TopRow[];
    for (let i = 1; i < byMem.length; i++) expect(byMem[i - 1]!.mem!).toBeGreaterThanOrEqual(byMem[i]!.mem!);
    const node = byCpu[0]!.node;
    const onNode = (await h.get(`/api/metrics/top?node=${node}`)).body as TopRow[];
    expect(onNode.length).toBeGreaterThan(0);
    expect(onNode.every((r) => r.node === node)).toBe(true);
    expect(onNode.length).toBeLessThan(byCpu.length);
    const two = (await h.get('/api/metrics/top?by=mem&limit=2')).body as TopRow[];
    expect(two).toHaveLength(2);
    expect(two[0]!.mem).toBeGreaterThanOrEqual(two[1]!.mem!);
    expect((await h.get('/api/metrics/top?node=no-such-node')).body).toEqual([]);
  });

  it('refuses unknown window, by and limit values with a 400 naming what is allowed', async () => {
    const cases: [string, RegExp][] = [
      ['/api/metrics/history?window=month', /window.*"hour"\|"day"\|"week"/],
      ['/api/vms/tailvm/web/metrics/history?window=year', /window.*"hour"\|"day"\|"week"/],
      ['/api/nodes/corral-1/metrics/history?window=1h', /window.*"hour"\|"day"\|"week"/],
      ['/api/metrics/top?by=disk', /by.*"cpu"\|"mem"/],
      ['/api/metrics/top?limit=0', /limit.*at least 1/],
      ['/api/metrics/top?limit=5000', /limit.*at most 1000/],
      ['/api/metrics/top?limit=ten', /limit.*whole number from 1 to 1000/],
      ['/api/metrics/top?sort=cpu', /sort/],
    ];
    for (const [path, message] of cases) {
      const r = await h.get(path);
      expect(r.status, path).toBe(400);
      expect(errorOf(r), path).toMatch(message);
    }
  });
});

/** A tRPC SSE subscription read as raw frames (`data: {"json": …}`), until `until` says enough. */
async function readSse<T>(path: string, until: (events: T[]) => boolean, timeoutMs = 10_000): Promise<T[]> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutMs);
  const events: T[] = [];
  try {
    const res = await fetch(`${h.url}${path}`, { signal: abort.signal, headers: { accept: 'text/event-stream' } });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    while (!until(events)) {
      const { value, done } = await reader.read();
      if (done) break;
      buffered += value;
      let cut: number;
      while ((cut = buffered.indexOf('\n\n')) >= 0) {
        const frame = buffered.slice(0, cut);
        buffered = buffered.slice(cut + 2);
        const data = /^data: ?(.*)$/m.exec(frame)?.[1];
        const json = data ? (JSON.parse(data) as { json?: T }).json : undefined;
        if (json !== undefined && /^event: /m.test(frame) === false) events.push(json);
      }
    }
    return events;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

describe('live push', () => {
  it('live.fleet carries a small metrics event per round: fleet and per-node sums, no per-VM points', async () => {
    const events = await readSse<{ type: string }>(
      '/trpc/live.fleet',
      (e) => e.filter((x) => x.type === 'metrics').length >= 2,
    );
    const ticks = events.filter((e): e is MetricsTick => e.type === 'metrics');
    expect(ticks.length).toBeGreaterThanOrEqual(2);
    const tick = ticks[1]!;
    expect(tick.stale).toBe(false);
    expect(tick.fleet.t).toBe(tick.t);
    expect(tick.fleet.cpu).toBeGreaterThan(0);
    expect(tick.nodes.length).toBeGreaterThanOrEqual(2);
    const nodeCpu = tick.nodes.reduce((s, n) => s + n.point.cpu, 0);
    expect(close(nodeCpu, tick.fleet.cpu)).toBe(true);
    expect(Object.keys(tick).sort()).toEqual(['fleet', 'nodes', 'stale', 't', 'type']);
    // The same point the fleet history ends with once that round is the newest (or was, a moment ago).
    const fleet = (await h.get('/api/metrics/history')).body as HistoryPoint[];
    const same = fleet.find((p) => p.t === tick.t);
    expect(same && close(same.cpu, tick.fleet.cpu)).toBe(true);
  });

  it('metrics.follow hands an open VM page each new point of that VM', async () => {
    const input = encodeURIComponent(JSON.stringify({ json: { namespace: 'tailvm', name: 'web' } }));
    const events = await readSse<MetricsFollowEvent>(`/trpc/metrics.follow?input=${input}`, (e) => e.length >= 3);
    expect(events.length).toBeGreaterThanOrEqual(3);
    for (const e of events) {
      expect(e.stale).toBe(false);
      expect(e.point?.t).toBe(e.t);
      expect(e.point?.cpu).toBeGreaterThan(0);
    }
    expect(events[1]!.t).toBeGreaterThan(events[0]!.t);
    const hist = await history('tailvm', 'web');
    const p = hist.find((x) => x.t === events[2]!.t);
    expect(p).toEqual(events[2]!.point);
  });
});

describe('outages', () => {
  it('a metrics-server outage marks the store stale and keeps the history; it grows again afterwards', async () => {
    h.sim.faults.set({ failFraction: 1, failStatus: 503, pathPrefix: '/apis/metrics.k8s.io' });
    try {
      await eventually(
        async () => ((await h.get('/api/vms/tailvm/web/metrics')).body as VmMetrics).stale,
        10_000,
        'stale',
      );
      const held = await history('tailvm', 'web');
      const fleetHeld = (await h.get('/api/metrics/history')).body as HistoryPoint[];
      await sleep(INTERVAL_MS * 6);
      // Nothing recorded (no zeros), nothing lost.
      expect(await history('tailvm', 'web')).toEqual(held);
      expect((await h.get('/api/metrics/history')).body).toEqual(fleetHeld);
      expect(held.length).toBeGreaterThan(10);
      const now = (await h.get('/api/vms/tailvm/web/metrics')).body as VmMetrics;
      expect(now.stale).toBe(true);
      expect(now.cpu).toBe(held.at(-1)!.cpu); // the last numbers held, marked stale
      expect(((await h.get('/api/metrics/top')).body as TopRow[]).length).toBeGreaterThanOrEqual(5);
    } finally {
      h.sim.faults.clear();
    }
    await eventually(
      async () => !((await h.get('/api/vms/tailvm/web/metrics')).body as VmMetrics).stale,
      10_000,
      'fresh again',
    );
    const before = (await history('tailvm', 'web')).length;
    await sleep(INTERVAL_MS * 4);
    expect((await history('tailvm', 'web')).length).toBeGreaterThan(Math.min(before, 239));
  });

  it('kubelets that refuse their stats endpoints leave network and disk absent, cpu and memory go on', async () => {
    h.sim.faults.set({ failFraction: 1, failStatus: 403, pathPrefix: '/api/v1/nodes/' });
    try {
      const t0 = Date.now();
      await sleep(INTERVAL_MS * 4);
      const fresh = (await history('tailvm', 'web')).filter((p) => p.t > t0 + INTERVAL_MS);
      expect(fresh.length).toBeGreaterThan(0);
      for (const p of fresh) {
        expect(p.cpu).toBeGreaterThan(0);
        expect(p.mem).toBeGreaterThan(0);
        expect(p).not.toHaveProperty('netin');
        expect(p).not.toHaveProperty('diskwrite');
      }
      const now = (await h.get('/api/vms/tailvm/web/metrics')).body as VmMetrics;
      expect(now.netin).toBeNull();
      expect(now.cpu).toBeGreaterThan(0);
    } finally {
      h.sim.faults.clear();
    }
  });
});
