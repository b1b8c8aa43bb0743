/**
 * Corral under test, for Playwright's webServer and the UI bench: the same startCorral() as server.ts, with the
 * knobs tests need and server.ts does not offer — the embedded cluster's speed and fleet size, and a fixed port
 * for its `/_sim/faults` control interface (so a test can make the cluster stop answering).
 *
 *   node --import tsx tests/e2e/serve.ts --port 18106 --sim-port 18108 --kubeconfig-out /tmp/k.yaml [--speed 10] [--fleet demo|empty|N] [--build]
 *   node --import tsx tests/e2e/serve.ts --port 18107 --kubeconfig /tmp/k.yaml        (a second Corral on the same cluster)
 *   [--unreachable-ms 6000]  how long the cluster must fail before Corral reports it unreachable
 *   [--lab-sim-port P]  also serve a second embedded cluster, context `lab` with 3 VMs, its fault control on port P
 *                       (the multi-cluster spec starts such a Corral of its own; the shared servers serve one cluster)
 *
 * --build builds the UI first (the tests must exercise the current UI, not a stale .next); see build-ui.ts.
 */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { buildUi } from './build-ui';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '18106' },
    'sim-port': { type: 'string' },
    'kubeconfig-out': { type: 'string' },
    kubeconfig: { type: 'string' },
    speed: { type: 'string', default: '10' },
    fleet: { type: 'string', default: 'demo' },
    build: { type: 'boolean', default: false },
    'wait-kubeconfig-ms': { type: 'string', default: '300000' },
    // How long the cluster must fail before Corral calls it unreachable (server default 30 s; tests want it quick).
    'unreachable-ms': { type: 'string', default: '6000' },
    'lab-sim-port': { type: 'string' },
  },
  strict: true,
});

function fail(message: string): never {
  console.error(`[serve] ${message}`);
  process.exit(2);
}

async function waitForFile(file: string, ms: number): Promise<void> {
  const until = Date.now() + ms;
  while (!existsSync(file)) {
    if (Date.now() > until) fail(`${file} did not appear within ${ms} ms (is the first instance starting?)`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function main(): Promise<void> {
  Object.assign(process.env, { NODE_ENV: 'production' });
  if (values.build) {
    buildUi(root);
  }
  const closers: (() => Promise<void>)[] = [];
  let kube: { yaml?: string; file?: string };
  if (values.kubeconfig) {
    await waitForFile(values.kubeconfig, Number(values['wait-kubeconfig-ms']));
    kube = { file: values.kubeconfig };
  } else {
    const fleet = /^\d+$/.test(values.fleet) ? Number(values.fleet) : values.fleet;
    if (fleet !== 'demo' && fleet !== 'empty' && typeof fleet !== 'number')
      fail(`--fleet must be demo, empty or a number`);
    const sim = await import('../../src/sim/index.js');
    const { corralContainerRuntime } = await import('../../src/server/tools/schedule-runtime.js');
    const cluster = await sim.startEmbeddedCluster({
      port: Number(values['sim-port'] ?? 0),
      fleet,
      speed: Number(values.speed),
      kubeconfigPath: values['kubeconfig-out'],
      // Schedule Jobs run Corral's image: the embedded kubelet runs it in this process (docs/schedules.md).
      containerRuntime: corralContainerRuntime(),
    });
    closers.push(() => cluster.close());
    console.log(`[serve] embedded cluster at ${cluster.url}`);
    kube = { yaml: cluster.kubeconfig };
  }
  const moreClusters: { kube: { yaml: string }; demo: boolean }[] = [];
  if (values['lab-sim-port']) {
    const sim = await import('../../src/sim/index.js');
    const lab = await sim.startEmbeddedCluster({
      port: Number(values['lab-sim-port']),
      fleet: 3,
      speed: Number(values.speed),
      contextName: 'lab',
    });
    closers.push(() => lab.close());
    console.log(`[serve] embedded cluster lab at ${lab.url}`);
    moreClusters.push({ kube: { yaml: lab.kubeconfig }, demo: true });
  }
  const { startCorral } = await import('../../src/server/start.js');
  const corral = await startCorral({
    kube,
    moreClusters,
    demo: true,
    port: Number(values.port),
    host: '127.0.0.1',
    next: { dev: false, dir: root },
    unreachableAfterMs: Number(values['unreachable-ms']),
  });
  closers.unshift(() => corral.close());
  console.log(`[serve] corral at ${corral.url}`);
  const stop = () => {
    void (async () => {
      for (const close of closers) await close().catch(() => undefined);
      process.exit(0);
    })();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((err: unknown) => fail(err instanceof Error ? (err.stack ?? err.message) : String(err)));
