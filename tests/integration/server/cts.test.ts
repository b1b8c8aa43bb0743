/**
 * Containers through /api on the embedded cluster (api.md "Containers (CT)"): the shapes of every route, the
 * objects a CT is made of (PVC with labels and the spec annotation, pod), Stop keeping the volume, Start rebuilding
 * the pod from the annotation, scale, delete reporting each object, and the 400/404/409 cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from './harness';

const PODS = '/pods';
const PVCS = '/persistentvolumeclaims';
const SERVICES = '/services';
const NS = 'tailvm';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

interface Task {
  status: string;
  error: string;
  log: string;
}
const taskEnd = async (id: string): Promise<Task> =>
  eventually(
    async () => {
      const t = (await h.get(`/api/tasks/${id}`)).body as Task;
      return t.status === 'running' ? undefined : t;
    },
    30_000,
    `task ${id}`,
  );
const taskDone = async (id: string): Promise<Task> => {
  const t = await taskEnd(id);
  if (t.status !== 'done') throw new Error(`task ${id} ended ${t.status}: ${t.error}\n${t.log}`);
  return t;
};
const errorOf = (r: { body: unknown }) => (r.body as { error: string }).error;
type Dict = Record<string, unknown>;
interface Row {
  name: string;
  namespace: string;
  node: string;
  phase: string;
  ready: boolean;
  image: string;
  cpu: number;
  mem: string;
  privileged: boolean;
  disk: string;
  ip: string;
  reason: string;
}
const row = async (name: string) => (await h.get(`/api/cts/${NS}/${name}`)).body as Row & { pod: Dict | null };
const pod = (name: string) => h.sim.store.get(PODS, NS, name) as unknown as { metadata: { uid: string }; spec: Dict };

async function create(name: string, extra: Dict = {}): Promise<string> {
  const r = await h.post('/api/cts', { name, image: 'docker.io/library/debian:bookworm', ...extra });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const body = r.body as { name: string; namespace: string; task: string };
  expect(body).toEqual({ name, namespace: NS, task: expect.any(String) });
  return body.task;
}

describe('CT lifecycle', () => {
  it('creates a PVC with the spec annotation and a running pod, and lists it', async () => {
    const task = await create('box1', { cpu: 2, mem: '1G', disk: '2Gi', privileged: true });
    const t = await taskDone(task);
    expect(t.log).toMatch(/PersistentVolumeClaim tailvm\/box1-data created/);
    const pvc = h.sim.store.get(PVCS, NS, 'box1-data') as unknown as {
      metadata: { labels: Dict; annotations: Dict };
      spec: Dict;
    };
    expect(pvc.metadata.labels).toMatchObject({ 'corral.dev/ct': 'true', 'corral.dev/ct-name': 'box1' });
    expect(JSON.parse(pvc.metadata.annotations['corral.ct/spec'] as string)).toEqual({
      name: 'box1',
      namespace: NS,
      image: 'docker.io/library/debian:bookworm',
      cpu: 2,
      mem: '1Gi',
      disk: '2Gi',
      storageClass: '',
      privileged: true,
    });
    const p = pod('box1');
    const main = (p.spec.containers as Dict[])[0] as { resources: Dict; securityContext: Dict };
    expect(main.resources).toEqual({ requests: { cpu: '2', memory: '1Gi' }, limits: { cpu: '2', memory: '1Gi' } });
    expect(main.securityContext).toEqual({ privileged: true });
    expect((p.spec.initContainers as Dict[])[0]).toMatchObject({ name: 'seed-rootfs' });

    const list = (await h.get('/api/cts')).body as Row[];
    const listed = list.find((c) => c.name === 'box1');
    expect(listed).toMatchObject({
      namespace: NS,
      phase: 'Running',
      ready: true,
      image: 'docker.io/library/debian:bookworm',
      cpu: 2,
      mem: '1Gi',
      privileged: true,
      disk: '2Gi',
      reason: '',
    });
    expect(listed?.node).not.toBe('');
    expect(listed?.ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const one = await row('box1');
    expect(one.pod).toMatchObject({ kind: 'Pod' });
    expect((await h.get('/api/cts?namespace=other')).body).toEqual([]);
  });

  it('stop deletes the pod and keeps the volume; start rebuilds the pod from the annotation', async () => {
    const uid = pod('box1').metadata.uid;
    const stop = await h.post(`/api/cts/${NS}/box1/stop`);
    expect(stop.status).toBe(200);
    expect(stop.body).toEqual({ status: 'ok', task: expect.any(String) });
    await taskDone((stop.body as { task: string }).task);
    expect(h.sim.store.get(PODS, NS, 'box1')).toBeUndefined();
    expect(h.sim.store.get(PVCS, NS, 'box1-data')).toBeDefined();
    expect(await row('box1')).toMatchObject({ phase: 'Stopped', node: '', ip: '', pod: null, ready: false });

    const again = await h.post(`/api/cts/${NS}/box1/stop`);
    expect(again.status).toBe(409);
    expect(errorOf(again)).toBe('CT tailvm/box1 is Stopped');

    const start = await h.post(`/api/cts/${NS}/box1/start`);
    expect(start.status).toBe(200);
    await taskDone((start.body as { task: string }).task);
    expect(pod('box1').metadata.uid).not.toBe(uid);
    expect(await row('box1')).toMatchObject({ phase: 'Running', cpu: 2, mem: '1Gi', privileged: true });

    const twice = await h.post(`/api/cts/${NS}/box1/start`);
    expect(twice.status).toBe(409);
    expect(errorOf(twice)).toBe('CT tailvm/box1 is Running');
  });

  it('restart gives it a new pod', async () => {
    const uid = pod('box1').metadata.uid;
    const r = await h.post(`/api/cts/${NS}/box1/restart`);
    expect(r.status).toBe(200);
    await taskDone((r.body as { task: string }).task);
    expect(pod('box1').metadata.uid).not.toBe(uid);
    expect((await row('box1')).phase).toBe('Running');
  });

  it('scale: a running CT gets a new pod with the new size; a stopped one keeps it for the next start', async () => {
    const r = await h.post(`/api/cts/${NS}/box1/scale`, { cpu: 3, mem: '2G' });
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ status: 'ok', task: expect.any(String), mode: 'restart' });
    await taskDone((r.body as { task: string }).task);
    const limits = ((pod('box1').spec.containers as Dict[])[0] as { resources: { limits: Dict } }).resources.limits;
    expect(limits).toEqual({ cpu: '3', memory: '2Gi' });
    expect(await row('box1')).toMatchObject({ cpu: 3, mem: '2Gi', phase: 'Running' });

    const same = await h.post(`/api/cts/${NS}/box1/scale`, { cpu: 3 });
    expect((same.body as { mode: string }).mode).toBe('unchanged');

    await taskDone(((await h.post(`/api/cts/${NS}/box1/stop`)).body as { task: string }).task);
    const offline = await h.post(`/api/cts/${NS}/box1/scale`, { mem: '512Mi' });
    expect((offline.body as { mode: string }).mode).toBe('offline');
    await taskDone((offline.body as { task: string }).task);
    expect(h.sim.store.get(PODS, NS, 'box1')).toBeUndefined();
    await eventually(async () => (await row('box1')).mem === '512Mi', 5000, 'recorded mem');
  });

  it('delete removes pod, Service and volume and says so', async () => {
    await create('box2');
    await eventually(async () => (await row('box2')).phase === 'Running', 30_000, 'box2 running');
    h.sim.store.create(SERVICES, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'box2-ts', namespace: NS, labels: { 'corral.dev/ct-name': 'box2' } },
      spec: { selector: { 'corral.dev/ct-name': 'box2' }, ports: [{ port: 22 }] },
    });
    const r = await h.del(`/api/cts/${NS}/box2`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      status: 'deleted',
      task: expect.any(String),
      removed: ['Pod/tailvm/box2', 'Service/tailvm/box2-ts', 'PersistentVolumeClaim/tailvm/box2-data'],
    });
    const t = await taskDone((r.body as { task: string }).task);
    expect(t.log).toMatch(/Service tailvm\/box2-ts deleted/);
    await eventually(() => !h.sim.store.get(PVCS, NS, 'box2-data'), 10_000, 'volume gone');
    const missing = await h.del(`/api/cts/${NS}/box2`);
    expect(missing.status).toBe(404);
    expect(errorOf(missing)).toBe('CT tailvm/box2 not found');
    // A stopped CT deletes as well (no pod to remove).
    const stopped = await h.del(`/api/cts/${NS}/box1`);
    expect(stopped.status).toBe(200);
    expect((stopped.body as { removed: string[] }).removed).toEqual(['PersistentVolumeClaim/tailvm/box1-data']);
  });

  it('a missing image fails the create task with the pull error, and the row says why', async () => {
    const task = await create('nopull', { image: 'registry.example.org/team/does-not-exist:1' });
    const t = await taskEnd(task);
    expect(t.status).toBe('error');
    expect(t.error).toMatch(/ErrImagePull|ImagePullBackOff/);
    expect((await row('nopull')).reason).toMatch(/^(ErrImagePull|ImagePullBackOff): .*does-not-exist/);
    await h.del(`/api/cts/${NS}/nopull`);
  });
});

describe('CT refusals', () => {
  it('400 names the field', async () => {
    const bad = async (body: Dict, field: string) => {
      const r = await h.post('/api/cts', { name: 'x', image: 'debian:bookworm', ...body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(errorOf(r)).toContain(field);
    };
    await bad({ image: 'file:///etc/passwd' }, 'image');
    await bad({ image: 'https://example.org/x' }, 'image');
    await bad({ image: 'Debian:bookworm' }, 'image');
    await bad({ image: 'debian bookworm' }, 'image');
    await bad({ name: 'Not_A_Name' }, 'name');
    await bad({ cpu: 0 }, 'cpu');
    await bad({ cpu: '2' }, 'cpu');
    await bad({ mem: '1' }, 'mem');
    await bad({ mem: '32Mi' }, 'mem');
    await bad({ disk: '100Ti' }, 'disk');
    await bad({ privileged: 'true' }, 'privileged');
    await bad({ storageClass: 'Bad Class' }, 'storageClass');
    await bad({ storageClass: 'nope' }, 'storageClass');
    await bad({ bogus: 1 }, 'bogus');
    const scale = await h.post(`/api/cts/${NS}/x/scale`, {});
    expect(scale.status).toBe(400);
    const action = await h.post(`/api/cts/${NS}/x/frobnicate`);
    expect(action.status).toBe(400);
    expect(errorOf(action)).toContain('action');
  });

  it('404 for a CT that does not exist, on every route', async () => {
    for (const r of [
      await h.get(`/api/cts/${NS}/ghost`),
      await h.post(`/api/cts/${NS}/ghost/start`),
      await h.post(`/api/cts/${NS}/ghost/stop`),
      await h.post(`/api/cts/${NS}/ghost/scale`, { cpu: 2 }),
      await h.del(`/api/cts/${NS}/ghost`),
    ]) {
      expect(r.status).toBe(404);
      expect(errorOf(r)).toBe('CT tailvm/ghost not found');
    }
  });

  it('409 when the name is taken', async () => {
    await taskDone(await create('taken'));
    const r = await h.post('/api/cts', { name: 'taken', image: 'alpine:3.20' });
    expect(r.status).toBe(409);
    expect(errorOf(r)).toBe('CT tailvm/taken already exists (Running)');
    await h.del(`/api/cts/${NS}/taken`);
  });
});
