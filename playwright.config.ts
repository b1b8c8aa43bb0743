// End-to-end tests of the web UI in headless Debian Chromium against Corral on the embedded cluster.
// Two Corral processes share one embedded cluster: an open one (single-user mode, everybody admin) and one with
// CORRAL_ADMINS set, for the read-only checks (CORRAL_ADMINS is per process). tests/e2e/serve.ts starts them with
// a 10× faster cluster and a fixed port for its fault-control interface.
// Run: `flock /tmp/e2e.lock npx playwright test`.
import { rmSync } from 'node:fs';
import { defineConfig } from '@playwright/test';
import { BASE_URL, E2E_PORT, E2E_READONLY_PORT, E2E_SIM_PORT, EXTERNAL_URL } from './tests/e2e/env';

const kubeconfig = 'test-results/e2e-kubeconfig.yaml';
/** Specs that inject faults or switch cluster features off for everyone: never beside another spec. */
const EXCLUSIVE_SPECS = ['**/unreachable.spec.ts', '**/health.spec.ts', '**/bulk.spec.ts', '**/metrics-charts.spec.ts'];
/** Specs that drive their own two-cluster Corral (tests/e2e/two-clusters.ts). */
const TWO_CLUSTER_SPECS = ['**/multi-cluster.spec.ts', '**/move.spec.ts'];
const speed = process.env.CORRAL_SIM_SPEED ?? '10';
const serve = './node_modules/.bin/node --import tsx tests/e2e/serve.ts';
// The read-only instance waits for this file; a stale one from an earlier run would point at a dead cluster.
if (!process.env.TEST_WORKER_INDEX) rmSync(kubeconfig, { force: true });

export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'test-results/e2e',
  fullyParallel: false,
  // Two files at a time, each file's tests in order. The specs that change what every other spec sees — the
  // cluster made unreachable, a feature gate or metrics-server switched off, every subresource call delayed — run
  // after the shared ones, one at a time. The two-cluster specs share one worker: their Corral (two-clusters.ts)
  // is a worker fixture on fixed ports, started once and reused.
  workers: 2,
  projects: [
    { name: 'shared', testIgnore: [...EXCLUSIVE_SPECS, ...TWO_CLUSTER_SPECS] },
    { name: 'two-clusters', testMatch: TWO_CLUSTER_SPECS, workers: 1 },
    { name: 'exclusive', testMatch: EXCLUSIVE_SPECS, workers: 1, dependencies: ['shared'] },
  ],
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 20_000 },
  reporter: [['list']],
  // Groups tagged @screenshots only take the pictures in docs/screenshots (their screens' behaviour and console
  // are checked by the other specs): they run when refreshing them (`npm run screenshots`), not in `npm test`.
  grepInvert: process.env.UPDATE_SCREENSHOTS ? undefined : /@screenshots/,
  use: {
    baseURL: BASE_URL,
    headless: true,
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
    trace: 'retain-on-failure',
  },
  webServer: EXTERNAL_URL
    ? []
    : [
        {
          command: `${serve} --port ${E2E_PORT} --sim-port ${E2E_SIM_PORT} --kubeconfig-out ${kubeconfig} --speed ${speed} --build`,
          url: `http://localhost:${E2E_PORT}/readyz`,
          // Metrics rounds every 2 s (not 15 s), so the charts' live updates show within a test's patience.
          env: { CORRAL_METRICS_INTERVAL_MS: process.env.CORRAL_METRICS_INTERVAL_MS ?? '2000' },
          timeout: 400_000,
          reuseExistingServer: false,
          stdout: 'ignore',
          stderr: 'pipe',
        },
        {
          command: `${serve} --port ${E2E_READONLY_PORT} --kubeconfig ${kubeconfig}`,
          url: `http://localhost:${E2E_READONLY_PORT}/readyz`,
          env: { CORRAL_ADMINS: 'alice@example.com' },
          timeout: 400_000,
          reuseExistingServer: false,
          stdout: 'ignore',
          stderr: 'pipe',
        },
      ],
});
