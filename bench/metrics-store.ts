/**
 * `npm run bench:metrics:store` — the metrics store at 10,000 running VMs (issue 10).
 *
 * Everything runs in this process, without the embedded cluster: a ClusterPort whose cache holds 10,000 VMs, VMIs
 * and launcher pods on 50 nodes (indexed like the real watch cache), and the real MetricsSampler reading answers
 * built once up front — one metrics.k8s.io pod list (10,000 PodMetrics), one node list, and per node one kubelet
 * Summary (JSON) and one cAdvisor text — whose counters grow every round. Prints:
 *
 * - bytes held per VM by the store with all three windows full (heap + typed-array memory over the baseline, after
 *   GC, divided by the VMs; aim ≤ 16 KiB). Filling the week window takes 336 × 120 = 40,320 rounds; those are fed
 *   straight into `record()` (the same write path, without the cluster reads) so the run takes minutes, not weeks.
 * - the sampling round's CPU time (process.cpuUsage over whole rounds: parsing every answer, turning counters into
 *   rates, reading the cache, recording 10,000 VMs, summing fleet and nodes for the live event) as a share of one
 *   core at the 15 s interval (aim ≤ 5 %).
 *
 * `--quick` fills only the hour and day windows (for a fast look; the figure printed says so).
 */
import type { ClusterCache, ClusterPort, KObject } from '../src/server/domain/cluster-port';
import type { KubeHttp, KubeRequest } from '../src/server/cluster/kube-http';
import { MetricsSampler } from '../src/server/cluster/metrics-sampler';
import { MetricsStore, type VmReading } from '../src/server/domain/metrics-store';
import { WINDOW_SPECS } from '../src/server/domain/metrics-ring';
import { TaskJournal } from '../src/server/domain/tasks';
import type { DomainDeps } from '../src/server/domain/deps';
import type { FleetView } from '../src/server/domain/vm-rows';

const VMS = 10_000;
const NODES = 50;
const INTERVAL_S = 15;
const TIMED_ROUNDS = 30;
const quick = process.argv.includes('--quick');

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with node --expose-gc (npm run bench:metrics:store does)');

const node = (i: number) => `node-${String(i % NODES).padStart(2, '0')}`;
const vmName = (i: number) => `vm-${String(i).padStart(5, '0')}`;
const podName = (i: number) => `virt-launcher-${vmName(i)}-abcde`;

// ---- the cluster as the cache holds it ----
const vms: KObject[] = [];
const vmis: KObject[] = [];
const pods: KObject[] = [];
for (let i = 0; i < VMS; i++) {
  const name = vmName(i);
  const meta = { namespace: 'tailvm', name };
  vms.push({ kind: 'VirtualMachine', metadata: { ...meta, uid: `vm-uid-${i}` } });
  vmis.push({
    kind: 'VirtualMachineInstance',
    metadata: { ...meta, uid: `vmi-uid-${i}` },
    spec: { domain: { cpu: { cores: 2 } } },
    status: { phase: 'Running', nodeName: node(i) },
  });
  pods.push({
    kind: 'Pod',
    metadata: {
      namespace: 'tailvm',
      name: podName(i),
      uid: `pod-uid-${i}`,
      labels: { 'kubevirt.io': 'virt-launcher', 'vm.kubevirt.io/name': name },
    },
    spec: { nodeName: node(i) },
    status: { phase: 'Running' },
  });
}
const byKey = (list: KObject[]) => new Map(list.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
const tables: Record<string, Map<string, KObject>> = {
  VirtualMachine: byKey(vms),
  VirtualMachineInstance: byKey(vmis),
  Pod: byKey(pods),
};
const podsOfVm = new Map(pods.map((p) => [`tailvm/${p.metadata.labels?.['vm.kubevirt.io/name']}`, [p]]));
const cache: ClusterCache = {
  get: (kind, ns, name) => tables[kind]?.get(`${ns}/${name}`),
  list: (kind) => [...(tables[kind]?.values() ?? [])],
  onNode: () => [],
  ofVm: (kind, ns, vm) => (kind === 'Pod' ? (podsOfVm.get(`${ns}/${vm}`) ?? []) : []),
  withLabel: () => [],
};

// ---- what the apiserver and the kubelets answer (counters grow every round) ----
let round = 0;
const podMetricsJson = JSON.stringify({
  items: pods.map((p, i) => ({
    metadata: { namespace: 'tailvm', name: p.metadata.name },
    containers: [
      { name: 'compute', usage: { cpu: `${100_000_000 + i * 1000}n`, memory: `${2_000_000 + i}Ki` } },
      { name: 'guest-console-log', usage: { cpu: '120n', memory: '1452Ki' } },
    ],
  })),
});
const nodeMetricsJson = JSON.stringify({
  items: Array.from({ length: NODES }, (_, i) => ({
    metadata: { name: node(i) },
    usage: { cpu: '20000000000n', memory: '200000000Ki' },
  })),
});
const onNode = (n: number) => pods.filter((_, i) => i % NODES === n);
function summaryJson(n: number): string {
  const time = new Date(Date.now()).toISOString();
  return JSON.stringify({
    node: { nodeName: node(n) },
    pods: onNode(n).map((p, i) => {
      const rx = (round + 1) * 15_000 * (1000 + i);
      const eth0 = { name: 'eth0', rxBytes: rx, rxErrors: 0, txBytes: rx / 2, txErrors: 0 };
      return {
        podRef: { name: p.metadata.name, namespace: 'tailvm', uid: p.metadata.uid },
        containers: [{ name: 'compute', cpu: { time, usageNanoCores: 100_000_000 } }],
        network: { time, ...eth0, interfaces: [eth0] },
      };
    }),
  });
}
function cadvisorText(n: number): string {
  const now = Date.now();
  const lines = ['# TYPE container_fs_reads_bytes_total counter'];
  for (const [i, p] of onNode(n).entries()) {
    const v = (round + 1) * 15_000 * (500 + i);
    const labels = (c: string) =>
      `{container="${c}",device="/dev/nvme0n1",id="/kubepods/pod${p.metadata.uid}",image="",name="x",namespace="tailvm",pod="${p.metadata.name}"}`;
    lines.push(`container_fs_reads_bytes_total${labels('')} ${v} ${now}`);
    lines.push(`container_fs_reads_bytes_total${labels('compute')} ${v} ${now}`);
    lines.push(`container_fs_writes_bytes_total${labels('compute')} ${v * 2} ${now}`);
  }
  return lines.join('\n');
}

/** The answers of the current round as text; the timed part parses them (a real KubeHttp would too). */
let answers = new Map<string, string>();
function buildAnswers(): void {
  answers = new Map([
    ['/apis/metrics.k8s.io/v1beta1/pods', podMetricsJson],
    ['/apis/metrics.k8s.io/v1beta1/nodes', nodeMetricsJson],
  ]);
  for (let n = 0; n < NODES; n++) {
    answers.set(`/api/v1/nodes/${node(n)}/proxy/stats/summary`, summaryJson(n));
    answers.set(`/api/v1/nodes/${node(n)}/proxy/metrics/cadvisor`, cadvisorText(n));
  }
}

const http = {
  request: (req: KubeRequest) => {
    const text = answers.get(req.path);
    if (text === undefined) return Promise.reject(new Error(`404 ${req.path}`));
    return Promise.resolve(req.path.endsWith('/cadvisor') ? text : JSON.parse(text));
  },
} as unknown as KubeHttp;

const sampler = new MetricsSampler(http, INTERVAL_S * 1000);
const cluster = {
  info: { name: 'bench', context: 'bench', contexts: [], server: '', demo: true },
  cache,
  metrics: sampler,
  isReady: () => true,
  onChange: () => () => {},
} as unknown as ClusterPort;

const heap = () => {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

async function main(): Promise<void> {
  const before = heap();
  const deps = { cluster, journal: new TaskJournal(), fleet: undefined as unknown as FleetView } as DomainDeps;
  const store = new MetricsStore(deps);
  let published = 0;
  store.subscribe(() => published++);

  // Warm-up rounds (so every pod has a previous counter and JIT has settled), then timed rounds.
  for (; round < 3; round++) {
    buildAnswers();
    await sampler.sampleNow();
  }
  let cpuMicros = 0;
  let wallMs = 0;
  for (let i = 0; i < TIMED_ROUNDS; i++, round++) {
    buildAnswers(); // a real cluster builds these, not Corral
    const startCpu = process.cpuUsage();
    const startWall = performance.now();
    await sampler.sampleNow();
    wallMs += performance.now() - startWall;
    const used = process.cpuUsage(startCpu);
    cpuMicros += used.user + used.system;
  }
  if (store.size() !== VMS) throw new Error(`the store holds ${store.size()} VMs, expected ${VMS}`);
  if (published !== round) throw new Error(`published ${published} live events for ${round} rounds`);
  const tickMs = cpuMicros / 1000 / TIMED_ROUNDS;

  // Fill every window: the same record() path, readings prepared once.
  const target = quick
    ? WINDOW_SPECS.day.slots * WINDOW_SPECS.day.every
    : WINDOW_SPECS.week.slots * WINDOW_SPECS.week.every;
  const readings: VmReading[] = vmis.map((vmi, i) => ({
    namespace: 'tailvm',
    name: vmName(i),
    uid: `vm-uid-${i}`,
    node: node(i),
    reading: { cpu: 100 + (i % 900), mem: 2e9 + i, netin: 1e4 + i, netout: 5e3, diskread: 7e5, diskwrite: 1.4e6 },
  }));
  const fillStart = performance.now();
  let t = Date.now();
  for (let r = store.rounds(); r < target; r++) {
    store.record((t += INTERVAL_S * 1000), readings);
    if (r % 5000 === 0) process.stderr.write(`  filling: ${r} / ${target} rounds\n`);
  }
  const fillS = (performance.now() - fillStart) / 1000;
  const week = store.sumHistory('week').length;
  const perVm = (heap() - before) / VMS;

  const kib = (b: number) => `${(b / 1024).toFixed(2)} KiB`;
  console.log(`metrics store, ${VMS} running VMs on ${NODES} nodes`);
  console.log(
    `  held per VM, ${quick ? 'hour+day windows full (--quick)' : 'all three windows full'} (${store.rounds()} rounds, ` +
      `${week} week points): ${kib(perVm)}  (aim ≤ 16 KiB)`,
  );
  console.log(
    `  sampling round: ${tickMs.toFixed(1)} ms CPU (${(wallMs / TIMED_ROUNDS).toFixed(1)} ms wall), ` +
      `${((tickMs / (INTERVAL_S * 1000)) * 100).toFixed(2)} % of one core at a ${INTERVAL_S} s interval  (aim ≤ 5 %)`,
  );
  const filled = store.rounds() - TIMED_ROUNDS - 3;
  console.log(
    `  (filling: ${filled} record() rounds in ${fillS.toFixed(0)} s, ${((fillS / filled) * 1000).toFixed(2)} ms each)`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
