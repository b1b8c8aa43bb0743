/**
 * Bulk actions respect the apiserver: every cluster request goes through the cluster's one rate limiter, so a bulk
 * stop of 150 VMs reaches the embedded apiserver at no more than the configured QPS (requests counted as they
 * arrive there, per one-second window), another user's click is not queued behind the bulk user's requests, and a
 * run started with POST /api/bulk/runs reports progress and can be cancelled, the rest never sent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Identity } from '@/server/domain/identity';
import { appRouter } from '@/server/routers/_app';
import { createCallerFactory, createContextInner } from '@/server/trpc';
import { eventually, startHarness, type Harness } from './harness';

const QPS = 40;
const BURST = 10;
const FLEET = 150;
let h: Harness;
/** Every request the apiserver received: when (ms) and what. */
const seen: { at: number; method: string; path: string }[] = [];
/** When the limiter let each request go. */
const granted: number[] = [];

beforeAll(async () => {
  h = await startHarness({
    fleet: FLEET,
    speed: 50,
    requestTimeoutMs: 10_000,
    corral: { kubeRateLimit: { qps: QPS, burst: BURST } },
  });
  const decide = h.sim.faults.decide.bind(h.sim.faults);
  h.sim.faults.decide = (path, request) => {
    seen.push({ at: performance.now(), method: request?.method ?? 'UPGRADE', path });
    return decide(path, request);
  };
  const limiter = h.corral.cluster.http.limiter;
  const acquire = limiter.acquire.bind(limiter);
  limiter.acquire = (user, signal) => acquire(user, signal).then(() => void granted.push(performance.now()));
}, 90_000);
afterAll(async () => {
  await h?.close();
});

const createCaller = createCallerFactory(appRouter);
const as = (login: string) =>
  createCaller(
    createContextInner({
      services: h.corral.services,
      identity: { login, name: login, admin: true, enforced: true } satisfies Identity,
    }),
  );

/** VMs whose row says `status`, as bulk targets. */
function vmsIn(status: string) {
  return h.corral.services.fleet
    .vmRows()
    .filter((v) => v.status === status && !v.template)
    .map((v) => ({ type: 'vm' as const, namespace: v.namespace, name: v.name }));
}

/** The most of `at` (sorted ms) in any window of `windowMs` between `from` and `to`. */
function peak(at: number[], from: number, to: number, windowMs = 1000): number {
  const times = at.filter((t) => t >= from && t <= to);
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while ((times[i] as number) - (times[j] as number) >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}
const arrivals = () => seen.map((r) => r.at);

const stopsSent = (from: number) => seen.filter((r) => r.at >= from && r.method === 'PUT' && r.path.endsWith('/stop'));

describe('bulk actions under the rate limiter', () => {
  it('a bulk stop of every running VM completes with a result each and never exceeds burst + QPS a second', async () => {
    const targets = vmsIn('Running');
    expect(targets.length).toBeGreaterThan(100);
    const started = performance.now();
    const out = await as('alice').bulk.run({ action: 'stop', targets });
    const ended = performance.now();
    expect(out.results).toHaveLength(targets.length);
    expect(out.ok).toBe(targets.length);
    expect(out.cancelled).toBe(0);
    expect(stopsSent(started)).toHaveLength(targets.length);
    // The bucket: at most `burst` at once, then `qps` a second — no window of W seconds holds more than
    // burst + qps·W grants, and the whole run cannot be faster than (n - burst) / qps.
    expect(peak(granted, started, ended, 1000)).toBeLessThanOrEqual(BURST + QPS);
    expect(peak(granted, started, ended, 2000)).toBeLessThanOrEqual(BURST + 2 * QPS);
    expect(ended - started).toBeGreaterThanOrEqual(((targets.length - BURST) / QPS) * 1000 - 50);
    // Counted where they arrive, the same bound holds up to the jitter of a shared CPU (the cluster and Corral
    // share this process's event loop, so a stall can bunch requests granted apart).
    expect(peak(arrivals(), started, ended, 1000)).toBeLessThanOrEqual(Math.ceil((BURST + QPS) * 1.2));
    expect(peak(arrivals(), started, ended, 2000)).toBeLessThanOrEqual(Math.ceil((BURST + 2 * QPS) * 1.1));
  }, 60_000);

  it('another user’s click is served within a token or two while one user has 100 requests queued', async () => {
    await eventually(() => vmsIn('Stopped').length >= 101, 30_000, 'VMs stopped');
    const [mine, ...theirs] = vmsIn('Stopped');
    const alice = as('alice');
    let aliceDone = 0;
    const flood = theirs
      .slice(0, 100)
      .map((t) =>
        alice.vms.action({ namespace: t.namespace, name: t.name, action: 'start' }).finally(() => aliceDone++),
      );
    await new Promise((r) => setTimeout(r, 100)); // alice's burst is spent; her requests wait in the limiter
    const t0 = performance.now();
    await as('bob').vms.action({ namespace: mine!.namespace, name: mine!.name, action: 'start' });
    const bobMs = performance.now() - t0;
    const aliceBehind = 100 - aliceDone;
    await Promise.all(flood);
    // Round-robin: bob's requests wait for one of alice's turns each, not for her queue (100 / 40 QPS = 2.5 s):
    // most of hers are still waiting when his is done.
    expect(aliceBehind).toBeGreaterThan(60);
    expect(bobMs).toBeLessThan(1500);
  }, 60_000);

  it('POST /api/bulk/runs answers at once; the run shows progress and a cancel stops sending the rest', async () => {
    await eventually(() => vmsIn('Running').length >= 100, 30_000, 'VMs running');
    const targets = vmsIn('Running').slice(0, 100);
    const t0 = performance.now();
    const started = await h.post('/api/bulk/runs', { action: 'stop', targets });
    expect(started.status, started.text).toBe(202);
    const { task } = started.body as { task: string; total: number };
    expect(started.body).toEqual({ task, total: 100 });

    const running = await eventually(
      async () => {
        const r = await h.get(`/api/bulk/runs/${task}`);
        const b = r.body as { status: string; finished: number };
        return b.status === 'running' && b.finished >= 20 ? b : undefined;
      },
      10_000,
      'progress',
    );
    expect(running).toMatchObject({ action: 'stop', total: 100, results: [] });

    const cancel = await h.post(`/api/bulk/runs/${task}/cancel`);
    expect(cancel.status, cancel.text).toBe(200);
    expect((cancel.body as { pending: number }).pending).toBeGreaterThan(20);
    const ended = await eventually(
      async () => {
        const b = (await h.get(`/api/bulk/runs/${task}`)).body as {
          status: string;
          ok: number;
          failed: number;
          cancelled: number;
          results: { ok: boolean; message: string }[];
        };
        return b.status !== 'running' ? b : undefined;
      },
      10_000,
      'run ended',
    );
    expect(ended.status).toBe('cancelled');
    expect(ended.results).toHaveLength(100);
    expect(ended.cancelled).toBeGreaterThan(20);
    expect(ended.ok + ended.failed).toBe(100);
    expect(ended.results.filter((r) => r.message === 'cancelled before it was sent')).toHaveLength(ended.cancelled);
    // Nothing was sent for the cancelled guests: the apiserver saw exactly one stop per guest that succeeded.
    await new Promise((r) => setTimeout(r, 300));
    expect(stopsSent(t0)).toHaveLength(ended.ok);

    const again = await h.post(`/api/bulk/runs/${task}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: `bulk task ${task} is cancelled` });
    const task404 = await h.get('/api/bulk/runs/bulk-stop-nothing-1');
    expect(task404.status).toBe(404);
    const bad = await h.get('/api/bulk/runs/not-a-task');
    expect(bad.status).toBe(400);
    expect((bad.body as { error: string }).error).toMatch(/^task: must be a bulk task id/);
    const journal = (await h.get(`/api/tasks/${task}`)).body as { status: string; log: string; error: string };
    expect(journal.status).toBe('error');
    expect(journal.log).toContain('cancelled by ');
    expect(journal.error).toMatch(new RegExp(`^stop: ${ended.ok} ok, 0 failed, ${ended.cancelled} cancelled$`));
  }, 60_000);
});
