/**
 * `npm run bench:journal` — the durable task journal's cost at the apiserver (issue 15).
 *
 * One Corral (API only, in this process) on the embedded cluster, with the production defaults (1 s write batching).
 * Requests are counted where they arrive: at the embedded apiserver, for the task ConfigMaps only (the journal's
 * watch stream is opened once per replica and not counted per task). Prints:
 *
 * - apiserver requests per task whose log has 500 lines, written as fast as the code emits them (aim ≤ 5);
 * - the same task with its 500 lines spread over 5 s (what a long-running import looks like);
 * - journal write latency: from a task's change to its ConfigMap write being answered (p50/p99 over `TASKS` tasks,
 *   measured as the store's flush of one finished task, i.e. one create round trip), and the time until a second
 *   replica's journal shows the finished task (watch delivery included).
 *
 * `--tasks N` sets how many tasks the latency figures are taken over (default 300).
 */
import { startEmbeddedCluster } from '../src/sim/index';
import { startCorral, type RunningCorral } from '../src/server/start';

const argTasks = process.argv.indexOf('--tasks');
const TASKS = argTasks > 0 ? Number(process.argv[argTasks + 1]) : 300;

const sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
let counted = 0;
const decide = sim.faults.decide.bind(sim.faults);
sim.faults.decide = (path, request) => {
  if (path.includes('/configmaps/corral-task-') || (path.endsWith('/configmaps') && request?.method === 'POST'))
    counted++;
  return decide(path, request);
};

async function replica(identity: string): Promise<RunningCorral> {
  const corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    replica: { identity, flushMs: 1000 },
  });
  await corral.cluster.cache.waitForSync(20_000);
  return corral;
}

const a = await replica('bench-a');
const b = await replica('bench-b');

async function requestsFor(spreadMs: number): Promise<number> {
  const before = counted;
  const task = a.services.journal.start('bench', 'tailvm/web', 'bench');
  for (let i = 0; i < 500; i++) {
    task.log(`line ${i}: ${'x'.repeat(40)}`);
    if (spreadMs) await new Promise((r) => setTimeout(r, spreadMs / 500));
  }
  task.done('finished');
  await a.services.replicas.store.flush();
  return counted - before;
}

const burst = await requestsFor(0);
const spread = await requestsFor(5000);

const writeMs: number[] = [];
const visibleMs: number[] = [];
for (let i = 0; i < TASKS; i++) {
  const t0 = performance.now();
  const task = a.services.journal.start('bench', `tailvm/vm-${i}`, 'bench');
  task.log('one line');
  task.done();
  await a.services.replicas.store.flush();
  writeMs.push(performance.now() - t0);
  while (b.services.journal.get(task.id)?.status !== 'done') await new Promise((r) => setImmediate(r));
  visibleMs.push(performance.now() - t0);
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? NaN;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;
console.log(`journal: apiserver requests per task with a 500-line log, emitted at once: ${burst} (aim ≤ 5)`);
console.log(`journal: apiserver requests per task with a 500-line log over 5 s (1 s batching): ${spread}`);
console.log(
  `journal: write latency over ${TASKS} tasks: p50 ${ms(pct(writeMs, 50))}, p99 ${ms(pct(writeMs, 99))}; ` +
    `visible on a second replica: p50 ${ms(pct(visibleMs, 50))}, p99 ${ms(pct(visibleMs, 99))}`,
);
await a.close();
await b.close();
await sim.close();
