/**
 * `npm run bench:scale` — the figures of issue 17 that Corral can measure today (see docs/scale.md for what is
 * still open). Corral runs as its own process (`server.ts --no-ui`) against an embedded cluster in this process.
 *
 * 1. Bulk stop of every running VM of a generated fleet (default 1,000 VMs, controllers on): requests per second
 *    as they arrive at the apiserver (peak over any one-second window, and over any two seconds) against the
 *    configured limit (--kube-qps/--kube-burst, default 50/100), and the total time.
 * 2. Bytes per live change at 1,000, 10,000 and 50,000 VMs (SCALE_SIZES): one VM's label changes on the apiserver
 *    and a `live.fleet` subscriber (in frames, as the UI subscribes, offering gzip as a browser does) receives it;
 *    the bytes of that change on the wire (compressed) and decoded (the SSE text).
 * 3. GET /api/vms at the same sizes, identity vs gzip vs brotli: bytes and request → body time on loopback.
 * 4. Cold sync at the same sizes: Corral's watch cache (in this process) from nothing to synced — by watch-list,
 *    and by paginated lists as against an apiserver without it — against the raw paginated list (pages of 500,
 *    each parsed) of VMs and VMIs from the same apiserver; best of three each.
 * 6. Memory: the Corral process's RSS once synced (rows served, 2 s idle) at each size, and the slope per VM between
 *    10,000 and 50,000 VMs (aim ≤ 6 KB).
 * 5. The UI (bench/scale-ui.ts) at 10,000 and 50,000 VMs in headless Chromium, on loopback and through a throttled
 *    link: first rows, change → screen, filter keystroke p95, the tab's JS heap.
 * Prints the machine's core count; results go in the README's benchmark table.
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { request } from 'node:http';
import { createGunzip } from 'node:zlib';
import { KubeCluster, loadKubeConfig } from '../src/server/cluster';
import { startEmbeddedCluster } from '../src/sim/index';
import { resourceKey } from '../src/sim/store/types';
import { percentile, seedBenchFleet } from './lib/fleet';
import { rssMb, startCorralProcess } from './lib/corral-process';
import { scaleUi } from './scale-ui';

const BULK_VMS = Number(process.env.SCALE_BULK_VMS ?? 1000);
const SIZES = (process.env.SCALE_SIZES ?? '1000,10000,50000').split(',').map(Number);
const QPS = Number(process.env.CORRAL_KUBE_QPS ?? 50);
const BURST = Number(process.env.CORRAL_KUBE_BURST ?? 100);

async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 300_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

function peak(times: number[], windowMs: number): number {
  let most = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while ((times[i] as number) - (times[j] as number) >= windowMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

async function stopProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
}

const lines: string[] = [`cores: ${availableParallelism()}`];
const say = (line: string) => {
  lines.push(line);
  console.log(line);
};

// 1. Bulk stop under the rate limiter (SCALE_BULK_VMS=0 skips it).
if (BULK_VMS > 0) {
  const dir = mkdtempSync(join(tmpdir(), 'corral-scale-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sim = await startEmbeddedCluster({ port: 0, fleet: BULK_VMS, speed: 50, kubeconfigPath });
  const arrivals: number[] = [];
  const decide = sim.faults.decide.bind(sim.faults);
  sim.faults.decide = (path, req) => {
    arrivals.push(performance.now());
    return decide(path, req);
  };
  const { child, url } = await startCorralProcess(kubeconfigPath, [
    '--kube-qps',
    String(QPS),
    '--kube-burst',
    String(BURST),
  ]);
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'readyz');
    const rows = (await (await fetch(`${url}/api/vms`)).json()) as {
      namespace: string;
      name: string;
      status: string;
    }[];
    const targets = rows
      .filter((r) => r.status === 'Running')
      .map((r) => ({ type: 'vm', namespace: r.namespace, name: r.name }));
    await new Promise((r) => setTimeout(r, 3000)); // let the start-up lists and watches pass
    const from = performance.now();
    const res = await fetch(`${url}/api/bulk`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'stop', targets }),
    });
    const out = (await res.json()) as { ok: number; failed: number };
    const to = performance.now();
    const during = arrivals.filter((t) => t >= from && t <= to);
    say(
      `bulk stop of ${targets.length} running VMs (of ${BULK_VMS}): ${out.ok} ok, ${out.failed} failed in ${((to - from) / 1000).toFixed(1)} s; ` +
        `${during.length} apiserver requests, peak ${peak(during, 1000)}/s (limit ${QPS} QPS + burst ${BURST} = ${QPS + BURST} in any second), ` +
        `peak ${peak(during, 2000)} in 2 s (limit ${2 * QPS + BURST})`,
    );
  } finally {
    await stopProcess(child);
    await sim.close();
  }
}

/** A raw GET: body bytes as sent and the time from request to the last byte. */
function rawGet(url: string, headers: Record<string, string>): Promise<{ bytes: number; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ bytes, ms: performance.now() - t0 }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * `live.fleet` in frames as the UI opens it (no list position, so with a snapshot), asking for gzip as a browser
 * does: `wire` counts the bytes as they arrive (compressed), `decoded` the same stream after gunzip. Node's fetch
 * would hand over only the decoded bytes, hence a raw request.
 */
function openLiveFeed(base: string, signal: AbortSignal) {
  const input = encodeURIComponent(JSON.stringify({ json: { coalesce: true } }));
  const feed = { wire: 0, decoded: 0, snapshot: false, snapshotWire: 0, snapshotDecoded: 0, done: Promise.resolve() };
  return new Promise<typeof feed>((resolve, reject) => {
    const req = request(
      `${base}?input=${input}`,
      { headers: { accept: 'text/event-stream', 'accept-encoding': 'gzip' }, signal },
      (res) => {
        if (res.headers['content-encoding'] !== 'gzip') {
          reject(new Error(`live.fleet answered ${res.headers['content-encoding'] ?? 'identity'}, not gzip`));
          return;
        }
        const gunzip = createGunzip();
        let text = '';
        res.on('data', (c: Buffer) => (feed.wire += c.length));
        gunzip.on('data', (c: Buffer) => {
          feed.decoded += c.length;
          if (feed.snapshot) return;
          text += c.toString();
          // The snapshot frame ends with a blank line; everything so far is the stream's opening.
          if (text.includes('"snapshot"') && /\n\n/.test(text.slice(text.indexOf('"snapshot"')))) {
            feed.snapshot = true;
            feed.snapshotWire = feed.wire;
            feed.snapshotDecoded = feed.decoded;
            text = '';
          }
        });
        feed.done = new Promise<void>((done) => {
          res.on('close', () => done());
          res.on('error', () => done());
        });
        res.on('error', () => undefined);
        gunzip.on('error', () => undefined);
        res.pipe(gunzip);
        resolve(feed);
      },
    );
    req.on('error', (err) => (signal.aborted ? undefined : reject(err)));
    req.end();
  });
}

/** Every page (`limit=500`) of VMs and of VMIs from the apiserver, each page parsed: the raw cold list. */
async function rawPagedList(simUrl: string): Promise<number> {
  const t0 = performance.now();
  for (const plural of ['virtualmachines', 'virtualmachineinstances']) {
    let token = '';
    do {
      const res = await fetch(
        `${simUrl}/apis/kubevirt.io/v1/${plural}?limit=500${token ? `&continue=${encodeURIComponent(token)}` : ''}`,
        { headers: { authorization: 'Bearer sim-admin-token' } },
      );
      token = ((await res.json()) as { metadata?: { continue?: string } }).metadata?.continue ?? '';
    } while (token);
  }
  return performance.now() - t0;
}

/**
 * Corral's watch cache (the cluster layer, in this process) from nothing to synced: every kind by watch-list, or
 * (`watchList: false`) by lists in pages of 500 as against an apiserver without watch-list.
 */
async function cacheSync(kubeconfig: string, watchList: boolean): Promise<number> {
  const cluster = new KubeCluster(loadKubeConfig({ yaml: kubeconfig }), {
    rateLimit: { qps: 0, burst: 1 },
    watchList,
    log: () => {},
  });
  const t0 = performance.now();
  await cluster.cache.start();
  await cluster.cache.waitForSync(300_000);
  const ms = performance.now() - t0;
  await cluster.stop();
  return ms;
}

/** Corral's RSS (MB) once synced, per fleet size. */
const rss = new Map<number, number>();
for (const n of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), 'corral-scale-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [], kubeconfigPath });
  seedBenchFleet(sim.store, n);
  // Best of three each, alternating, so all see the same warm apiserver.
  const raws: number[] = [];
  const syncs: number[] = [];
  const paged: number[] = [];
  for (let i = 0; i < 3; i++) {
    raws.push(await rawPagedList(sim.url));
    syncs.push(await cacheSync(sim.kubeconfig, true));
    paged.push(await cacheSync(sim.kubeconfig, false));
  }
  const raw = Math.min(...raws);
  const sync = Math.min(...syncs);
  const pagedSync = Math.min(...paged);
  say(
    `${n.toLocaleString('en')} VMs: watch cache cold sync by watch-list ${sync.toFixed(0)} ms vs raw paged VM+VMI list ${raw.toFixed(0)} ms → ${(sync / raw).toFixed(2)}× (aim ≤ 2×); by paged lists ${pagedSync.toFixed(0)} ms → ${(pagedSync / raw).toFixed(2)}×`,
  );
  const { child, url } = await startCorralProcess(kubeconfigPath);
  const abort = new AbortController();
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'readyz');
    await waitFor(async () => ((await (await fetch(`${url}/api/vms`)).json()) as unknown[]).length === n, `${n} rows`);
    await new Promise((r) => setTimeout(r, 2000));
    rss.set(n, rssMb(child.pid!));
    say(`${n.toLocaleString('en')} VMs: Corral RSS synced ${rss.get(n)!.toFixed(0)} MB`);

    // 2. Bytes per live change: on the wire (gzip, as a browser receives the stream) and decoded.
    const feed = await openLiveFeed(`${url}/trpc/live.fleet`, abort.signal);
    await waitFor(() => Promise.resolve(feed.snapshot), 'snapshot');
    await new Promise((r) => setTimeout(r, 1000));
    const perChange: { wire: number; decoded: number }[] = [];
    const vms = resourceKey('kubevirt.io', 'virtualmachines');
    for (let i = 0; i < 20; i++) {
      const before = { wire: feed.wire, decoded: feed.decoded };
      sim.store.mutate(vms, 'bench', `vm-${String(i * 7).padStart(5, '0')}`, (o) => {
        o.metadata.labels = { ...o.metadata.labels, 'corral.dev/tag.bench': String(i) };
      });
      await waitFor(() => Promise.resolve(feed.decoded > before.decoded), 'the change on the feed', 10_000);
      await new Promise((r) => setTimeout(r, 300)); // anything else this change causes
      perChange.push({ wire: feed.wire - before.wire, decoded: feed.decoded - before.decoded });
    }
    const wire = perChange.map((c) => c.wire).sort((a, b) => a - b);
    const decoded = perChange.map((c) => c.decoded).sort((a, b) => a - b);
    say(
      `${n.toLocaleString('en')} VMs: bytes per live change (frames) on the wire (gzip) p50 ${percentile(wire, 50)} B, max ${wire.at(-1)} B; ` +
        `decoded p50 ${percentile(decoded, 50)} B, max ${decoded.at(-1)} B (stream opened with ${(feed.snapshotWire / 1024).toFixed(0)} KiB on the wire, ${(feed.snapshotDecoded / 1024).toFixed(0)} KiB decoded)`,
    );

    // 3. GET /api/vms compressed or not.
    for (const coding of ['identity', 'gzip', 'br']) {
      const samples: number[] = [];
      let bytes = 0;
      for (let i = 0; i < 10; i++) {
        const r = await rawGet(`${url}/api/vms`, { 'accept-encoding': coding });
        samples.push(r.ms);
        bytes = r.bytes;
      }
      samples.sort((a, b) => a - b);
      say(
        `${n.toLocaleString('en')} VMs: GET /api/vms ${coding}: ${(bytes / 1024).toFixed(0)} KiB, loopback p50 ${percentile(samples, 50).toFixed(1)} ms`,
      );
    }
    abort.abort();
    await feed.done;
  } finally {
    abort.abort();
    await stopProcess(child);
    await sim.close();
  }
}

// 6. Memory per VM: the slope of the synced RSS between 10,000 and 50,000 VMs (both must be among SCALE_SIZES).
const [small, large] = [rss.get(10_000), rss.get(50_000)];
if (small !== undefined && large !== undefined)
  say(
    `Corral RSS slope 10,000 → 50,000 VMs: ${(((large - small) * 1024) / 40_000).toFixed(1)} KB per VM (${small.toFixed(0)} → ${large.toFixed(0)} MB; aim ≤ 6 KB)`,
  );

// 5. The UI at scale (bench/scale-ui.ts): first rows and change → screen on loopback and through a 50 Mbit/s,
// 20 ms link, filter keystroke p95, the tab's JS heap; SCALE_UI_SIZES (default 10000,50000), SCALE_UI=0 skips it.
if (process.env.SCALE_UI !== '0')
  await scaleUi(say, (process.env.SCALE_UI_SIZES ?? '10000,50000').split(',').map(Number));

console.log(`\n${lines.join('\n')}`);
