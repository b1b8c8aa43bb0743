/**
 * Containers everywhere a VM is, on one embedded cluster: a CT's Stop/Start reaches a `live.fleet` subscriber as
 * `ct` events (no polling), the snapshot carries CT rows, `POST /api/bulk` acts on a mixed selection of VMs and
 * CTs with a result per guest, and a CT row reports its data volume's usage as the kubelet measured it.
 */
import { PassThrough } from 'node:stream';
import { Exec, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ctShellCommand } from '@/server/domain/ct-spec';
import type { CtRow } from '@/server/schemas/cts';
import type { FleetEvent } from '@/server/schemas/live';
import { eventually, readTrackedEvents, startHarness, taskDone, type Harness } from './harness';

const NS = 'tailvm';
const INTERVAL_MS = 300;
let h: Harness;

beforeAll(async () => {
  process.env.CORRAL_METRICS_INTERVAL_MS = String(INTERVAL_MS);
  h = await startHarness({ fleet: 'empty', speed: 50 });
}, 60_000);
afterAll(async () => {
  delete process.env.CORRAL_METRICS_INTERVAL_MS;
  await h?.close();
});

const vmStatus = (name: string) => h.corral.services.fleet.vmRow(NS, name)?.status;
const row = async (name: string) => (await h.get(`/api/cts/${NS}/${name}`)).body as CtRow;

async function createCt(name: string, extra: Record<string, unknown> = {}) {
  const r = await h.post('/api/cts', { name, image: 'debian:bookworm', disk: '1Gi', ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await taskDone(h, (r.body as { task: string }).task);
}

async function createVm(name: string) {
  const r = await h.post('/api/vms', { name, image: 'cirros', start: true });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await eventually(() => vmStatus(name) === 'Running', 30_000, `${name} running`);
}

/** Opens `live.fleet` and collects its events until the returned stop() is called. */
function subscribe() {
  const abort = new AbortController();
  const events: FleetEvent[] = [];
  const pump = fetch(`${h.url}/trpc/live.fleet`, { signal: abort.signal, headers: { accept: 'text/event-stream' } })
    .then((res) => readTrackedEvents<FleetEvent>(res.body!, (_id, data) => events.push(data)))
    .catch(() => undefined);
  return {
    events,
    stop: async () => {
      abort.abort();
      await pump;
    },
  };
}

describe('CTs on the live feed', () => {
  it('the snapshot lists CTs, and a Stop then a Start reach the subscriber as ct events', async () => {
    await createCt('live1');
    const sub = subscribe();
    try {
      const snapshot = await eventually(() => sub.events.find((e) => e.type === 'snapshot'), 5000, 'snapshot');
      expect(snapshot.type === 'snapshot' && snapshot.cts.map((c) => c.name)).toEqual(['live1']);

      const seen = () => sub.events.filter((e) => e.type === 'ct').length;
      const before = seen();
      const stop = await h.post(`/api/cts/${NS}/live1/stop`);
      expect(stop.status).toBe(200);
      const stopped = await eventually(
        () =>
          sub.events.find(
            (e) => e.type === 'ct' && e.op === 'upsert' && e.ct.name === 'live1' && e.ct.phase === 'Stopped',
          ),
        15_000,
        'Stopped event',
      );
      expect(stopped.type === 'ct' && stopped.op === 'upsert' && stopped.ct).toMatchObject({
        namespace: NS,
        node: '',
        ip: '',
        ready: false,
        diskUsage: null,
      });
      expect(seen()).toBeGreaterThan(before);

      await h.post(`/api/cts/${NS}/live1/start`);
      await eventually(
        () =>
          sub.events.find(
            (e) =>
              e.type === 'ct' &&
              e.op === 'upsert' &&
              e.ct.name === 'live1' &&
              e.ct.phase === 'Running' &&
              e.ct.node !== '',
          ),
        15_000,
        'Running event',
      );

      const del = await h.del(`/api/cts/${NS}/live1`);
      expect(del.status).toBe(200);
      await eventually(
        () => sub.events.find((e) => e.type === 'ct' && e.op === 'delete' && e.name === 'live1' && e.namespace === NS),
        15_000,
        'delete event',
      );
    } finally {
      await sub.stop();
    }
  });

  it('changes of objects that are not CTs emit no ct events', async () => {
    const sub = subscribe();
    try {
      await eventually(() => sub.events.find((e) => e.type === 'snapshot'), 5000, 'snapshot');
      await createVm('plain-vm');
      expect(sub.events.filter((e) => e.type === 'vm').length).toBeGreaterThan(0);
      expect(sub.events.filter((e) => e.type === 'ct')).toEqual([]);
    } finally {
      await sub.stop();
    }
  });
});

describe('POST /api/bulk', () => {
  interface Result {
    type: string;
    namespace: string;
    name: string;
    ok: boolean;
    message: string;
    task: string;
  }
  interface Outcome {
    task: string;
    ok: number;
    failed: number;
    results: Result[];
  }

  it('stops a mixed selection of a VM and a CT with a result per guest, then reports each refusal', async () => {
    await createCt('bulk-ct');
    const targets = [
      { type: 'vm', namespace: NS, name: 'plain-vm' },
      { type: 'ct', namespace: NS, name: 'bulk-ct' },
    ];
    const r = await h.post('/api/bulk', { action: 'stop', targets });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const out = r.body as Outcome;
    expect(out).toMatchObject({ ok: 2, failed: 0 });
    expect(out.results).toEqual([
      { ...targets[0], ok: true, message: 'stop accepted', task: expect.any(String) },
      { ...targets[1], ok: true, message: 'stop started', task: expect.any(String) },
    ]);
    for (const res of out.results) expect(res.task).not.toBe('');
    await taskDone(h, out.results[1]!.task);
    expect((await row('bulk-ct')).phase).toBe('Stopped');
    const bulkTask = await taskDone(h, out.task);
    expect(bulkTask.log).toContain(`ok: VM ${NS}/plain-vm: stop accepted`);
    expect(bulkTask.log).toContain(`ok: CT ${NS}/bulk-ct: stop started`);
    await eventually(() => vmStatus('plain-vm') === 'Stopped', 30_000, 'VM stopped');

    // Both are stopped now: each guest's own 409 comes back as its row, the request itself is a 200.
    const again = await h.post('/api/bulk', {
      action: 'stop',
      targets: [...targets, { type: 'ct', namespace: NS, name: 'no-such-ct' }],
    });
    expect(again.status).toBe(200);
    const twice = again.body as Outcome;
    expect(twice).toMatchObject({ ok: 0, failed: 3 });
    expect(twice.results.map((x) => [x.name, x.ok, x.task])).toEqual([
      ['plain-vm', false, ''],
      ['bulk-ct', false, ''],
      ['no-such-ct', false, ''],
    ]);
    expect(twice.results[0]?.message).toMatch(/not running/);
    expect(twice.results[1]?.message).toBe(`CT ${NS}/bulk-ct is Stopped`);
    expect(twice.results[2]?.message).toBe(`CT ${NS}/no-such-ct not found`);
    const failedTask = (await h.get(`/api/tasks/${twice.task}`)).body as { status: string; error: string };
    expect(failedTask).toMatchObject({ status: 'error', error: 'stop: 0 ok, 3 failed' });
  });

  it('starts and deletes CTs in bulk', async () => {
    const start = (
      await h.post('/api/bulk', { action: 'start', targets: [{ type: 'ct', namespace: NS, name: 'bulk-ct' }] })
    ).body as Outcome;
    expect(start).toMatchObject({ ok: 1, failed: 0 });
    await taskDone(h, start.results[0]!.task);
    expect((await row('bulk-ct')).phase).toBe('Running');

    const del = await h.post('/api/bulk', {
      action: 'delete',
      targets: [
        { type: 'ct', namespace: NS, name: 'bulk-ct' },
        { type: 'vm', namespace: NS, name: 'plain-vm' },
      ],
    });
    const out = del.body as Outcome;
    expect(out, JSON.stringify(out)).toMatchObject({ ok: 2, failed: 0 });
    expect(out.results[0]?.message).toBe('deleted 2 objects'); // the pod and the data volume
    // The claim goes once its pod has (pvc-protection), and the CT with it.
    await eventually(() => !h.sim.store.get('/persistentvolumeclaims', NS, 'bulk-ct-data'), 10_000, 'claim gone');
    await eventually(async () => (await h.get(`/api/cts/${NS}/bulk-ct`)).status === 404, 10_000, 'CT gone');
    await eventually(async () => (await h.get(`/api/vms/${NS}/plain-vm`)).status === 404, 30_000, 'VM gone');
  });

  it('refuses bad input with a 400 naming the field, and read-only callers with a 403', async () => {
    const cases: [unknown, RegExp][] = [
      [
        { action: 'pause', targets: [{ type: 'vm', namespace: NS, name: 'a' }] },
        /^action: must be one of start, stop, restart, delete/,
      ],
      [{ action: 'stop', targets: [] }, /^targets: must list at least one guest/],
      [{ action: 'stop', targets: [{ type: 'pod', namespace: NS, name: 'a' }] }, /^targets\.0\.type: must be vm or ct/],
      [{ action: 'stop', targets: [{ type: 'ct', namespace: NS, name: 'Bad_Name' }] }, /^targets\.0\.name: /],
      [{ action: 'stop', targets: [{ type: 'ct', namespace: NS, name: 'a', extra: 1 }] }, /extra/],
      [{ action: 'stop', targets: [{ type: 'ct', namespace: NS, name: 'a' }], force: true }, /force/],
      [
        {
          action: 'stop',
          targets: [
            { type: 'ct', namespace: NS, name: 'a' },
            { type: 'ct', namespace: NS, name: 'a' },
          ],
        },
        /^targets: CT tailvm\/a is listed twice/,
      ],
      [
        {
          action: 'stop',
          targets: Array.from({ length: 1001 }, (_, i) => ({ type: 'vm', namespace: NS, name: `v${i}` })),
        },
        /^targets: must list at most 1000 guests/,
      ],
    ];
    for (const [body, message] of cases) {
      const r = await h.post('/api/bulk', body);
      expect(r.status, JSON.stringify(body).slice(0, 200)).toBe(400);
      expect((r.body as { error: string }).error).toMatch(message);
    }
    process.env.CORRAL_ADMINS = 'alice@github';
    try {
      const r = await h.post(
        '/api/bulk',
        { action: 'stop', targets: [{ type: 'ct', namespace: NS, name: 'a' }] },
        { 'tailscale-user-login': 'mallory@github' },
      );
      expect(r.status).toBe(403);
    } finally {
      delete process.env.CORRAL_ADMINS;
    }
  });
});

describe('data volume usage', () => {
  it('a running CT reports used and total bytes of its data volume, which grow when a file is written; a stopped one reports none', async () => {
    await createCt('usage1');
    const first = await eventually(async () => (await row('usage1')).diskUsage, 10_000, 'a usage reading');
    expect(first.totalBytes).toBe(1024 ** 3);
    expect(first.usedBytes).toBeGreaterThanOrEqual(0);

    const kc = new KubeConfig();
    kc.loadFromString(h.sim.kubeconfig);
    const stdout = new PassThrough();
    await new Promise<void>((resolve, reject) => {
      new Exec(kc)
        .exec(
          NS,
          'usage1',
          'main',
          [...ctShellCommand({ privileged: false }), '-c', `echo ${'x'.repeat(10_000)} > /data/big`],
          stdout,
          stdout,
          null,
          false,
          () => setImmediate(resolve),
        )
        .catch(reject);
    });
    // 10,001 bytes take three 4 KiB blocks.
    const grown = await eventually(
      async () => {
        const u = (await row('usage1')).diskUsage;
        return u && u.usedBytes >= first.usedBytes + 3 * 4096 ? u : undefined;
      },
      10_000,
      'usage after the write',
    );
    expect(grown.totalBytes).toBe(1024 ** 3);

    const stop = await h.post(`/api/cts/${NS}/usage1/stop`);
    await taskDone(h, (stop.body as { task: string }).task);
    expect((await row('usage1')).diskUsage).toBeNull();
    expect((await h.get('/api/cts')).body).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'usage1', diskUsage: null })]),
    );
  });

  it("a running privileged CT's volume holds its seeded root before anyone opened a shell", async () => {
    await createCt('usage2', { privileged: true });
    const u = await eventually(async () => (await row('usage2')).diskUsage, 10_000, 'a usage reading');
    expect(u.usedBytes).toBeGreaterThan(10 * 4096); // the image root's directories and files, a block each
    expect(u.usedBytes).toBeLessThan(u.totalBytes);
  });
});
