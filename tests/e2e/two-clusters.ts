// The two-cluster Corral the multi-cluster and move specs share (the shared e2e servers serve one cluster, which
// every other spec counts on): serve.ts with the shared embedded cluster's twin (`corral-sim`, 4 VMs) plus `lab`
// (3 VMs, started by --lab-sim-port). A worker-scoped fixture: the first spec that asks starts it, later specs in
// the same worker reuse it (the suite runs one worker), and it stops with the worker.
import { spawn } from 'node:child_process';
import { test as base } from '@playwright/test';
import { E2E_PORT } from './env';

const PORT = E2E_PORT + 10;
const LAB_SIM_PORT = E2E_PORT + 11;
export const TWO_CLUSTERS_URL = `http://localhost:${PORT}`;
export const LAB_SIM = `http://127.0.0.1:${LAB_SIM_PORT}`;

export const test = base.extend<object, { twoClusters: string }>({
  twoClusters: [
    // eslint-disable-next-line no-empty-pattern -- Playwright reads the fixtures a function asks for from its first parameter
    async ({}, use) => {
      const server = spawn(
        './node_modules/.bin/node',
        [
          '--import',
          'tsx',
          'tests/e2e/serve.ts',
          '--port',
          String(PORT),
          '--fleet',
          '4',
          '--lab-sim-port',
          String(LAB_SIM_PORT),
          '--unreachable-ms',
          '2000',
        ],
        { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, CORRAL_METRICS_INTERVAL_MS: '2000' } },
      );
      const until = Date.now() + 150_000;
      for (;;) {
        const ready = await fetch(`${TWO_CLUSTERS_URL}/readyz`).then(
          (r) => r.ok,
          () => false,
        );
        if (ready) break;
        if (Date.now() > until || server.exitCode !== null) throw new Error('the two-cluster Corral did not start');
        await new Promise((r) => setTimeout(r, 500));
      }
      await use(TWO_CLUSTERS_URL);
      await fetch(`${LAB_SIM}/_sim/faults`, { method: 'DELETE' }).catch(() => undefined);
      server.kill('SIGTERM');
    },
    { scope: 'worker', timeout: 180_000 },
  ],
});
