/**
 * `npm run bench:metrics:scrape` — GET /metrics at 10,000 running VMs (BENCH_VMS overrides the count).
 *
 * Three processes, so none times another's work: the embedded cluster with its controllers and metrics-server
 * (this file again, with `--sim`), every VM seeded Running with its VMI and launcher pod; Corral as its own
 * production process (`server.ts --no-ui --metrics`) with the default 15 s collection interval; and this one, the
 * scraper. Once every VM has a usage reading in the exposition, it scrapes every 250 ms for 50 s with gzip, as
 * Prometheus does (so some scrapes land while a snapshot is being built, as a real scraper's would), then 60
 * times without compression, and prints p50/p99 of each (request → whole body received and inflated; aim p50
 * ≤ 50 ms), the body and wire sizes, and the build time Corral reports as corral_collection_duration_seconds for
 * each snapshot seen. It then times the transport floor — a bare node:http process sending the same plain bytes —
 * the same way, and prints the load average: on a shared machine the numbers move together, and the ratio to the
 * floor is Corral's own cost.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultModules, startEmbeddedCluster, type SimContext, type SimModule } from '../src/sim/index';
import { namespace, seedBaseline } from '../src/sim/fleet/baseline';
import { generatedNodes } from '../src/sim/fleet/generated';
import { SeedIps, seedVm } from '../src/sim/fleet/seed-vm';
import { vmManifest } from '../src/sim/fleet/vm-builder';
import { K } from '../src/sim/kubevirt/keys';
import { percentile } from './lib/fleet';
import { rssMb, startCorralProcess } from './lib/corral-process';

const N = Number(process.env.BENCH_VMS ?? 10_000);
const INTERVAL_S = 15;
const SCRAPE_FOR_MS = 50_000;
const SCRAPE_EVERY_MS = 250;
/** Launchers per node, under kubelet's 110-pod default like the generated fleet. */
const PER_NODE = 90;
const PER_NAMESPACE = 1000;

/** Every VM Running, spread over `fleet-NN` namespaces and enough worker nodes. */
function runningFleet(n: number): SimModule {
  return {
    name: 'bench-running-fleet',
    start(ctx: SimContext) {
      const nodes = generatedNodes(n);
      seedBaseline(ctx.store, nodes);
      const ips = new SeedIps();
      const namespaces = Math.max(1, Math.ceil(n / PER_NAMESPACE));
      for (let i = 0; i < namespaces; i++)
        ctx.store.create(K.namespaces, namespace(`fleet-${String(i).padStart(2, '0')}`));
      for (let i = 0; i < n; i++) {
        const name = `vm-${String(i + 1).padStart(5, '0')}`;
        const manifest = vmManifest({
          name,
          namespace: `fleet-${String(i % namespaces).padStart(2, '0')}`,
          runStrategy: 'Always',
          containerDisk: 'quay.io/containerdisks/fedora:42',
          sockets: 1 + (i % 2),
          memory: i % 3 === 0 ? '2Gi' : '1Gi',
        });
        seedVm(ctx.store, ips, manifest, 'Running', nodes[Math.floor(i / PER_NODE) % nodes.length]!.name);
      }
    },
  };
}

function sample(text: string, series: string): number | undefined {
  const at = text.indexOf(`\n${series} `);
  if (at < 0) return undefined;
  return Number(text.slice(at + series.length + 2, text.indexOf('\n', at + 1)));
}

function countRows(text: string, family: string): number {
  let n = 0;
  for (let at = text.indexOf(`\n${family}{`); at >= 0; at = text.indexOf(`\n${family}{`, at + 1)) n++;
  return n;
}

async function runSim(n: number, kubeconfigPath: string): Promise<void> {
  const t0 = performance.now();
  // Speed 5: metrics-server's 15–60 s first-reading latency passes in 3–12 s, and the simulated metrics-server has
  // little catching up to do per answer (at speed 50 it starved its own apiserver on a 2-core machine).
  await startEmbeddedCluster({
    port: 0,
    fleet: 'empty',
    speed: 5,
    modules: [...defaultModules(), runningFleet(n)],
    kubeconfigPath,
  });
  console.log(`ready ${n} running VMs seeded in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

function startSimProcess(n: number, kubeconfigPath: string): Promise<{ child: ChildProcess; line: string }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--sim', String(n), kubeconfigPath],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^ready (.*)$/m.exec(out)?.[1];
      if (line) resolve({ child, line });
    });
    child.once('exit', (code) => reject(new Error(`the embedded cluster exited with ${code}: ${out}`)));
  });
}

/** A bare HTTP server in its own process answering every request with the bytes of `file`. */
function startFloorServer(file: string): Promise<{ child: ChildProcess; url: string }> {
  const script = `const b=require('fs').readFileSync(${JSON.stringify(file)});const s=require('http').createServer((q,r)=>{r.writeHead(200,{'Content-Type':'text/plain','Content-Length':b.length});r.end(b)});s.listen(0,'127.0.0.1',()=>console.log('port '+s.address().port))`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) =>
      resolve({ child, url: `http://127.0.0.1:${/port (\d+)/.exec(chunk.toString())?.[1]}/` }),
    );
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'corral-bench-metrics-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const t0 = performance.now();
  const sim = await startSimProcess(N, kubeconfigPath);
  console.log(sim.line);
  const { child, url } = await startCorralProcess(kubeconfigPath, [
    '--metrics',
    '--metrics-interval',
    String(INTERVAL_S),
  ]);
  try {
    // Ready when every VM has a usage row (cache synced, metrics sampled, a snapshot built after both).
    const deadline = Date.now() + 180_000;
    let text = '';
    while (countRows(text, 'corral_instance_cpu_cores') < N) {
      if (Date.now() > deadline)
        throw new Error(`only ${countRows(text, 'corral_instance_cpu_cores')} of ${N} VMs measured after 180 s`);
      await new Promise((r) => setTimeout(r, 1000));
      text = await fetch(`${url}/metrics`)
        .then((r) => r.text())
        .catch(() => '');
    }
    console.log(`every VM measured in /metrics after ${((performance.now() - t0) / 1000).toFixed(1)} s`);

    // Prometheus asks for gzip on every scrape; the main run does too (fetch inflates, as Prometheus does).
    const gzipped: number[] = [];
    const builds: number[] = [];
    let lastAge = Infinity;
    const sizes: number[] = [];
    const wire: number[] = [];
    const end = Date.now() + SCRAPE_FOR_MS;
    while (Date.now() < end) {
      const s0 = performance.now();
      const res = await fetch(`${url}/metrics`, { headers: { 'accept-encoding': 'gzip' } });
      // Bytes, as a scraper reads them (it parses the stream; it never makes one 6 MiB JavaScript string).
      const body = Buffer.from(await res.arrayBuffer());
      gzipped.push(performance.now() - s0);
      sizes.push(body.length);
      wire.push(Number(res.headers.get('content-length')));
      // The collection families come last: their lines are in the last kilobyte.
      const tail = body.toString('latin1', Math.max(0, body.length - 1024));
      const age = sample(tail, 'corral_collection_age_seconds') ?? NaN;
      // A smaller age than the previous scrape's means a new snapshot: record how long it took to build.
      if (age < lastAge) builds.push((sample(tail, 'corral_collection_duration_seconds') ?? NaN) * 1000);
      lastAge = age;
      await new Promise((r) => setTimeout(r, SCRAPE_EVERY_MS));
    }
    const timedPlain = async (target: string) => {
      const times: number[] = [];
      for (let i = 0; i < 60; i++) {
        const s0 = performance.now();
        await (await fetch(target, { headers: { 'accept-encoding': 'identity' } })).arrayBuffer();
        times.push(performance.now() - s0);
        await new Promise((r) => setTimeout(r, SCRAPE_EVERY_MS));
      }
      return times.sort((a, b) => a - b);
    };
    const plain = await timedPlain(`${url}/metrics`);

    // The floor on this machine, now: a bare node:http process sending the same plain bytes from memory, timed
    // the same way. On a loaded machine both move together; the ratio is what Corral adds.
    const bodyFile = join(dir, 'metrics.txt');
    const plainRes = await fetch(`${url}/metrics`, { headers: { 'accept-encoding': 'identity' } });
    writeFileSync(bodyFile, Buffer.from(await plainRes.arrayBuffer()));
    const floorServer = await startFloorServer(bodyFile);
    let floor: number[];
    try {
      floor = await timedPlain(floorServer.url);
    } finally {
      await stop(floorServer.child);
    }
    gzipped.sort((a, b) => a - b);
    sizes.sort((a, b) => a - b);
    wire.sort((a, b) => a - b);
    const ms = (sorted: number[]) =>
      `p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms`;
    const buildList = builds.map((b) => `${b.toFixed(0)} ms`).join(', ');
    const worst = Math.max(...builds);
    console.log(
      [
        `\n${N.toLocaleString('en')} running VMs, GET /metrics: median body ${(percentile(sizes, 50) / 1024 / 1024).toFixed(1)} MiB, ${(percentile(wire, 50) / 1024).toFixed(0)} KiB gzipped`,
        `scrape with gzip (as Prometheus asks) ${ms(gzipped)} over ${gzipped.length} scrapes in ${SCRAPE_FOR_MS / 1000} s (aim p50 ≤ 50 ms)`,
        `scrape without compression ${ms(plain)}`,
        `transport floor (bare node:http, same plain bytes) ${ms(floor)} → plain ratio ${(percentile(plain, 50) / percentile(floor, 50)).toFixed(2)}×`,
        `load average while measuring: ${loadavg()
          .map((l) => l.toFixed(1))
          .join(', ')} on ${cpus().length} cores`,
        `snapshot build (corral_collection_duration_seconds): ${buildList || 'none seen'}` +
          (builds.length
            ? ` (wall time, yields included; the longest is ${((worst / (INTERVAL_S * 1000)) * 100).toFixed(1)}% of the ${INTERVAL_S} s interval)`
            : ''),
        `Corral RSS ${rssMb(child.pid!).toFixed(0)} MB`,
      ].join('\n  '),
    );
  } finally {
    await stop(child);
    await stop(sim.child);
  }
}

if (process.argv[2] === '--sim') await runSim(Number(process.argv[3]), process.argv[4]!);
else await bench();
