/**
 * `npm run bench:api` — GET /api/vms against 1,000 and 10,000 VMs.
 *
 * The embedded apiserver runs in this process with no controllers (a pure apiserver holding N VMs, half of them
 * running with a VMI); Corral runs as its own process (`server.ts --no-ui`) so its RSS is measured alone. For each
 * size it prints GET /api/vms p50/p99, the ratio to a raw list of VMs + VMIs from the apiserver (both timed as
 * request → body received, same run; aim ≤ 0.25), the ratio to JSON.stringify of the same rows in-process (aim ≤ 3×) and Corral's RSS.
 * It also times the transport floor: a bare node:http process sending the very same bytes from memory, timed by
 * the same client — what no server can beat, so the ratio to it is Corral's own overhead.
 * Then two clusters of 5,000 VMs each served by one Corral (`--all-contexts`): GET /api/vms over both (10,000 rows
 * with their `context`) against the one-cluster 10,000 case above (aim ≤ 1.2×). `-- --two-clusters` runs only the
 * 10,000 and the two-cluster cases.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mergedKubeconfig } from '../src/sim/cli';
import { startEmbeddedCluster } from '../src/sim/index';
import { percentile, seedBenchFleet } from './lib/fleet';
import { rssMb, startCorralProcess } from './lib/corral-process';

const TWO_ONLY = process.argv.includes('--two-clusters');
const SIZES = TWO_ONLY ? [10_000] : [1000, 10_000];
/** GET /api/vms p50 at 10,000 VMs in one cluster, the yardstick of the two-cluster case. */
let oneCluster10k = NaN;

async function timed(
  iterations: number,
  fn: () => Promise<unknown> | unknown,
  warmUp = 3,
): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < warmUp; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  return { p50: percentile(samples, 50), p99: percentile(samples, 99) };
}

/** A bare HTTP server in its own process answering every request with the bytes of `file`. */
function startFloorServer(file: string): Promise<{ child: ChildProcess; url: string }> {
  const script = `const b=require('fs').readFileSync(${JSON.stringify(file)});const s=require('http').createServer((q,r)=>{r.writeHead(200,{'Content-Type':'application/json','Content-Length':b.length});r.end(b)});s.listen(0,'127.0.0.1',()=>console.log('port '+s.address().port))`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) =>
      resolve({ child, url: `http://127.0.0.1:${/port (\d+)/.exec(chunk.toString())?.[1]}/` }),
    );
    child.once('exit', (code) => reject(new Error(`floor server exited with ${code}`)));
  });
}

async function waitFor(probe: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const results: string[] = [];
for (const n of SIZES) {
  const dir = mkdtempSync(join(tmpdir(), 'corral-bench-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [], kubeconfigPath });
  seedBenchFleet(sim.store, n);
  const { child, url } = await startCorralProcess(kubeconfigPath);
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'readyz');
    await waitFor(async () => ((await (await fetch(`${url}/api/vms`)).json()) as unknown[]).length === n, `${n} rows`);
    const iterations = n >= 10_000 ? 20 : 50;
    const auth = { authorization: 'Bearer sim-admin-token', accept: 'application/json' };
    const raw = await timed(iterations, async () => {
      const [a, b] = await Promise.all([
        fetch(`${sim.url}/apis/kubevirt.io/v1/virtualmachines`, { headers: auth }).then((r) => r.text()),
        fetch(`${sim.url}/apis/kubevirt.io/v1/virtualmachineinstances`, { headers: auth }).then((r) => r.text()),
      ]);
      return a.length + b.length;
    });
    // Both sides are timed as request → full body received (no client-side parse, which would dwarf the server).
    const api = await timed(iterations, async () => (await fetch(`${url}/api/vms`)).text());
    const body = await (await fetch(`${url}/api/vms`)).text();
    const rows: unknown = JSON.parse(body);
    const stringify = await timed(iterations, () => JSON.stringify(rows));
    const bodyFile = join(dir, 'vms.json');
    writeFileSync(bodyFile, body);
    const floorServer = await startFloorServer(bodyFile);
    // A fresh process: warm its JIT as long as Corral's was by the readiness polls and the timed runs above.
    const floor = await timed(iterations, async () => (await fetch(floorServer.url)).text(), 2 * iterations);
    floorServer.child.kill('SIGTERM');
    const rss = rssMb(child.pid!);
    if (n === 10_000) oneCluster10k = api.p50;
    results.push(
      [
        `${n.toLocaleString('en')} VMs`,
        `GET /api/vms p50 ${api.p50.toFixed(1)} ms, p99 ${api.p99.toFixed(1)} ms`,
        `raw VM+VMI list p50 ${raw.p50.toFixed(1)} ms → ratio ${(api.p50 / raw.p50).toFixed(3)} (aim ≤ 0.25)`,
        `transport floor (bare node:http, same ${(body.length / 1024).toFixed(0)} KiB) p50 ${floor.p50.toFixed(1)} ms → ratio ${(api.p50 / floor.p50).toFixed(2)}×`,
        `JSON.stringify p50 ${stringify.p50.toFixed(1)} ms → ratio ${(api.p50 / stringify.p50).toFixed(2)}× (aim ≤ 3×)`,
        `Corral RSS ${rss} MB${n >= 10_000 ? ' (aim ≤ 400 MB)' : ''}`,
      ].join('\n  '),
    );
    console.log(results.at(-1));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await sim.close();
  }
}
{
  // Two clusters of 5,000 VMs, one Corral serving both: the registry joins each fleet view's cached JSON.
  const dir = mkdtempSync(join(tmpdir(), 'corral-bench-'));
  const kubeconfigPath = join(dir, 'kubeconfig');
  const sims = await Promise.all(
    ['one', 'two'].map((contextName) =>
      startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [], contextName }).then((sim) => {
        seedBenchFleet(sim.store, 5000);
        return sim;
      }),
    ),
  );
  writeFileSync(kubeconfigPath, mergedKubeconfig(sims.map((sim, i) => ({ url: sim.url, name: ['one', 'two'][i]! }))));
  const { child, url } = await startCorralProcess(kubeconfigPath, ['--all-contexts']);
  try {
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 200, 'readyz');
    await waitFor(
      async () => ((await (await fetch(`${url}/api/vms`)).json()) as unknown[]).length === 10_000,
      '2 × 5,000 rows',
    );
    const api = await timed(20, async () => (await fetch(`${url}/api/vms`)).text());
    results.push(
      [
        '2 clusters × 5,000 VMs (--all-contexts)',
        `GET /api/vms p50 ${api.p50.toFixed(1)} ms, p99 ${api.p99.toFixed(1)} ms → ratio to one cluster of 10,000 ${(api.p50 / oneCluster10k).toFixed(2)}× (aim ≤ 1.2×)`,
        `Corral RSS ${rssMb(child.pid!)} MB`,
      ].join('\n  '),
    );
    console.log(results.at(-1));
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    await Promise.all(sims.map((sim) => sim.close()));
  }
}
console.log(`\n${results.join('\n')}`);
