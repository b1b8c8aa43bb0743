/**
 * proxmoxer 1.2 decodes what monitoring scripts read: rrddata for every timeframe (VM and node), the I/O counters
 * of status/current and /cluster/resources, storage sizes and node uptime, with the JSON types PVE gives them, and
 * a bad timeframe as a ResourceException naming the parameter.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./proxmoxer_graphs.py', import.meta.url));

type Typed = Record<string, [string, unknown]>;
type Step = { step: string } & Record<string, unknown>;

let h: ProxmoxHarness;
let baseline: Record<string, number> = {};
beforeAll(async () => {
  h = await startProxmoxHarness();
  const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  const created = await api.post('/nodes/corral-1/qemu', {
    vmid: 750,
    name: 'watched',
    memory: 1024,
    cores: 2,
    scsi0: 'local-lvm:2',
  });
  expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
  expect(
    (await waitTask(api, (await api.post('/nodes/corral-1/qemu/750/status/start')).body.data as string)).exitstatus,
  ).toBe('OK');
  const deadline = Date.now() + 30_000;
  while (h.corral.services.metricsStore.vmHistory('tailvm', 'watched', 'hour').length < 2) {
    if (Date.now() > deadline) throw new Error('the store never recorded two rounds of the running VM');
    await h.corral.cluster.metrics.sampleNow();
    await new Promise((r) => setTimeout(r, 50));
  }
  // Two rounds 15 s apart with known I/O rates (a minute ahead, so no sampler round splits them): between them the
  // counters grow by exactly rate × 15 s, whatever the cluster's own rates added before.
  const uid = h.corral.services.fleet.vmRow('tailvm', 'watched')?.uid ?? '';
  const node = h.corral.services.fleet.vmRow('tailvm', 'watched')?.node ?? '';
  const t = Date.now() + 60_000;
  const round = (at: number) =>
    h.corral.services.metricsStore.record(at, [
      {
        namespace: 'tailvm',
        name: 'watched',
        uid,
        node,
        reading: { cpu: 500, mem: 256 * 1024 ** 2, netin: 4096, netout: 1024, diskread: 0.5, diskwrite: 8192 },
      },
    ]);
  round(t);
  baseline = (await api.get(`/nodes/${node}/qemu/750/status/current`)).body.data as Record<string, number>;
  round(t + 15_000);
}, 90_000);
afterAll(async () => {
  await h?.close();
});

function run(): Promise<Step[]> {
  return new Promise((resolve, reject) => {
    execFile(
      PYTHON,
      [SCRIPT, `127.0.0.1:${h.port}`, 'root@pam', 'ci', ADMIN_SECRET, '750'],
      { timeout: 60_000 },
      (err, stdout, stderr) => {
        const steps = stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Step);
        if (err) reject(new Error(`proxmoxer script failed after ${steps.map((s) => s.step).join(' → ')}:\n${stderr}`));
        else resolve(steps);
      },
    );
  });
}

const typeOf = (row: Typed, key: string) => row[key]?.[0];
const valueOf = (row: Typed, key: string) => row[key]?.[1] as number;

describe('proxmoxer reads graphs and counters', () => {
  it('decodes rrddata, counters, storage sizes and uptime with PVE’s JSON types', async () => {
    const steps = await run();
    const at = (name: string) => steps.filter((s) => s.step === name);

    for (const n of at('nodes')[0]?.nodes as Typed[]) {
      expect(typeOf(n, 'uptime')).toBe('int');
      expect(valueOf(n, 'uptime')).toBeGreaterThan(0);
    }
    expect(valueOf(at('node-status')[0]?.uptime as Typed, 'uptime')).toBeGreaterThan(0);

    // Counters: integers (bpg decodes them into Go ints), the same in the resource row and status/current.
    const current = at('current')[0]?.status as Typed;
    const resource = at('resource')[0]?.row as Typed;
    for (const k of ['netin', 'netout', 'diskread', 'diskwrite']) {
      expect(typeOf(current, k)).toBe('int');
      expect(typeOf(resource, k)).toBe('int');
      expect(valueOf(resource, k)).toBe(valueOf(current, k));
    }
    expect(valueOf(current, 'netin') - (baseline.netin ?? NaN)).toBe(4096 * 15);
    expect(valueOf(current, 'diskwrite') - (baseline.diskwrite ?? NaN)).toBe(8192 * 15);
    // 0.5 B/s × 15 s = 7.5 bytes: whole bytes are shown, the fraction is kept.
    expect(valueOf(current, 'diskread') - (baseline.diskread ?? NaN)).toBeGreaterThanOrEqual(7);
    expect(valueOf(current, 'diskread') - (baseline.diskread ?? NaN)).toBeLessThanOrEqual(8);

    // Storage sizes are integers, and local-lvm (the default class) holds at least this VM's 2 GiB disk.
    const storages = at('storage')[0]?.storages as Typed[];
    for (const s of storages) for (const k of ['total', 'used', 'avail']) expect(typeOf(s, k)).toBe('int');
    const lvm = at('storage-status')[0]?.status as Typed;
    expect(valueOf(lvm, 'used')).toBeGreaterThanOrEqual(2 * 1024 ** 3);
    expect(valueOf(lvm, 'total')).toBeGreaterThan(valueOf(lvm, 'used'));

    // rrddata: a list of dicts per timeframe, time an int, cpu a float fraction, maxcpu the VM's vCPUs.
    const vm = at('vm-rrd');
    expect(vm.map((s) => s.timeframe)).toEqual(['hour', 'day', 'week', 'month', 'year']);
    for (const s of vm) {
      const points = s.points as Typed[];
      expect(points.length).toBeGreaterThan(0);
      for (const p of points) {
        expect(typeOf(p, 'time')).toBe('int');
        expect(['float', 'int']).toContain(typeOf(p, 'cpu'));
        expect(valueOf(p, 'cpu')).toBeGreaterThanOrEqual(0);
        expect(valueOf(p, 'cpu')).toBeLessThanOrEqual(1);
        expect(valueOf(p, 'maxcpu')).toBe(2);
        expect(valueOf(p, 'maxmem')).toBe(1024 ** 3);
      }
      const times = points.map((p) => valueOf(p, 'time'));
      expect([...times].sort((a, b) => a - b)).toEqual(times);
    }
    const hour = vm[0]?.points as Typed[];
    const newest = hour[hour.length - 1] as Typed;
    expect(valueOf(newest, 'netin')).toBe(4096);
    expect(valueOf(newest, 'cpu')).toBeCloseTo(0.25, 3);
    expect((vm[3]?.points as Typed[]).length).toBe((vm[2]?.points as Typed[]).length); // month = week ring

    const nodePoints = at('node-rrd')[0]?.points as Typed[];
    expect(nodePoints.length).toBeGreaterThan(0);
    for (const p of nodePoints) {
      expect(typeOf(p, 'time')).toBe('int');
      expect(typeOf(p, 'memtotal')).toBe('int');
      expect(typeOf(p, 'maxcpu')).toBe('int');
    }

    const bad = at('bad-timeframe')[0] as Step;
    expect(bad.status_code).toBe(400);
    // proxmoxer 1.2 reads `errors` from `data` (null on errors), so a script sees the reason phrase, as against PVE.
    expect(bad.message).toBe('400 Bad Request: Parameter verification failed.');
  });
});
