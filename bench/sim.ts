/**
 * `npm run bench:sim`: the embedded cluster's API machinery under a 10,000-VM store.
 * Prints (1) list time through client-node vs JSON.stringify of the same objects in this process (aim ≤ 3×),
 * (2) the server process's RSS (aim ≤ 500 MB), (3) the time for 10 watchers to receive 1,000 updates.
 * The server runs in a child process (bench/sim-server.ts) so its RSS is its own.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, Watch } from '@kubernetes/client-node';
import { kubeconfigYaml } from '../src/sim/index.js';

const VMS = Number(process.env.BENCH_VMS ?? '10000');
const WATCHERS = 10;
const UPDATES = 1000;
const RUNS = 5;

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 'NaN');
  return kb / 1024;
}

const child = spawn(process.execPath, ['--import', 'tsx', 'bench/sim-server.ts', String(VMS)], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /ready (\S+)/.exec(out);
    if (m) resolve(m[1]!);
  });
  child.on('exit', (code) => reject(new Error(`bench server exited with ${code}`)));
});

try {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(url));
  const custom = kc.makeApiClient(CustomObjectsApi);
  const VM = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;

  const listTimes: number[] = [];
  let items: unknown[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const list = (await custom.listNamespacedCustomObject({ ...VM, namespace: 'bench' })) as { items: unknown[] };
    listTimes.push(performance.now() - t);
    items = list.items;
  }
  if (items.length !== VMS) throw new Error(`expected ${VMS} VMs, listed ${items.length}`);
  const stringifyTimes: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    JSON.stringify(items);
    stringifyTimes.push(performance.now() - t);
  }
  const listMs = median(listTimes);
  const baselineMs = median(stringifyTimes);
  const rss = rssMb(child.pid!);

  const watch = new Watch(kc);
  const received = new Array<number>(WATCHERS).fill(0);
  const controllers: AbortController[] = [];
  let resolveAll = () => {};
  const allDone = new Promise<void>((r) => (resolveAll = r));
  const rv = (
    (await custom.listNamespacedCustomObject({ ...VM, namespace: 'bench', limit: 1 })) as {
      metadata: { resourceVersion: string };
    }
  ).metadata.resourceVersion;
  for (let w = 0; w < WATCHERS; w++) {
    controllers.push(
      await watch.watch(
        `/apis/kubevirt.io/v1/namespaces/bench/virtualmachines`,
        { resourceVersion: rv },
        (type) => {
          if (type !== 'MODIFIED') return;
          received[w]!++;
          if (received.every((n) => n >= UPDATES)) resolveAll();
        },
        () => {},
      ),
    );
  }
  const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
  const started = performance.now();
  const CONCURRENCY = 8;
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < UPDATES) {
        const i = next++;
        const name = `vm-${String(i % VMS).padStart(5, '0')}`;
        await custom.patchNamespacedCustomObject(
          { ...VM, namespace: 'bench', name, body: { metadata: { annotations: { 'bench/update': String(i) } } } },
          merge,
        );
      }
    }),
  );
  const writesMs = performance.now() - started;
  await allDone;
  const watchMs = performance.now() - started;

  // Fan-out alone: the same number of writes made inside the server (as controllers write), no API round trips.
  received.fill(0);
  const fanOut = new Promise<void>((r) => (resolveAll = r));
  const fanOutStarted = performance.now();
  child.stdin.write(`update ${UPDATES}\n`);
  await fanOut;
  const fanOutMs = performance.now() - fanOutStarted;
  for (const c of controllers) c.abort();

  const ratio = listMs / baselineMs;
  console.log(`embedded cluster benchmark (${VMS} VMs, ${RUNS} runs, medians)`);
  console.log(`  list through client-node:      ${listMs.toFixed(1)} ms`);
  console.log(`  JSON.stringify same objects:   ${baselineMs.toFixed(1)} ms (baseline)`);
  console.log(`  list / baseline ratio:         ${ratio.toFixed(2)}x  (aim <= 3x) ${ratio <= 3 ? 'OK' : 'OVER'}`);
  console.log(`  server RSS:                    ${rss.toFixed(0)} MB  (aim <= 500 MB) ${rss <= 500 ? 'OK' : 'OVER'}`);
  console.log(
    `  ${WATCHERS} watchers x ${UPDATES} updates:   ${watchMs.toFixed(0)} ms until every watcher had every update, writes as client-node PATCHes (the writes took ${writesMs.toFixed(0)} ms)`,
  );
  console.log(
    `  ${WATCHERS} watchers x ${UPDATES} updates:   ${fanOutMs.toFixed(0)} ms with the writes made in the server (watch fan-out alone)`,
  );
} finally {
  child.kill('SIGTERM');
}
