/**
 * Two Corral replicas (in this process, no UI, no plug-ins) on one embedded cluster, with leases and journal
 * batching sped up: the durable task journal is shared and survives restarts, the metrics sampler runs on the
 * leader only and moves, and concurrent pool/source writes through both replicas lose nothing.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import type { Caller } from '@/server/domain/services';
import { taskConfigMapName } from '@/server/domain/task-store';
import { createProxmoxHandler } from '@/proxmox/handler';
import { parseGrants } from '@/proxmox/auth/tokens';
import { ADMIN_SECRET, TOKEN_CONFIG, px } from '../proxmox/harness';

let sim: EmbeddedCluster;
const running: RunningCorral[] = [];

const admin: Caller = { identity: { login: 'alice@github', name: 'Alice', admin: true, enforced: false } };

async function replica(name: string, retainCount = 1000): Promise<RunningCorral> {
  const corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    requestTimeoutMs: 10_000,
    metricsIntervalMs: 200,
    config: { pollMs: 50, waitTimeoutMs: 30_000 },
    replica: { identity: name, leaseSeconds: 1, flushMs: 50, retainCount, retainDays: 14 },
  });
  await corral.cluster.cache.waitForSync(20_000);
  running.push(corral);
  return corral;
}

async function stop(corral: RunningCorral): Promise<void> {
  running.splice(running.indexOf(corral), 1);
  await corral.close();
}

async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const leaders = () => running.filter((c) => c.services.replicas.elector.isLeader);

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
});

// A failed test must not leave its replicas campaigning for the next test's leadership.
afterEach(async () => {
  for (const c of [...running]) await stop(c);
});

afterAll(async () => {
  await sim.close();
});

describe('durable shared task journal', () => {
  it('a task started on A is listed with its log on B, live, and ends there too', async () => {
    const a = await replica('journal-a');
    const b = await replica('journal-b');
    const seenOnB: string[] = [];
    const unsubscribe = b.services.journal.subscribe((t) => seenOnB.push(`${t.id}:${t.status}`));
    const task = a.services.journal.start('test-op', 'tailvm/web', 'alice@github');
    task.log('first step');
    task.progress(40);
    task.log('second step');
    const onB = await until('the running task on B', () => {
      const t = b.services.tasks.list(1000).find((x) => x.id === task.id);
      return t?.log.includes('second step') ? t : undefined;
    });
    expect(onB).toMatchObject({ status: 'running', progress: 40, caller: 'alice@github', target: 'tailvm/web' });
    expect(onB.log).toMatch(/first step\n.*second step/);
    // Through B's REST API as well.
    const rest = (await (await fetch(`${b.url}/api/tasks/${task.id}`)).json()) as { status: string; log: string };
    expect(rest.status).toBe('running');
    task.done('finished');
    await until('done on B', () => b.services.journal.get(task.id)?.status === 'done');
    expect(b.services.journal.get(task.id)?.log).toMatch(/finished$/);
    expect(seenOnB).toContain(`${task.id}:running`);
    expect(seenOnB).toContain(`${task.id}:done`);
    unsubscribe();
    // One ConfigMap per task, owned by the replica that ran it.
    const cm = (await (
      await fetch(`${sim.url}/api/v1/namespaces/tailvm/configmaps/${taskConfigMapName(task.id)}`)
    ).json()) as { metadata: { labels: Record<string, string>; annotations: Record<string, string> } };
    expect(cm.metadata.labels['corral.dev/task-status']).toBe('done');
    expect(cm.metadata.annotations['corral.dev/replica']).toBe('journal-a');
    await stop(a);
    await stop(b);
  });

  it('batches a 500-line log into a handful of writes', async () => {
    const a = await replica('batch-a');
    const before = a.services.replicas.store.requests;
    const task = a.services.journal.start('bulk', 'tailvm/web', 'alice@github');
    for (let i = 0; i < 500; i++) task.log(`line ${i}`);
    task.done();
    await a.services.replicas.store.flush();
    expect(a.services.replicas.store.requests - before).toBeLessThanOrEqual(3);
    await stop(a);
  });

  it('a restart of both replicas keeps the newest 1,000 tasks and prunes the rest', async () => {
    const a = await replica('keep-a', 1000);
    const b = await replica('keep-b', 1000);
    const ids: string[] = [];
    for (let i = 0; i < 1010; i++) {
      const journal = (i % 2 ? a : b).services.journal;
      const t = journal.start('keep', `tailvm/vm-${i}`, 'alice@github');
      t.done(`task ${i}`);
      ids.push(t.id);
      if (i % 100 === 99) await Promise.all([a, b].map((c) => c.services.replicas.store.flush()));
      // Retention orders by start time; tasks started in the same millisecond tie, so keep the cut unambiguous.
      if (i === 9) await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all([a, b].map((c) => c.services.replicas.store.flush()));
    // One round, by whichever replica leads, and before either watch cache has caught up: the cut is counted on
    // the cluster's journal, so it is exact at once (it once left 1,001 when it was counted on a lagging cache).
    const leader = await until('a leader', () => leaders()[0]);
    await leader.services.replicas.store.prune();
    const inCluster = async () =>
      (await a.cluster.listPage('ConfigMap', { namespace: 'tailvm', labelSelector: 'corral.dev/journal=task' })).items;
    expect(await inCluster()).toHaveLength(1000);
    await until('both hold exactly 1000', () => [a, b].every((r) => r.services.replicas.store.size() === 1000), 45_000);
    await stop(a);
    await stop(b);
    const c = await replica('keep-c', 1000);
    const d = await replica('keep-d', 1000);
    for (const r of [c, d]) {
      const listed = r.services.tasks.list(1000);
      expect(listed).toHaveLength(1000);
      expect(new Set(listed.map((t) => t.id))).toEqual(new Set(ids.slice(10)));
      expect(r.services.tasks.get(ids[1009]!).log).toMatch(/task 1009$/);
      expect(() => r.services.tasks.get(ids[0]!)).toThrow(/not found/);
    }
    await stop(c);
    await stop(d);
  }, 150_000);
});

describe('the Proxmox door across replicas and restarts', () => {
  it('a ticket from A is valid on B, and a UPID minted on A resolves on B and after A is gone', async () => {
    const mount = (c: RunningCorral) => {
      const handler = createProxmoxHandler({
        services: c.services,
        grants: parseGrants(TOKEN_CONFIG),
        log: () => undefined,
      });
      c.http.mountProxmox((req, res) => handler.handle(req, res));
      return handler;
    };
    const a = await replica('px-a');
    const b = await replica('px-b');
    const handlers = [mount(a), mount(b)];
    const login = await px(a.url).post('/access/ticket', { username: 'root@pam', password: ADMIN_SECRET });
    const { ticket } = login.body.data as { ticket: string };
    expect((await px(b.url, { cookie: ticket }).get('/nodes')).status).toBe(200);

    const task = a.services.journal.start('test-op', 'tailvm/web', 'root@pam');
    task.log('step one');
    task.done('finished');
    await a.services.replicas.store.flush();
    const listed = (await px(a.url, { cookie: ticket }).get('/cluster/tasks')).body.data as { upid: string }[];
    const upid = listed.find((t) => t.upid.includes(':test-op:'))?.upid;
    expect(upid).toBeDefined();
    const node = upid!.split(':')[1]!;
    await until('the task on B', () => b.services.journal.get(task.id));
    const status = await px(b.url, { cookie: ticket }).get(`/nodes/${node}/tasks/${encodeURIComponent(upid!)}/status`);
    expect(status.body.data).toMatchObject({ upid, status: 'stopped', exitstatus: 'OK' });
    for (const h of handlers) h.close();
    await stop(a);
    await stop(b);
    // A new replica (a restart) resolves the same UPID from the durable journal.
    const c = await replica('px-c');
    const handler = mount(c);
    const log = await px(c.url, { token: `root@pam!ci=${ADMIN_SECRET}` }).get(
      `/nodes/${node}/tasks/${encodeURIComponent(upid!)}/log`,
    );
    expect((log.body.data as { t: string }[]).map((l) => l.t)).toEqual([
      expect.stringMatching(/step one$/),
      expect.stringMatching(/finished$/),
      'TASK OK',
    ]);
    handler.close();
    await stop(c);
  });
});

describe('graceful shutdown', () => {
  it('/readyz says 503 first while requests are still served, then the listener closes', async () => {
    const a = await replica('drain-a');
    expect((await fetch(`${a.url}/readyz`)).status).toBe(200);
    running.splice(running.indexOf(a), 1);
    const task = a.services.journal.start('long-op', 'tailvm/web', 'alice@github');
    const done = a.shutdown({ drainDelayMs: 400, graceMs: 1500 });
    await new Promise((r) => setTimeout(r, 100));
    const ready = await fetch(`${a.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ error: 'shutting down' });
    expect((await fetch(`${a.url}/api/vms`)).status).toBe(200);
    await done;
    await expect(fetch(`${a.url}/readyz`)).rejects.toThrow();
    // A task still running at the end of the grace period is ended, in the journal too, with the reason.
    expect(a.services.journal.get(task.id)).toMatchObject({
      status: 'error',
      error: 'interrupted (replica shut down)',
    });
    const b = await replica('drain-b');
    expect(b.services.journal.get(task.id)).toMatchObject({
      status: 'error',
      error: 'interrupted (replica shut down)',
    });
    await stop(b);
  });
});

describe('leader election', () => {
  it('the metrics sampler runs on exactly one replica and moves when the leader goes', async () => {
    const a = await replica('lead-a');
    const b = await replica('lead-b');
    await until('one leader', () => leaders().length === 1);
    const ids = (list: RunningCorral[]) => list.map((c) => c.services.replicas.identity);
    const samplers = () => [a, b].filter((c) => running.includes(c) && c.cluster.metrics.running);
    expect(ids(samplers())).toEqual(ids(leaders()));
    // Over a few lease periods it stays exactly one.
    for (let i = 0; i < 10; i++) {
      await new Promise((r) => setTimeout(r, 150));
      expect(leaders()).toHaveLength(1);
      expect(samplers()).toHaveLength(1);
    }
    const first = leaders()[0]!;
    const other = first === a ? b : a;
    await stop(first);
    await until('the survivor leads', () => other.services.replicas.elector.isLeader, 5_000);
    expect(other.cluster.metrics.running).toBe(true);
    await stop(other);
  });

  it('a crashed leader (no release) is replaced within about a lease period', async () => {
    const a = await replica('crash-a');
    await until('a leads', () => a.services.replicas.elector.isLeader);
    const b = await replica('crash-b');
    expect(b.services.replicas.elector.isLeader).toBe(false);
    // Freeze A's renewals without releasing the Lease: what a SIGKILL looks like to B.
    const lease = a.services.replicas.elector as unknown as { timer: NodeJS.Timeout };
    clearInterval(lease.timer);
    const since = Date.now();
    await until('B takes over', () => b.services.replicas.elector.isLeader, 5_000);
    expect(Date.now() - since).toBeLessThan(2_500);
    await stop(a);
    await stop(b);
  });
});

describe('concurrent writes through both replicas', () => {
  // Every write is a read-modify-write of one ConfigMap under a resourceVersion precondition, retried on 409.
  it('50 concurrent writes (25 pool creations, 25 source saves) split across A and B lose nothing', async () => {
    const a = await replica('pools-a');
    const b = await replica('pools-b');
    await Promise.all([
      ...Array.from({ length: 25 }, (_, i) => (i % 2 ? a : b).services.pools.create(admin, `team-${i}`, `pool ${i}`)),
      ...Array.from({ length: 25 }, (_, i) =>
        (i % 2 ? b : a).services.sources.save(admin, {
          name: `src-${i}`,
          kind: 'url',
          uri: `https://images.example.com/disk-${i}.qcow2`,
        }),
      ),
    ]);
    for (const r of [a, b]) {
      const pools = await until('every pool', () => {
        const paths = Object.keys(r.services.pools.store.current());
        return paths.length >= 25 ? paths : undefined;
      });
      expect(pools.filter((p) => p.startsWith('team-'))).toHaveLength(25);
      const sources = (await r.services.sources.list()).map((s) => s.name).filter((n) => n.startsWith('src-'));
      expect(sources).toHaveLength(25);
    }
    await stop(a);
    await stop(b);
  }, 90_000);
});

describe('a fresh cluster', () => {
  it('creates Corral’s namespace for its heartbeat, so the journal is durable from the first task', async () => {
    const other = 'corral-fresh';
    expect((await fetch(`${sim.url}/api/v1/namespaces/${other}`)).status).toBe(404);
    const d = await startCorral({
      kube: { yaml: sim.kubeconfig },
      demo: true,
      port: 0,
      host: '127.0.0.1',
      next: false,
      plugins: false,
      config: { defaultNamespace: other },
      replica: { identity: 'fresh-b', leaseSeconds: 1, flushMs: 50 },
    });
    running.push(d);
    expect((await fetch(`${sim.url}/api/v1/namespaces/${other}`)).status).toBe(200);
    const task = d.services.journal.start('first', `${other}/x`, 'alice');
    task.done();
    await d.services.replicas.store.flush();
    expect((await fetch(`${sim.url}/api/v1/namespaces/${other}/configmaps/${taskConfigMapName(task.id)}`)).status).toBe(
      200,
    );
    await stop(d);
  });
});
