/**
 * Several clusters in one Corral: two embedded clusters (`home`, `lab`) served at once. Rows of both with their
 * `context`, routing by `context` (default: the first), an unknown context is a 404 naming it, tasks and pool
 * members resolve across clusters, the live feed and /metrics carry both, and one cluster that stops answering is
 * marked stale while the other keeps serving.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import type { NumberedEvent } from '@/server/domain/live-feed';
import type { FleetEvent } from '@/server/schemas/live';
import { KubeConfig } from '@kubernetes/client-node';
import { attachToCorral } from '@/server/consoles/index';
import { identityFor } from '@/server/identity-http';
import { connect } from '../consoles/harness';
import { eventually, httpClient, reply, taskEnd } from './harness';

let home: EmbeddedCluster;
let lab: EmbeddedCluster;
let corral: RunningCorral;

const { get, post } = httpClient(() => corral.url);

interface Row {
  context: string;
  namespace: string;
  name: string;
  status: string;
}

beforeAll(async () => {
  [home, lab] = await Promise.all([
    startEmbeddedCluster({ port: 0, fleet: 2, speed: 50, contextName: 'home' }),
    startEmbeddedCluster({ port: 0, fleet: 3, speed: 50, contextName: 'lab' }),
  ]);
  corral = await startCorral({
    kube: { yaml: home.kubeconfig },
    moreClusters: [{ kube: { yaml: lab.kubeconfig }, demo: true }],
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    requestTimeoutMs: 800,
    unreachableAfterMs: 1000,
    config: { pollMs: 50, waitTimeoutMs: 30_000 },
    prometheus: { intervalMs: 200 },
  });
  await eventually(() => corral.registry.status().every((c) => c.ready), 20_000, 'both clusters synced');
  // The consoles plug-in (start.ts attaches it when plugins are on): lab's consoles go through lab's own kubeconfig.
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(home.kubeconfig);
  attachToCorral({ http: corral.http, services: corral.services, kubeConfig, identityFor });
});

afterAll(async () => {
  await corral?.close();
  await Promise.all([home?.close(), lab?.close()]);
});

describe('several clusters', () => {
  it('lists the rows of both clusters, each with its context; ?context= narrows to one', async () => {
    const all = (await get('/api/vms')).body as Row[];
    expect(all.filter((r) => r.context === 'home').map((r) => r.name)).toEqual(['vm-00001', 'vm-00002']);
    expect(all.filter((r) => r.context === 'lab').map((r) => r.name)).toEqual(['vm-00001', 'vm-00002', 'vm-00003']);
    expect(all).toHaveLength(5);
    // GET /api/vms joins each cluster's cached JSON, and hands out the same bytes until a fleet changes.
    const joined = corral.registry.vmListJson();
    expect(corral.registry.vmListJson()).toBe(joined);
    expect(JSON.parse(joined.toString('utf8'))).toEqual(all);
    const onlyLab = (await get('/api/vms?context=lab')).body as Row[];
    expect(onlyLab.map((r) => r.context)).toEqual(['lab', 'lab', 'lab']);
    const nodes = (await get('/api/nodes')).body as { context: string }[];
    expect(new Set(nodes.map((n) => n.context))).toEqual(new Set(['home', 'lab']));
    const contexts = (await get('/api/contexts')).body as { context: string; default: boolean; ready: boolean }[];
    expect(contexts.map((c) => [c.context, c.default, c.ready])).toEqual([
      ['home', true, true],
      ['lab', false, true],
    ]);
  });

  it('routes by context, defaulting to the first; an unknown context is a 404 naming it', async () => {
    // The same namespace/name exists in both: the default answers from home, context=lab from lab.
    const ns = ((await get('/api/vms?context=lab')).body as Row[])[2]!.namespace;
    expect((await get(`/api/vms/${ns}/vm-00003/row`)).status).toBe(404);
    const labRow = await get(`/api/vms/${ns}/vm-00003/row?context=lab`);
    expect(labRow.status).toBe(200);
    expect((labRow.body as Row).context).toBe('lab');

    const unknown = await get(`/api/vms/${ns}/vm-00003/row?context=mars`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'context mars is not served by this Corral (contexts: home, lab)' });
    expect((await get('/api/vms?context=mars')).status).toBe(404);
    const blank = await get('/api/vms?context=has%20space');
    expect(blank.status).toBe(400);
    expect((blank.body as { error: string }).error).toContain('context');

    // A body field on a state change acts on that cluster only.
    const tagged = await post(`/api/vms/${ns}/vm-00003/tags`, { tag: 'far', on: true, context: 'lab' });
    expect(tagged.status).toBe(200);
    await eventually(
      async () =>
        ((await get('/api/vms?context=lab')).body as (Row & { tags: string[] })[]).some((r) => r.tags.includes('far')),
      10_000,
      'lab row tagged',
    );
    const homeRows = (await get('/api/vms?context=home')).body as (Row & { tags: string[] })[];
    expect(homeRows.some((r) => r.tags.includes('far'))).toBe(false);
  });

  it("finds a task of the second cluster without its context, and keeps each cluster's tasks in its journal", async () => {
    const ns = ((await get('/api/vms?context=lab')).body as Row[])[0]!.namespace;
    const created = await post('/api/vms', { name: 'far-away', image: 'fedora', namespace: ns, context: 'lab' });
    expect(created.status).toBe(201);
    const task = (created.body as { task: string }).task;
    expect((await taskEnd({ get }, task)).status).toBe('done');
    expect((await get(`/api/tasks/${task}?context=home`)).status).toBe(404);
    const tasks = (await get('/api/tasks')).body as { id: string }[];
    expect(tasks.map((t) => t.id)).toContain(task);
    const rows = (await get('/api/vms')).body as Row[];
    expect(rows.filter((r) => r.name === 'far-away').map((r) => r.context)).toEqual(['lab']);
  });

  it('pool members of both clusters resolve; a context Corral does not serve is refused', async () => {
    const homeRow = ((await get('/api/vms?context=home')).body as Row[])[0]!;
    const labRow = ((await get('/api/vms?context=lab')).body as Row[])[0]!;
    expect((await post('/api/folders', { path: 'span' })).status).toBeLessThan(300);
    for (const r of [homeRow, labRow]) {
      const added = await post('/api/folders/members', {
        path: 'span',
        ref: `kubevirt/${r.context}/${r.namespace}/${r.name}`,
      });
      expect(added.status).toBeLessThan(300);
    }
    const listing = await eventually(async () => {
      const l = (await get('/api/folders')).body as {
        folders: { path: string; members: { ref: string; context: string; missing: boolean; status: string }[] }[];
      };
      const span = l.folders.find((f) => f.path === 'span');
      return span && span.members.length === 2 ? span : undefined;
    });
    expect(listing.members.map((m) => [m.context, m.missing])).toEqual([
      ['home', false],
      ['lab', false],
    ]);
    const refused = await post('/api/folders/members', { path: 'span', ref: `kubevirt/mars/${labRow.namespace}/x` });
    expect(refused.status).toBe(404);
    expect((refused.body as { error: string }).error).toContain("'home', 'lab'");
  });

  it('the live feed carries both clusters: a snapshot of every row, and deletions name their cluster', async () => {
    const snap = corral.registry.snapshot();
    expect(snap.type).toBe('snapshot');
    if (snap.type !== 'snapshot') return;
    expect(new Set(snap.vms.map((v) => v.context))).toEqual(new Set(['home', 'lab']));
    expect(snap.clusters?.map((c) => c.context)).toEqual(['home', 'lab']);

    const seen: FleetEvent[] = [];
    const feed = corral.registry.feed();
    const stop = feed.subscribe((e: NumberedEvent) => seen.push(e.event));
    try {
      const ns = ((await get('/api/vms?context=lab')).body as Row[]).find((r) => r.name === 'far-away')!.namespace;
      const del = await fetch(`${corral.url}/api/vms/${ns}/far-away?context=lab`, { method: 'DELETE' });
      expect(del.status).toBe(200);
      await eventually(
        () => seen.some((e) => e.type === 'vm' && e.op === 'delete' && e.name === 'far-away' && e.context === 'lab'),
        15_000,
        'delete event with context',
      );
    } finally {
      stop();
    }
  });

  it('/metrics labels each series with its cluster', async () => {
    await corral.prometheus!.collectNow();
    const text = await (await fetch(`${corral.url}/metrics`)).text();
    expect(text).toContain('corral_backend_up{context="home",backend="kubevirt"} 1');
    expect(text).toContain('corral_backend_up{context="lab",backend="kubevirt"} 1');
    expect(text).toMatch(/corral_instance_running\{name="vm-00003",backend="kubevirt",context="lab",/);
    expect(text).toMatch(/corral_instances\{backend="kubevirt",context="home",state="ready"\}/);
  });

  it('a lab VM is stopped and started by bulk and action routes with context=lab; home is untouched', async () => {
    const ns = ((await get('/api/vms?context=lab')).body as Row[])[0]!.namespace;
    const rowOf = async (context: string) =>
      ((await get(`/api/vms?context=${context}`)).body as (Row & { running: boolean })[]).find(
        (r) => r.name === 'vm-00001',
      )!;
    expect((await rowOf('home')).running).toBe(true);
    const bulk = await post('/api/bulk', {
      action: 'stop',
      targets: [{ type: 'vm', namespace: ns, name: 'vm-00001' }],
      context: 'lab',
    });
    expect(bulk.status).toBe(200);
    expect((bulk.body as { ok: number }).ok).toBe(1);
    await eventually(async () => (await rowOf('lab')).status === 'Stopped', 15_000, 'lab vm-00001 stopped');
    expect((await rowOf('home')).running).toBe(true);
    expect((await rowOf('home')).status).toBe('Running');
    const started = await post(`/api/vms/${ns}/vm-00001/start`, { context: 'lab' });
    expect(started.status).toBe(200);
    await eventually(async () => (await rowOf('lab')).status === 'Running', 15_000, 'lab vm-00001 running again');
  });

  it('snapshots, export, upload, image sources, doctor, NADs, extensions and node history take context', async () => {
    const ns = ((await get('/api/vms?context=lab')).body as Row[])[0]!.namespace;
    // vm-00003 is only in lab: without a context the default (home) answers 404, with context=lab the lab VM.
    expect((await get(`/api/vms/${ns}/vm-00003/snapshots`)).status).toBe(404);
    const snaps = await get(`/api/vms/${ns}/vm-00003/snapshots?context=lab`);
    expect(snaps.status).toBe(200);
    expect(snaps.body).toEqual([]);
    // The export download (a raw route) picks the cluster by the same rule: lab's VM runs, so 409, not home's 404.
    expect((await get(`/api/vms/${ns}/vm-00003/export`)).status).toBe(404);
    const exported = await get(`/api/vms/${ns}/vm-00003/export?context=lab`);
    expect(exported.status).toBe(409);
    expect((exported.body as { error: string }).error).toMatch(/Running|running|stop/);
    const farExport = await get(`/api/vms/${ns}/vm-00003/export?context=mars`);
    expect(farExport.status).toBe(404);
    expect((farExport.body as { error: string }).error).toContain('context mars is not served');
    const upload = await reply(
      await fetch(`${corral.url}/api/datavolumes/${ns}/up-one/upload?size=1Gi&context=mars`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        body: Buffer.alloc(16),
      }),
    );
    expect(upload.status).toBe(404);
    expect((upload.body as { error: string }).error).toContain('context mars is not served');

    // The image library lives in each cluster: a source saved in lab is listed there only.
    const saved = await post('/api/sources', {
      name: 'lab-only',
      kind: 'url',
      uri: 'http://images.example/lab.qcow2',
      context: 'lab',
    });
    expect(saved.status).toBe(200);
    const names = async (context: string) =>
      ((await get(`/api/sources?context=${context}`)).body as { name: string }[]).map((s) => s.name);
    expect(await names('lab')).toContain('lab-only');
    expect(await names('home')).not.toContain('lab-only');
    const removed = await reply(await fetch(`${corral.url}/api/sources/lab-only?context=lab`, { method: 'DELETE' }));
    expect(removed.status).toBe(200);
    expect(await names('lab')).not.toContain('lab-only');

    expect((await get('/api/doctor?context=lab')).status).toBe(200);
    expect((await get('/api/nads?context=lab')).status).toBe(200);
    expect((await get('/api/metrics/top?context=lab')).status).toBe(200);
    const labNode = ((await get('/api/nodes?context=lab')).body as { name: string }[])[0]!.name;
    expect((await get(`/api/nodes/${labNode}/metrics/history?context=lab`)).status).toBe(200);
    for (const [method, path] of [
      ['POST', '/api/plugins/bootc/install'],
      ['DELETE', '/api/plugins/bootc?context=mars'],
      ['GET', '/api/doctor?context=mars'],
    ] as const) {
      const res = await reply(
        await fetch(corral.url + path, {
          method,
          headers: { 'content-type': 'application/json' },
          ...(method === 'POST' ? { body: JSON.stringify({ context: 'mars' }) } : {}),
        }),
      );
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((res.body as { error: string }).error).toContain('context mars is not served');
    }
  });

  it("consoles open the lab VM's serial console with context=lab; sessions are per cluster", async () => {
    const ns = ((await get('/api/vms?context=lab')).body as Row[])[0]!.namespace;
    const ws = corral.url.replace('http', 'ws');
    // Without a context the default cluster is asked, which has no vm-00003.
    const homeSide = connect(`${ws}/api/tty/${ns}/vm-00003`, { origin: corral.url });
    await homeSide.opened;
    const homeClose = await homeSide.closed;
    expect(homeClose.code).toBe(4004);
    expect(homeClose.reason).toContain(`No VM ${ns}/vm-00003`);
    const mars = connect(`${ws}/api/tty/${ns}/vm-00003?context=mars`, { origin: corral.url });
    await mars.opened;
    const marsClose = await mars.closed;
    expect(marsClose.code).toBe(4004);
    expect(marsClose.reason).toContain('context mars is not served');

    const p = connect(`${ws}/api/tty/${ns}/vm-00003?context=lab`, { origin: corral.url });
    await p.opened;
    p.ws.send(Buffer.from('\r'));
    await p.waitFor((all) => all.toString().includes('login: '), 20_000);
    const sessions = await get(`/api/vms/${ns}/vm-00003/console-sessions?context=lab`);
    expect(sessions.status).toBe(200);
    expect((sessions.body as { serial: unknown }).serial).not.toBeNull();
    // The same namespace/name on home holds no session: consoles are keyed by cluster.
    const homeSessions = await get(`/api/vms/${ns}/vm-00001/console-sessions`);
    expect((homeSessions.body as { serial: unknown }).serial).toBeNull();
    p.ws.close();
    await p.closed;
    const log = await get(`/api/vms/${ns}/vm-00003/console-log?context=lab`);
    expect((log.body as { log: string }).log).toContain('login: ');
  });

  it('one cluster that stops answering is marked stale while the other keeps serving', async () => {
    lab.faults.stopAnswering('refuse');
    lab.faults.dropWatches();
    try {
      await eventually(
        async () => ((await get('/api/contexts')).body as { context: string; ready: boolean }[])[1]?.ready === false,
        15_000,
        'lab marked not ready',
      );
      const contexts = (await get('/api/contexts')).body as { context: string; ready: boolean; problems: string[] }[];
      expect(contexts[0]).toMatchObject({ context: 'home', ready: true });
      expect(contexts[1]!.problems.length).toBeGreaterThan(0);
      // Home answers as before; lab's rows are its last-known state, still listed.
      expect((await get('/readyz')).status).toBe(200);
      const rows = (await get('/api/vms')).body as Row[];
      expect(rows.filter((r) => r.context === 'lab').length).toBeGreaterThanOrEqual(3);
      expect(rows.filter((r) => r.context === 'home').length).toBeGreaterThanOrEqual(2);
      const homeNs = rows.find((r) => r.context === 'home')!.namespace;
      expect((await post(`/api/vms/${homeNs}/vm-00001/tags`, { tag: 'alive', on: true })).status).toBe(200);
      const stale = await post(`/api/vms/${homeNs}/vm-00001/tags`, { tag: 'x', on: true, context: 'lab' });
      expect(stale.status).toBe(503);
      const snap = corral.registry.snapshot();
      expect(snap.type === 'snapshot' && snap.clusters?.map((c) => c.ready)).toEqual([true, false]);
      await corral.prometheus!.collectNow();
      const text = await (await fetch(`${corral.url}/metrics`)).text();
      expect(text).toContain('corral_backend_up{context="lab",backend="kubevirt"} 0');
    } finally {
      lab.faults.resumeAnswering();
    }
    await eventually(
      async () => ((await get('/api/contexts')).body as { ready: boolean }[]).every((c) => c.ready),
      20_000,
      'lab ready again',
    );
  });
});
