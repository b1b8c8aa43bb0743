/**
 * Snapshots, clone and template flag through /api on the embedded cluster (api.md "Snapshots", "Clone &
 * template"): success shapes, 400/404/409, a restore that really brings back the snapshot's disk content (the
 * embedded cluster's volumes carry it in `sim.corral.dev/disk-content`), clone independence, unknown sub-paths.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, taskDone as doneTask, type Harness } from './harness';

const PVCS = '/persistentvolumeclaims';
const VMS = 'kubevirt.io/virtualmachines';
const VSC = 'snapshot.storage.k8s.io/volumesnapshotclasses';
const KUBEVIRT = 'kubevirt.io/kubevirts';
const DVS = 'cdi.kubevirt.io/datavolumes';
const CONTENT = 'sim.corral.dev/disk-content';
const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
});
afterAll(async () => {
  await h?.close();
});

const taskDone = (id: string, timeoutMs?: number) => doneTask(h, id, timeoutMs);

/** The claim behind the VM's boot disk (first PVC/DataVolume volume), read from the cluster. */
const rootClaim = (vm: string): string => {
  const o = h.sim.store.get(VMS, 'tailvm', vm) as unknown as {
    spec: {
      template: {
        spec: { volumes: { dataVolume?: { name: string }; persistentVolumeClaim?: { claimName: string } }[] };
      };
    };
  };
  const v = o.spec.template.spec.volumes.find((x) => x.dataVolume || x.persistentVolumeClaim);
  return v?.dataVolume?.name ?? v?.persistentVolumeClaim?.claimName ?? '';
};
const writeContent = (vm: string, content: string) =>
  h.sim.store.mutate(PVCS, 'tailvm', rootClaim(vm), (pvc) => {
    pvc.metadata.annotations = { ...(pvc.metadata.annotations ?? {}), [CONTENT]: content };
  });
const readContent = (vm: string) => h.sim.store.get(PVCS, 'tailvm', rootClaim(vm))?.metadata.annotations?.[CONTENT];

const phaseOf = (o: unknown) => (o as { status?: { phase?: string } } | undefined)?.status?.phase;

async function createVm(name: string): Promise<void> {
  const body = { name, import: IMAGE_URL, disk: '1G', mem: '1G', cpu: 1 };
  expect((await h.post('/api/vms', body)).status).toBe(201);
  await eventually(
    () =>
      phaseOf(h.sim.store.get(PVCS, 'tailvm', rootClaim(name))) === 'Bound' &&
      phaseOf(h.sim.store.get(DVS, 'tailvm', rootClaim(name))) === 'Succeeded',
    30_000,
    `${name}'s disk imported`,
  );
}
const status = async (vm: string) => ((await h.get(`/api/vms/tailvm/${vm}/row`)).body as { status: string }).status;

describe('snapshots', () => {
  it('take, list, restore (content back, VM running again), delete; 400/404/409', async () => {
    await createVm('snapvm');
    writeContent('snapvm', 'original bytes');
    expect(await h.get('/api/vms/tailvm/snapvm/snapshots')).toMatchObject({ status: 200, body: [] });

    const taken = await h.post('/api/vms/tailvm/snapvm/snapshots', { name: 'before', description: 'pre-upgrade' });
    expect(taken).toMatchObject({ status: 202, body: { name: 'before', task: expect.any(String) } });
    await taskDone((taken.body as { task: string }).task);
    const rows = (await h.get('/api/vms/tailvm/snapvm/snapshots')).body as Record<string, unknown>[];
    expect(rows).toEqual([
      expect.objectContaining({ name: 'before', phase: 'Succeeded', description: 'pre-upgrade', ready: true }),
    ]);
    expect(Date.parse(String(rows[0]?.creationTime))).not.toBeNaN();
    expect(rows[0]?.size).toMatch(/^\d+(Gi|Mi)$/);

    // Auto-named; a name already used is a 409; bad input is a 400; a VM that does not exist is a 404.
    const auto = await h.post('/api/vms/tailvm/snapvm/snapshots', {});
    expect(auto).toMatchObject({ status: 202, body: { name: expect.stringMatching(/^snap-\d{8}-\d{6}$/) } });
    await taskDone((auto.body as { task: string }).task);
    expect((await h.post('/api/vms/tailvm/snapvm/snapshots', { name: 'before' })).status).toBe(409);
    const bad = await h.post('/api/vms/tailvm/snapvm/snapshots', { name: 'has space' });
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/^name: /);
    expect((await h.post('/api/vms/tailvm/snapvm/snapshots', { name: 'x', colour: 1 })).status).toBe(400);
    expect((await h.post('/api/vms/tailvm/nope/snapshots', { name: 'x' })).status).toBe(404);
    expect((await h.get('/api/vms/tailvm/nope/snapshots')).status).toBe(404);
    expect((await h.post('/api/vms/tailvm/snapvm/snapshots/missing/restore')).status).toBe(404);

    // Change the disk, run the VM, restore: stopped, restored, started again, the snapshot's content is back.
    writeContent('snapvm', 'changed bytes');
    expect((await h.post('/api/vms/tailvm/snapvm/start')).status).toBe(200);
    await eventually(async () => (await status('snapvm')) === 'Running', 30_000, 'Running');
    const restore = await h.post('/api/vms/tailvm/snapvm/snapshots/before/restore');
    expect(restore).toMatchObject({ status: 202, body: { status: 'restoring', task: expect.any(String) } });
    const done = await taskDone((restore.body as { task: string }).task, 60_000);
    expect(done.log).toMatch(/stopp/);
    expect(readContent('snapvm')).toBe('original bytes');
    await eventually(async () => (await status('snapvm')) === 'Running', 30_000, 'Running after the restore');

    const del = await h.del('/api/vms/tailvm/snapvm/snapshots/before');
    expect(del).toMatchObject({ status: 200, body: { status: 'deleted', task: expect.any(String) } });
    await taskDone((del.body as { task: string }).task);
    expect(
      ((await h.get('/api/vms/tailvm/snapvm/snapshots')).body as { name: string }[]).map((r) => r.name),
    ).not.toContain('before');
    expect((await h.del('/api/vms/tailvm/snapvm/snapshots/before')).status).toBe(404);
    expect((await h.post('/api/vms/tailvm/snapvm/stop')).status).toBe(200);
  }, 120_000);

  it('409 naming what to install when there is no VolumeSnapshotClass or the Snapshot gate is off', async () => {
    await createVm('gated');
    const saved = h.sim.store.list(VSC);
    for (const c of saved) h.sim.store.delete(VSC, undefined, c.metadata.name);
    try {
      const r = await h.post('/api/vms/tailvm/gated/snapshots', { name: 'x' });
      expect(r.status).toBe(409);
      expect((r.body as { error: string }).error).toMatch(/VolumeSnapshotClass.*install/);
    } finally {
      for (const c of saved) {
        const { metadata, ...rest } = c;
        h.sim.store.create(VSC, { ...rest, metadata: { name: metadata.name, annotations: metadata.annotations } });
      }
    }
    const gates = (kv: unknown) =>
      ((kv as { spec: unknown }).spec as { configuration: { developerConfiguration: { featureGates: string[] } } })
        .configuration.developerConfiguration;
    h.sim.store.mutate(KUBEVIRT, 'kubevirt', 'kubevirt', (kv) => {
      gates(kv).featureGates = gates(kv).featureGates.filter((g) => g !== 'Snapshot');
    });
    try {
      const r = await h.post('/api/vms/tailvm/gated/snapshots', { name: 'x' });
      expect(r.status).toBe(409);
      expect((r.body as { error: string }).error).toMatch(/"Snapshot" feature gate.*KubeVirt CR/);
      const c = await h.post('/api/vms/tailvm/gated/clone', { target: 'gated-copy' });
      expect(c.status).toBe(409);
    } finally {
      h.sim.store.mutate(KUBEVIRT, 'kubevirt', 'kubevirt', (kv) => {
        gates(kv).featureGates.push('Snapshot');
      });
    }
    expect(h.sim.store.get(VMS, 'tailvm', 'gated-copy')).toBeUndefined();
  }, 60_000);
});

describe('clone and template', () => {
  it('clones a stopped VM as a task with progress; the clone is independent of its source', async () => {
    await createVm('orig');
    writeContent('orig', 'source disk');
    const r = await h.post('/api/vms/tailvm/orig/clone', { target: 'orig-copy', start: true });
    expect(r).toMatchObject({
      status: 202,
      body: { target: 'orig-copy', namespace: 'tailvm', task: expect.any(String) },
    });
    const t = await taskDone((r.body as { task: string }).task, 60_000);
    expect(t.progress).toBe(100);
    expect(t.log).toMatch(/SnapshotInProgress|RestoreInProgress/);
    expect(readContent('orig-copy')).toBe('source disk');
    expect(rootClaim('orig-copy')).not.toBe(rootClaim('orig'));
    await eventually(async () => (await status('orig-copy')) === 'Running', 30_000, 'the clone started');

    writeContent('orig-copy', 'changed in the clone');
    expect(readContent('orig')).toBe('source disk');
    expect((await h.post('/api/vms/tailvm/orig-copy/stop')).status).toBe(200);

    // Refusals.
    expect((await h.post('/api/vms/tailvm/orig/clone', { target: 'orig-copy' })).status).toBe(409);
    expect((await h.post('/api/vms/tailvm/ghost/clone', { target: 'ghost-copy' })).status).toBe(404);
    expect((await h.post('/api/vms/tailvm/orig/clone', { target: 'Bad_Name' })).status).toBe(400);
    expect((await h.post('/api/vms/tailvm/orig/clone', { target: 'x', start: 'true' })).status).toBe(400);
    expect((await h.post('/api/vms/tailvm/orig/clone', { target: 'elsewhere', namespace: 'nowhere' })).status).toBe(
      400,
    );
    expect((await h.post('/api/vms/tailvm/orig/start')).status).toBe(200);
    await eventually(async () => (await status('orig')) === 'Running', 30_000, 'source running');
    const running = await h.post('/api/vms/tailvm/orig/clone', { target: 'orig-hot' });
    expect(running.status).toBe(409);
    expect((running.body as { error: string }).error).toMatch(/stop it first/);
    expect((await h.post('/api/vms/tailvm/orig/stop')).status).toBe(200);
  }, 120_000);

  it('marks and unmarks a template', async () => {
    await eventually(async () => (await status('orig')) === 'Stopped', 30_000, 'orig stopped');
    expect(await h.post('/api/vms/tailvm/orig/template', { on: true })).toMatchObject({
      status: 200,
      body: { isTemplate: true },
    });
    await eventually(
      async () => ((await h.get('/api/vms/tailvm/orig/row')).body as { template: boolean }).template,
      10_000,
      'template flag in the row',
    );
    expect(await h.post('/api/vms/tailvm/orig/template', { on: false })).toMatchObject({
      status: 200,
      body: { isTemplate: false },
    });
    expect((await h.post('/api/vms/tailvm/orig/template', { on: 'true' })).status).toBe(400);
    expect((await h.post('/api/vms/tailvm/orig/template', {})).status).toBe(400);
    expect((await h.post('/api/vms/tailvm/ghost/template', { on: true })).status).toBe(404);
  }, 60_000);
});

describe('unknown sub-paths and migrations', () => {
  it('answers 404 for sub-paths no route has, never the action enum 400', async () => {
    for (const [method, path] of [
      ['POST', '/api/vms/tailvm/orig/frobnicate'],
      ['POST', '/api/vms/tailvm/orig/Snapshotz'],
      ['GET', '/api/vms/tailvm/orig/snapshots/x/y'],
      ['POST', '/api/vms/tailvm/orig/snapshots/x/y'],
      ['GET', '/api/vms/tailvm/orig/frobnicate'],
    ] as const) {
      const r = method === 'GET' ? await h.get(path) : await h.post(path, {});
      expect({ path, status: r.status }).toEqual({ path, status: 404 });
      expect(Object.keys(r.body as object)).toEqual(['error']);
    }
    // Known actions still work (and still validate).
    expect((await h.post('/api/vms/tailvm/orig/pause')).status).toBe(409);
  });

  it('a second migration while one runs is a 409, not the cluster webhook 502', async () => {
    await createVm('mover');
    expect((await h.post('/api/vms/tailvm/mover/start')).status).toBe(200);
    await eventually(async () => (await status('mover')) === 'Running', 30_000, 'Running');
    const first = await h.post('/api/vms/tailvm/mover/migrate', {});
    if (first.status === 409) {
      expect((first.body as { error: string }).error).toMatch(/cannot be live-migrated/);
      return;
    }
    expect(first.status).toBe(202);
    const second = await h.post('/api/vms/tailvm/mover/migrate', {});
    expect(second.status).toBe(409);
    expect((second.body as { error: string }).error).toMatch(/already migrating/);
  }, 60_000);
});
