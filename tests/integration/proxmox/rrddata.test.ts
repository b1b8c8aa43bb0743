/**
 * `rrddata` for VMs and nodes, and the cumulative I/O counters of status/current and /cluster/resources: the same
 * points the metrics store serves at /api/…/metrics/history, in PVE's field names and units, and counters that
 * integrate the store's rates and only grow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryPoint } from '@/server/schemas/metrics';
import { ADMIN_SECRET, VIEWER_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
const G = 1024 ** 3;

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  for (const [vmid, name, start] of [
    [730, 'graphs', true],
    [731, 'idle', false],
  ] as const) {
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid,
      name,
      memory: 1024,
      cores: 2,
      scsi0: 'local-lvm:1',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    if (start)
      expect(
        (await waitTask(api, (await api.post(`/nodes/corral-1/qemu/${vmid}/status/start`)).body.data as string))
          .exitstatus,
      ).toBe('OK');
  }
  // Sampling rounds until the store holds a few points of the running VM.
  const deadline = Date.now() + 30_000;
  while (h.corral.services.metricsStore.vmHistory('tailvm', 'graphs', 'hour').length < 3) {
    if (Date.now() > deadline) throw new Error('the store never recorded three rounds of the running VM');
    await h.corral.cluster.metrics.sampleNow();
    await new Promise((r) => setTimeout(r, 50));
  }
}, 90_000);
afterAll(async () => {
  await h?.close();
});

const rest = async <T>(path: string): Promise<T> => {
  const res = await fetch(`${h.corral.url}/api${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as T;
};

/** Reads Corral's history, the Proxmox answer, and the history again, until no round landed in between. */
async function aligned(historyPath: string, pvePath: string, params: Record<string, string>) {
  for (let attempt = 0; attempt < 10; attempt++) {
    const before = await rest<HistoryPoint[]>(historyPath);
    const answer = await api.get(pvePath, params);
    const after = await rest<HistoryPoint[]>(historyPath);
    if (JSON.stringify(before) === JSON.stringify(after)) return { history: after, answer };
  }
  throw new Error('a sampling round landed during every attempt');
}

const vmidNode = async (vmid: number) =>
  ((await api.get('/cluster/resources', { type: 'vm' })).body.data as { vmid: number; node: string }[]).find(
    (r) => r.vmid === vmid,
  )?.node ?? '';

describe('VM rrddata', () => {
  it('serves the store’s hour points as PVE fields: time in s, cpu over the vCPUs, mem/maxmem, maxcpu', async () => {
    const node = await vmidNode(730);
    const { history, answer } = await aligned(
      '/vms/tailvm/graphs/metrics/history?window=hour',
      `/nodes/${node}/qemu/730/rrddata`,
      {
        timeframe: 'hour',
      },
    );
    expect(answer.status).toBe(200);
    const points = answer.body.data as Record<string, number>[];
    expect(history.length).toBeGreaterThanOrEqual(3);
    expect(points.length).toBe(history.length);
    points.forEach((p, i) => {
      const want = history[i]!;
      expect(p.time).toBe(Math.floor(want.t / 1000));
      expect(p.cpu).toBeCloseTo(Math.min(1, want.cpu / 1000 / 2), 9);
      expect(p.maxcpu).toBe(2);
      expect(p.mem).toBe(want.mem);
      expect(p.maxmem).toBe(G);
      for (const k of ['netin', 'netout', 'diskread', 'diskwrite'] as const) expect(p[k]).toBe(want[k]);
    });
    expect(points.some((p) => (p.cpu ?? 0) > 0)).toBe(true);
  });

  it('maps day and week onto their rings, month/year onto week, and cf=MAX onto the same averages', async () => {
    const node = await vmidNode(730);
    const path = `/nodes/${node}/qemu/730/rrddata`;
    const day = await aligned('/vms/tailvm/graphs/metrics/history?window=day', path, { timeframe: 'day' });
    expect((day.answer.body.data as { time: number }[]).map((p) => p.time)).toEqual(
      day.history.map((p) => Math.floor(p.t / 1000)),
    );
    for (const timeframe of ['week', 'month', 'year']) {
      const week = await aligned('/vms/tailvm/graphs/metrics/history?window=week', path, { timeframe });
      const points = week.answer.body.data as { time: number; cpu: number }[];
      expect(points.length).toBe(week.history.length);
      expect(points.map((p) => p.time)).toEqual(week.history.map((p) => Math.floor(p.t / 1000)));
    }
    const avg = await aligned('/vms/tailvm/graphs/metrics/history?window=hour', path, {
      timeframe: 'hour',
      cf: 'AVERAGE',
    });
    const max = await aligned('/vms/tailvm/graphs/metrics/history?window=hour', path, { timeframe: 'hour', cf: 'MAX' });
    expect(max.answer.status).toBe(200);
    // The store keeps no maxima: MAX serves the averages (equal whenever no round landed between the two reads).
    if (JSON.stringify(avg.history) === JSON.stringify(max.history))
      expect(max.answer.body.data).toEqual(avg.answer.body.data);
  });

  it('answers [] for a VM without samples, and a Proxmox 400 naming a bad timeframe or cf', async () => {
    const idle = await api.get('/nodes/corral-1/qemu/731/rrddata', { timeframe: 'hour' });
    expect(idle.status).toBe(200);
    expect(idle.body.data).toEqual([]);

    const bad = await api.get('/nodes/corral-1/qemu/730/rrddata', { timeframe: 'decade' });
    expect(bad.status).toBe(400);
    expect(bad.reason).toBe('Parameter verification failed.');
    expect(bad.body.errors).toEqual({
      timeframe: "value 'decade' does not have a value in the enumeration 'hour, day, week, month, year'",
    });
    const missing = await api.get('/nodes/corral-1/qemu/730/rrddata');
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.errors ?? {})).toEqual(['timeframe']);
    const cf = await api.get('/nodes/corral-1/rrddata', { timeframe: 'hour', cf: 'LAST' });
    expect(cf.status).toBe(400);
    expect(cf.body.errors).toEqual({ cf: "value 'LAST' does not have a value in the enumeration 'AVERAGE, MAX'" });
    // A read-only token may read graphs (VM.Audit / Sys.Audit).
    const viewer = px(h.url, { token: `monitor@pve!ro=${VIEWER_SECRET}` });
    expect((await viewer.get('/nodes/corral-1/rrddata', { timeframe: 'hour' })).status).toBe(200);
    expect((await viewer.get('/nodes/corral-1/qemu/730/rrddata', { timeframe: 'hour' })).status).toBe(200);
    // Unknown VM: PVE's "does not exist".
    expect((await api.get('/nodes/corral-1/qemu/999/rrddata', { timeframe: 'hour' })).status).toBe(404);
  });
});

describe('node rrddata', () => {
  it('serves the node’s sums over its cores and memory, as /api/nodes/{n}/metrics/history has them', async () => {
    const node = await vmidNode(730);
    const status = (await api.get(`/nodes/${node}/status`)).body.data as {
      cpuinfo: { cpus: number };
      memory: { total: number };
    };
    const { history, answer } = await aligned(`/nodes/${node}/metrics/history?window=hour`, `/nodes/${node}/rrddata`, {
      timeframe: 'hour',
    });
    const points = answer.body.data as Record<string, number>[];
    expect(history.length).toBeGreaterThan(0);
    expect(points.length).toBe(history.length);
    points.forEach((p, i) => {
      const want = history[i]!;
      expect(p.time).toBe(Math.floor(want.t / 1000));
      expect(p.cpu).toBeCloseTo(Math.min(1, want.cpu / 1000 / status.cpuinfo.cpus), 9);
      expect(p.maxcpu).toBe(status.cpuinfo.cpus);
      expect(p.memused).toBe(want.mem);
      expect(p.memtotal).toBe(status.memory.total);
    });
    expect((await api.get('/nodes/nowhere/rrddata', { timeframe: 'hour' })).status).toBe(404);
  });
});

describe('I/O counters', () => {
  it('grow from the cluster’s own rates round after round, never going down', async () => {
    const node = await vmidNode(730);
    const current = async () =>
      (await api.get(`/nodes/${node}/qemu/730/status/current`)).body.data as Record<string, number>;
    const seen: Record<string, number>[] = [];
    const deadline = Date.now() + 30_000;
    // The kubelet's counters give rates from the second reading on; keep sampling until traffic has been counted.
    while (seen.length < 4 || !((seen.at(-1)?.netin ?? 0) > 0)) {
      if (Date.now() > deadline) throw new Error(`no traffic counted: ${JSON.stringify(seen.at(-1))}`);
      await new Promise((r) => setTimeout(r, 200));
      await h.corral.cluster.metrics.sampleNow();
      seen.push(await current());
    }
    const history = h.corral.services.metricsStore.vmHistory('tailvm', 'graphs', 'hour');
    expect(history.some((p) => (p.netin ?? 0) > 0)).toBe(true);
    for (let i = 1; i < seen.length; i++)
      for (const k of ['netin', 'netout', 'diskread', 'diskwrite'])
        expect(seen[i]![k]).toBeGreaterThanOrEqual(seen[i - 1]![k]!);
  });

  it('integrate the store’s rates into status/current, qemu rows and /cluster/resources, and only grow', async () => {
    const node = await vmidNode(730);
    const store = h.corral.services.metricsStore;
    const uid = h.corral.services.fleet.vmRow('tailvm', 'graphs')?.uid ?? '';
    const read = async () => {
      const current = (await api.get(`/nodes/${node}/qemu/730/status/current`)).body.data as Record<string, number>;
      const row = ((await api.get(`/nodes/${node}/qemu`)).body.data as Record<string, number>[]).find(
        (r) => r.vmid === 730,
      );
      const resource = (
        (await api.get('/cluster/resources', { type: 'vm' })).body.data as Record<string, number>[]
      ).find((r) => r.vmid === 730);
      const pick = (o: Record<string, number> | undefined) => ({
        netin: o?.netin,
        netout: o?.netout,
        diskread: o?.diskread,
        diskwrite: o?.diskwrite,
      });
      expect(pick(row)).toEqual(pick(current));
      expect(pick(resource)).toEqual(pick(current));
      return pick(current) as Record<'netin' | 'netout' | 'diskread' | 'diskwrite', number>;
    };
    const before = await read();
    for (const v of Object.values(before)) expect(Number.isInteger(v) && v >= 0).toBe(true);

    // Two rounds 10 s apart with known rates (the embedded kubelet serves no I/O rates of its own yet). Their times
    // lie a minute ahead, so a timer round of the sampler in between cannot split the interval.
    const t1 = Date.now() + 60_000;
    const reading = (netin: number) => ({
      namespace: 'tailvm',
      name: 'graphs',
      uid,
      node,
      reading: { cpu: 250, mem: 512 * 1024 ** 2, netin, netout: netin / 2, diskread: 2 * netin, diskwrite: 4 * netin },
    });
    store.record(t1, [reading(1000)]);
    const mid = await read();
    store.record(t1 + 10_000, [reading(1000)]);
    const after = await read();
    expect(after.netin - mid.netin).toBe(10_000);
    expect(after.netout - mid.netout).toBe(5_000);
    expect(after.diskread - mid.diskread).toBe(20_000);
    expect(after.diskwrite - mid.diskwrite).toBe(40_000);
    for (const k of ['netin', 'netout', 'diskread', 'diskwrite'] as const) {
      expect(mid[k]).toBeGreaterThanOrEqual(before[k]);
      expect(after[k]).toBeGreaterThan(mid[k]);
    }

    // A round with no traffic and a round without the VM measured add nothing and take nothing away.
    store.record(t1 + 20_000, [reading(0)]);
    store.record(t1 + 30_000, []);
    expect(await read()).toEqual(after);

    // A stopped VM reports zeros, as PVE does for a VM that is not running.
    const idle = (await api.get('/nodes/corral-1/qemu/731/status/current')).body.data as Record<string, number>;
    expect(idle).toMatchObject({ status: 'stopped', netin: 0, netout: 0, diskread: 0, diskwrite: 0 });
  });
});
