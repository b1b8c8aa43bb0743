// End-to-end tests of the web UI in headless Debian Chromium against Corral on the embedded demo cluster.
// Two Corral instances: an open one (single-user mode, everyone admin) and one with CORRAL_ADMINS set, for the
// read-only checks. Run: `flock /tmp/e2e.lock npx playwright test` (the lock keeps parallel runs off the ports).
import { defineConfig } from '@playwright/test';

export const E2E_PORT = Number(process.env.E2E_PORT ?? 18106);
export const E2E_READONLY_PORT = E2E_PORT + 1;
/** Point the tests at an already running Corral instead of starting two (the read-only test then needs
 *  E2E_READONLY_URL too, or it is skipped). */
const external = process.env.E2E_BASE_URL;
export const READONLY_URL = process.env.E2E_READONLY_URL ?? (external ? '' : `http://localhost:${E2E_READONLY_PORT}`);

// A faster embedded cluster so starting/stopping VMs takes seconds, not tens of seconds.
const simSpeed = process.env.CORRAL_SIM_SPEED ?? '10';

export default defineConfig({
  testDir: 'tests/e2e',
  outputDir: 'test-results',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 20_000 },
  reporter: [['list']],
  use: {
    baseURL: external ?? `http://localhost:${E2E_PORT}`,
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
  webServer: external
    ? []
    : [
        {
          command: 'npm start',
          url: `http://localhost:${E2E_PORT}/readyz`,
          env: { PORT: String(E2E_PORT), CORRAL_SIM_SPEED: simSpeed },
          timeout: 240_000,
          reuseExistingServer: false,
          stdout: 'ignore',
          stderr: 'pipe',
        },
        {
          command: 'npm start',
          url: `http://localhost:${E2E_READONLY_PORT}/readyz`,
          env: { PORT: String(E2E_READONLY_PORT), CORRAL_SIM_SPEED: simSpeed, CORRAL_ADMINS: 'alice@example.com' },
          timeout: 240_000,
          reuseExistingServer: false,
          stdout: 'ignore',
          stderr: 'pipe',
        },
      ],
});
