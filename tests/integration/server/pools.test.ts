/**
 * Pools (ADR-0008) through /api/folders* on one embedded cluster: CRUD and the nesting rules, the 400/404/409
 * cases, members resolved against the live fleet (missing ones kept), 50 concurrent writers losing nothing, and the
 * fan-out of a power action with a result per member (ok, skipped with a reason, failed with the error).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, taskDone, type Harness } from './harness';

const NS = 'tailvm';
const CM = '/configmaps';
let h: Harness;
let ctx = '';

interface Member {
  ref: string;
  type: string;
  missing: boolean;
  reason: string;
  status: string;
  running: boolean;
  name: string;
}
interface Folder {
  path: string;
  name: string;
  parent: string;
  depth: number;
  members: Member[];
  usage: { instances: number; running: number; missing: number; cpus: number };
}
interface Listing {
  context: string;
  backend: string;
  folders: Folder[];
  unfoldered: Member[];
}
interface ActionResult {
  ref: string;
  pool: string;
  type: string;
  name: string;
  status: 'ok' | 'skipped' | 'failed';
  reason?: string;
  error?: string;
}

const errorOf = (r: { body: unknown }) => (r.body as { error: string }).error;
const listing = async () => (await h.get('/api/folders')).body as Listing;
const folder = async (path: string) => (await listing()).folders.find((f) => f.path === path);
const ref = (name: string, context = ctx) => `kubevirt/${context}/${NS}/${name}`;
const q = (v: string) => encodeURIComponent(v);

async function vm(name: string, start: boolean): Promise<void> {
  const r = await h.post('/api/vms', {
    name,
    containerDisk: 'quay.io/containerdisks/fedora:40',
    cpu: 1,
    mem: '1Gi',
    start,
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await eventually(
    async () => {
      const row = (await h.get(`/api/vms/${NS}/${name}/row`)).body as { status: string };
      return start ? row.status === 'Running' : row.status === 'Stopped';
    },
    20_000,
    `${name} ${start ? 'Running' : 'Stopped'}`,
  );
}

beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  ctx = (await listing()).context;
  await Promise.all([vm('web', true), vm('db', false), vm('cache', true)]);
  const ct = await h.post('/api/cts', { name: 'box', image: 'docker.io/library/debian:bookworm' });
  expect(ct.status, JSON.stringify(ct.body)).toBe(201);
  await taskDone(h, (ct.body as { task: string }).task);
}, 90_000);
afterAll(async () => {
  await h?.close();
});

describe('pool CRUD and nesting rules', () => {
  it('creates a nested pool with its missing parents, lists it depth first, and refuses a second create (409)', async () => {
    const r = await h.post('/api/folders', { path: 'apps/web tier' });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({ path: 'apps/web tier', created: ['apps', 'apps/web tier'] });
    const l = await listing();
    expect(l.backend).toBe('kubevirt');
    expect(l.context).toBe('corral-sim');
    expect(l.folders.map((f) => [f.path, f.name, f.parent, f.depth])).toEqual([
      ['apps', 'apps', '', 1],
      ['apps/web tier', 'web tier', 'apps', 2],
    ]);
    const again = await h.post('/api/folders', { path: 'apps/web tier' });
    expect(again.status).toBe(409);
    expect(errorOf(again)).toBe("pool 'apps/web tier' already exists");
    // Stored in Corral's ConfigMap, readable with kubectl.
    const cm = h.sim.store.get(CM, NS, 'corral-folders') as unknown as { data: Record<string, string> };
    expect(Object.keys(JSON.parse(cm.data['folders.json']!).folders)).toEqual(['apps', 'apps/web tier']);
  });

  it.each([
    ['', 'path: must not be empty'],
    ['/apps', 'path: must not start or end with /'],
    ['apps/', 'path: must not start or end with /'],
    ['a//b', 'path: must not contain an empty segment (//)'],
    ['a/../b', "path: must not contain a '..' segment"],
    ['.', "path: must not contain a '.' segment"],
    ['a/b$c', "path: segment 'b$c' may only hold letters, digits, space, '_', '.' and '-'"],
    ['a/ b', "path: segment ' b' must not start or end with a space"],
    ['1/2/3/4/5/6/7/8/9', 'path: must be at most 8 levels deep (got 9)'],
  ])('refuses the path %j with a 400 naming the rule', async (path, message) => {
    const r = await h.post('/api/folders', { path });
    expect(r.status).toBe(400);
    expect(errorOf(r)).toBe(message);
  });

  it('takes exactly 8 levels, and refuses unknown fields and a bad path in the query', async () => {
    expect((await h.post('/api/folders', { path: 'd1/d2/d3/d4/d5/d6/d7/d8' })).status).toBe(201);
    const extra = await h.post('/api/folders', { path: 'x', colour: 'red' });
    expect(extra.status).toBe(400);
    expect(errorOf(extra)).toMatch(/colour/);
    const del = await h.del(`/api/folders?path=${q('a/../b')}`);
    expect(del.status).toBe(400);
    expect(errorOf(del)).toMatch(/^path: /);
    expect((await h.del(`/api/folders?path=d1`)).status).toBe(200);
  });

  it('moves a pool with its sub-pools and members, refusing cycles, an existing destination and depth > 8', async () => {
    await h.post('/api/folders', { path: 'team/a/b' });
    await h.post('/api/folders', { path: 'other' });
    expect((await h.post('/api/folders/members', { path: 'team/a/b', ref: ref('cache') })).status).toBe(200);

    const cycle = await h.post('/api/folders/move', { from: 'team', to: 'team/a/b/c' });
    expect(cycle.status).toBe(409);
    expect(errorOf(cycle)).toBe("cannot move pool 'team' into itself or one of its sub-pools ('team/a/b/c')");
    const taken = await h.post('/api/folders/move', { from: 'team', to: 'other' });
    expect(taken.status).toBe(409);
    expect(errorOf(taken)).toBe("pool 'other' already exists");
    const deep = await h.post('/api/folders/move', { from: 'team', to: 'x1/x2/x3/x4/x5/x6/x7' });
    expect(deep.status).toBe(409);
    expect(errorOf(deep)).toMatch(/would nest pools 9 levels deep \(at most 8\)/);
    expect((await h.post('/api/folders/move', { from: 'nope', to: 'x' })).status).toBe(404);

    const moved = await h.post('/api/folders/move', { from: 'team', to: 'other/crew' });
    expect(moved.status).toBe(200);
    expect(moved.body).toEqual({ from: 'team', to: 'other/crew', moved: ['team', 'team/a', 'team/a/b'] });
    const paths = (await listing()).folders.map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(['other', 'other/crew', 'other/crew/a', 'other/crew/a/b']));
    expect(paths.some((p) => p.startsWith('team'))).toBe(false);
    expect((await folder('other/crew/a/b'))?.members.map((m) => m.ref)).toEqual([ref('cache')]);
  });

  it('deletes a pool with its descendants and unfolders their members without touching them', async () => {
    const r = await h.del(`/api/folders?path=other`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      removed: ['other', 'other/crew', 'other/crew/a', 'other/crew/a/b'],
      unfoldered: [ref('cache')],
    });
    const l = await listing();
    expect(l.folders.some((f) => f.path.startsWith('other'))).toBe(false);
    expect(l.unfoldered.find((m) => m.name === 'cache')).toMatchObject({ type: 'vm', running: true });
    expect((await h.get(`/api/vms/${NS}/cache/row`)).status).toBe(200);
    expect((await h.del(`/api/folders?path=other`)).status).toBe(404);
  });

  it('records no task for a refused request: only changes reach the task log', async () => {
    const poolTasks = async () =>
      ((await h.get('/api/tasks')).body as { action: string }[]).filter((t) => t.action.startsWith('pool-')).length;
    const before = await poolTasks();
    expect((await h.del(`/api/folders?path=gone`)).status).toBe(404);
    expect((await h.post('/api/folders', { path: 'apps' })).status).toBe(409);
    expect((await h.post('/api/folders/move', { from: 'gone', to: 'x' })).status).toBe(404);
    expect((await h.del(`/api/folders/members?ref=${encodeURIComponent(ref('nowhere'))}`)).status).toBe(404);
    expect(await poolTasks()).toBe(before);
  });
});

describe('members', () => {
  it('files a VM and a CT, resolves them against the fleet, and keeps an instance in one pool only (409)', async () => {
    expect((await h.post('/api/folders/members', { path: 'apps', ref: ref('web') })).body).toEqual({
      path: 'apps',
      ref: ref('web'),
      changed: true,
    });
    expect((await h.post('/api/folders/members', { path: 'apps', ref: ref('web') })).body).toMatchObject({
      changed: false,
    });
    expect((await h.post('/api/folders/members', { path: 'apps/web tier', ref: ref('box') })).status).toBe(200);
    const other = await h.post('/api/folders/members', { path: 'apps/web tier', ref: ref('web') });
    expect(other.status).toBe(409);
    expect(errorOf(other)).toBe(
      "tailvm/web is already in pool 'apps' (an instance is in one pool at most); remove it there first",
    );
    const apps = await folder('apps');
    expect(apps?.members).toEqual([
      expect.objectContaining({ ref: ref('web'), type: 'vm', missing: false, running: true }),
    ]);
    expect(apps?.usage).toMatchObject({ instances: 1, running: 1, missing: 0, cpus: 1 });
    expect((await folder('apps/web tier'))?.members[0]).toMatchObject({
      type: 'ct',
      name: 'box',
      missing: false,
      vmid: expect.any(Number),
    });
    const unfoldered = (await listing()).unfoldered.map((m) => m.name);
    expect(unfoldered).not.toContain('web');
    expect(unfoldered).not.toContain('box');
    expect(unfoldered).toEqual(expect.arrayContaining(['db', 'cache']));
  });

  it('answers 404 for an unknown context, an instance that does not exist and a pool that does not exist', async () => {
    const lab = await h.post('/api/folders/members', { path: 'apps', ref: ref('web', 'lab') });
    expect(lab.status).toBe(404);
    expect(errorOf(lab)).toBe(`ref: context 'lab' is not served by this Corral (it serves '${ctx}')`);
    const ghost = await h.post('/api/folders/members', { path: 'apps', ref: ref('ghost') });
    expect(ghost.status).toBe(404);
    expect(errorOf(ghost)).toBe('ref: no VM or CT tailvm/ghost');
    expect((await h.post('/api/folders/members', { path: 'nowhere', ref: ref('db') })).status).toBe(404);
    for (const bad of ['web', 'proxmox/x/tailvm/web', `kubevirt/${ctx}/Tail/web`, `kubevirt/${ctx}/tailvm/web/x`]) {
      const r = await h.post('/api/folders/members', { path: 'apps', ref: bad });
      expect(r.status, bad).toBe(400);
      expect(errorOf(r)).toMatch(/^ref: /);
    }
  });

  it('keeps members that no longer exist (or live in another context) and shows them as missing', async () => {
    await vm('gone', false);
    await h.post('/api/folders', { path: 'old' });
    expect((await h.post('/api/folders/members', { path: 'old', ref: ref('gone') })).status).toBe(200);
    expect((await h.del(`/api/vms/${NS}/gone`)).status).toBe(200);
    await eventually(async () => (await h.get(`/api/vms/${NS}/gone/row`)).status === 404, 20_000);
    // Another Corral serving context "lab" filed one of its VMs here (written straight into the ConfigMap).
    const cm = h.sim.store.get(CM, NS, 'corral-folders') as unknown as { data: Record<string, string> };
    const doc = JSON.parse(cm.data['folders.json']!) as { folders: Record<string, { members: string[] }> };
    doc.folders.old!.members.push(ref('far', 'lab'));
    h.sim.store.mutate(CM, NS, 'corral-folders', (o) => {
      o.data = { 'folders.json': JSON.stringify(doc) };
    });
    const old = await eventually(async () => {
      const f = await folder('old');
      return f && f.members.length === 2 ? f : undefined;
    });
    expect(old.members).toEqual([
      expect.objectContaining({
        ref: ref('gone'),
        missing: true,
        type: '',
        status: 'missing',
        reason: `no VM or CT tailvm/gone in context '${ctx}'`,
      }),
      expect.objectContaining({
        ref: ref('far', 'lab'),
        missing: true,
        reason: `context 'lab' is not served by this Corral (it serves '${ctx}')`,
      }),
    ]);
    expect(old.usage).toMatchObject({ instances: 0, missing: 2 });
    // A missing ref can still be taken out.
    const out = await h.del(`/api/folders/members?ref=${q(ref('far', 'lab'))}`);
    expect(out.body).toEqual({ path: 'old', ref: ref('far', 'lab') });
    expect((await h.del(`/api/folders/members?ref=${q(ref('far', 'lab'))}`)).status).toBe(404);
    expect((await h.del(`/api/folders/members?ref=junk`)).status).toBe(400);
  });

  it('loses nothing under 50 concurrent writers (resourceVersion preconditions and retries)', async () => {
    const paths = Array.from({ length: 50 }, (_, i) => `load/p${i}`);
    const replies = await Promise.all(paths.map((path) => h.post('/api/folders', { path })));
    expect(replies.map((r) => r.status)).toEqual(paths.map(() => 201));
    // The parent 'load' was created by exactly one of them.
    expect(replies.filter((r) => (r.body as { created: string[] }).created.includes('load'))).toHaveLength(1);
    const cm = h.sim.store.get(CM, NS, 'corral-folders') as unknown as { data: Record<string, string> };
    const stored = Object.keys(JSON.parse(cm.data['folders.json']!).folders);
    expect(stored).toEqual(expect.arrayContaining(['load', ...paths, 'apps', 'apps/web tier', 'old']));
    const listed = (await listing()).folders.map((f) => f.path);
    expect(listed.filter((p) => p.startsWith('load/'))).toHaveLength(50);
    // Concurrent member writes and a delete of an unrelated pool interleaved with them.
    const mixed = await Promise.all([
      h.post('/api/folders/members', { path: 'load/p1', ref: ref('db') }),
      h.post('/api/folders/members', { path: 'load/p2', ref: ref('cache') }),
      ...paths.slice(10, 30).map((p) => h.del(`/api/folders?path=${q(p)}`)),
    ]);
    expect(mixed.map((r) => r.status)).toEqual(mixed.map(() => 200));
    const after = await listing();
    expect(after.folders.find((f) => f.path === 'load/p1')?.members.map((m) => m.name)).toEqual(['db']);
    expect(after.folders.find((f) => f.path === 'load/p2')?.members.map((m) => m.name)).toEqual(['cache']);
    expect(after.folders.filter((f) => f.path.startsWith('load/'))).toHaveLength(30);
    expect((await h.del('/api/folders?path=load')).status).toBe(200);
  });
});

describe('POST /api/folders/action', () => {
  it('fans out with a result per member: ok, skipped with the reason, failed with the error', async () => {
    await h.post('/api/folders', { path: 'stack/inner' });
    for (const [path, name] of [
      ['stack', 'cache'],
      ['stack', 'db'],
      ['stack/inner', 'box'],
    ] as const) {
      await h.del(`/api/folders/members?ref=${q(ref(name))}`);
      expect((await h.post('/api/folders/members', { path, ref: ref(name) })).status).toBe(200);
    }
    await h.post('/api/folders/members', { path: 'stack/inner', ref: ref('web') }).then(async (r) => {
      // web is in 'apps': it stays there (409), so the stack holds cache (running), db (stopped) and box (CT).
      expect(r.status).toBe(409);
    });
    // The stop of VM cache fails in the cluster: the apiserver answers 500 for its subresource.
    h.sim.faults.set({
      failFraction: 1,
      failStatus: 500,
      pathPrefix: `/apis/subresources.kubevirt.io/v1/namespaces/${NS}/virtualmachines/cache/stop`,
    });
    const r = await h.post('/api/folders/action', { path: 'stack', action: 'stop' });
    h.sim.faults.clear();
    expect(r.status).toBe(200);
    const out = r.body as { ok: number; skipped: number; failed: number; task: string; results: ActionResult[] };
    expect(out.results).toEqual([
      expect.objectContaining({
        ref: ref('cache'),
        pool: 'stack',
        type: 'vm',
        status: 'failed',
        error: expect.stringMatching(/injected fault/),
      }),
      expect.objectContaining({
        ref: ref('db'),
        pool: 'stack',
        type: 'vm',
        status: 'skipped',
        reason: 'VM tailvm/db is not running (Stopped)',
      }),
      expect.objectContaining({ ref: ref('box'), pool: 'stack/inner', type: 'ct', status: 'ok' }),
    ]);
    expect([out.ok, out.skipped, out.failed]).toEqual([1, 1, 1]);
    const task = (await h.get(`/api/tasks/${out.task}`)).body as { status: string; log: string; action: string };
    expect(task.action).toBe('pool-stop');
    expect(task.status).toBe('error');
    expect(task.log).toMatch(/failed: kubevirt\/.*\/tailvm\/cache/);
    await eventually(async () => ((await h.get(`/api/cts/${NS}/box`)).body as { phase: string }).phase === 'Stopped');

    // Pause applies to VMs only: the CT is skipped with the reason.
    const pause = (await h.post('/api/folders/action', { path: 'stack', action: 'pause' })).body as {
      results: ActionResult[];
    };
    expect(pause.results.map((x) => [x.name, x.status])).toEqual([
      ['cache', 'ok'],
      ['db', 'skipped'],
      ['box', 'skipped'],
    ]);
    expect(pause.results[2]?.reason).toBe('a CT cannot be paused (containers have no pause)');
    await eventually(
      async () => ((await h.get(`/api/vms/${NS}/cache/row`)).body as { status: string }).status === 'Paused',
    );
    const resume = (await h.post('/api/folders/action', { path: 'stack', action: 'resume' })).body as {
      results: ActionResult[];
    };
    expect(resume.results[0]).toMatchObject({ name: 'cache', status: 'ok' });
  });

  it('refuses an unknown action (400) and a pool that does not exist (404)', async () => {
    const bad = await h.post('/api/folders/action', { path: 'stack', action: 'delete' });
    expect(bad.status).toBe(400);
    expect(errorOf(bad)).toBe('action: must be one of start, stop, restart, pause, resume');
    expect((await h.post('/api/folders/action', { path: 'nope', action: 'start' })).status).toBe(404);
  });
});
