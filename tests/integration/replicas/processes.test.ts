/**
 * Two Corral processes (server.ts, API only) on one embedded cluster, with 2 s leases: a replica killed with
 * SIGKILL mid-task (an image import) has that task marked interrupted by the survivor within about a lease period, and a rolling
 * restart of both (SIGTERM, then a new process) under a steady request load answers no request with a 5xx or a
 * dropped connection. The load balancer in this file does what a Service's endpoints do: it sends only to
 * replicas whose /readyz said 200 at the last probe.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { launchReplica, until, type Replica } from './process';

const LEASE_SECONDS = 2;

let sim: EmbeddedCluster;
let dir: string;
let kubeconfig: string;
const replicas: Replica[] = [];

const launch = (name: string) =>
  launchReplica(replicas, {
    name,
    kubeconfig,
    env: {
      CORRAL_LEASE_SECONDS: String(LEASE_SECONDS),
      CORRAL_TASK_FLUSH_MS: '100',
      CORRAL_DRAIN_DELAY_MS: '600',
      CORRAL_SHUTDOWN_GRACE_MS: '5000',
    },
  });

interface TaskRow {
  id: string;
  action: string;
  target: string;
  status: string;
  error: string;
  log: string;
}

const tasksOf = async (r: Replica): Promise<TaskRow[]> =>
  (await (await fetch(`${r.url}/api/tasks?limit=1000`)).json()) as TaskRow[];

beforeAll(async () => {
  // Slow controllers (speed 0.05: a VM takes minutes to boot) keep a start task running while we kill its replica.
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 0.05 });
  dir = mkdtempSync(join(tmpdir(), 'corral-replicas-'));
  kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, sim.kubeconfig);
});

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  await Promise.all(replicas.map((r) => r.exited));
  await sim.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('two Corral processes on one cluster', () => {
  let interruptedId = '';

  it('a task started on A is listed with its log on B; A killed mid-task → B marks it interrupted', async () => {
    const a = await launch('replica-a');
    const b = await launch('replica-b');
    const post = (r: Replica, path: string, body?: unknown) =>
      fetch(`${r.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body ?? {}),
      });
    // An image import follows the DataVolume until it is imported: minutes at this cluster speed.
    const imported = await post(a, '/api/datavolumes', {
      name: 'slow',
      url: 'https://images.example.com/slow.qcow2',
      size: '1Gi',
    });
    expect(imported.status).toBeLessThan(300);
    const onB = await until('the import task on B', async () =>
      (await tasksOf(b)).find((t) => t.action === 'import' && t.status === 'running' && t.log.includes('importing')),
    );
    expect(onB.status).toBe('running');
    interruptedId = onB.id;

    a.child.kill('SIGKILL');
    await a.exited;
    const killedAt = Date.now();
    const ended = await until(
      'B marks the task interrupted',
      async () => {
        const t = (await tasksOf(b)).find((x) => x.id === onB.id);
        return t?.status === 'error' ? t : undefined;
      },
      4 * LEASE_SECONDS * 1000,
    );
    const tookMs = Date.now() - killedAt;
    console.log(`[replicas] interrupted task marked ${tookMs} ms after SIGKILL (lease ${LEASE_SECONDS} s)`);
    expect(ended.error).toBe('interrupted (replica gone)');
    expect(ended.log).toMatch(/importing[\s\S]*error: interrupted \(replica gone\)$/);
    // Within a lease period plus one check period (a third of it) and the request time.
    expect(tookMs).toBeLessThan(LEASE_SECONDS * 1000 * 1.34 + 1500);
  }, 120_000);

  it('a rolling restart of both replicas under steady load returns no 5xx and keeps the journal', async () => {
    const b = replicas.find((r) => r.name === 'replica-b')!;
    const a2 = await launch('replica-a2');
    const inRotation = new Set<Replica>([a2, b]);
    let stop = false;
    const failures: string[] = [];
    let sent = 0;
    // Endpoints: probe readiness every 100 ms; only ready replicas receive traffic.
    const prober = (async () => {
      while (!stop) {
        for (const r of [...replicas].filter((x) => x.child.exitCode === null)) {
          const ready = await fetch(`${r.url}/readyz`)
            .then((res) => res.status === 200)
            .catch(() => false);
          if (ready) inRotation.add(r);
          else inRotation.delete(r);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const load = (async () => {
      let i = 0;
      while (!stop) {
        const targets = [...inRotation];
        const r = targets[i++ % Math.max(1, targets.length)];
        if (r) {
          sent++;
          const path = i % 2 ? '/api/vms' : '/api/tasks?limit=20';
          await fetch(`${r.url}${path}`)
            .then((res) => {
              if (res.status >= 500) failures.push(`${r.name} ${path} → ${res.status}`);
              return res.arrayBuffer();
            })
            .catch((err: unknown) => failures.push(`${r.name} ${path} → ${String(err)}`));
        }
        await new Promise((res) => setTimeout(res, 10));
      }
    })();

    // Roll B, then A2, as a Deployment's rolling update would (maxUnavailable 0: the new one is ready first).
    const b2 = await launch('replica-b2');
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    const a3 = await launch('replica-a3');
    a2.child.kill('SIGTERM');
    expect(await a2.exited).toBe(0);
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await Promise.all([prober, load]);
    console.log(`[replicas] rolling restart: ${sent} requests, ${failures.length} failed`);
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(50);
    // The journal survived both generations: the interrupted task is still there, on both new replicas.
    for (const r of [a3, b2]) {
      const t = (await tasksOf(r)).find((x) => x.id === interruptedId);
      expect(t).toMatchObject({ status: 'error', error: 'interrupted (replica gone)' });
    }
  }, 180_000);
});
