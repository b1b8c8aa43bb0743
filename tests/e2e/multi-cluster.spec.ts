// Several clusters in the tree: a Corral of its own (the shared e2e servers serve one cluster, which every other
// spec counts on) with the shared embedded cluster plus a second one, `lab`, started by serve.ts --lab-sim-port.
// The tree gets a top level per cluster with its health; when lab stops answering its subtree says so and keeps its
// last-known guests, marked stale, while the default cluster's subtree stays as it was.
import { spawn, type ChildProcess } from 'node:child_process';
import { expect, test, type Page } from '@playwright/test';
import { E2E_PORT, EXTERNAL_URL, SCREENSHOT_DIR } from './env';
import { waitLive } from './helpers';

const PORT = E2E_PORT + 10;
const LAB_SIM_PORT = E2E_PORT + 11;
const URL = `http://localhost:${PORT}`;
const LAB_SIM = `http://127.0.0.1:${LAB_SIM_PORT}`;

let server: ChildProcess | undefined;

test.describe('several clusters', () => {
  test.skip(!!EXTERNAL_URL, 'starts its own Corral beside the embedded clusters');
  test.describe.configure({ timeout: 180_000 });

  test.beforeAll(async () => {
    server = spawn(
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
      const ready = await fetch(`${URL}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > until || server.exitCode !== null) throw new Error('the two-cluster Corral did not start');
      await new Promise((r) => setTimeout(r, 500));
    }
  });

  test.afterAll(async () => {
    await fetch(`${LAB_SIM}/_sim/faults`, { method: 'DELETE' }).catch(() => undefined);
    server?.kill('SIGTERM');
  });

  async function open(page: Page, phone = false) {
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(URL + '/');
    if (!phone) await waitLive(page); // the phone header hides the live badge
    return errors;
  }

  const cluster = (page: Page, context: string) =>
    page.locator(`[data-testid="tree-cluster"][data-context="${context}"]`);

  test('the tree shows both clusters with their guests; a cluster that stops answering is marked stale', async ({
    page,
  }) => {
    const errors = await open(page);
    const home = cluster(page, 'corral-sim');
    const lab = cluster(page, 'lab');
    await expect(home).toContainText('default');
    await expect(home.locator('.tree-item .label', { hasText: /^vm-00004$/ })).toBeVisible();
    await expect(lab.locator('.tree-item .label', { hasText: /^vm-00003$/ })).toBeVisible();
    await expect(lab.getByRole('img', { name: 'Ready' }).first()).toBeVisible();

    try {
      await fetch(`${LAB_SIM}/_sim/faults`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ unresponsive: 'refuse' }),
      });
      await fetch(`${LAB_SIM}/_sim/faults/drop-watches`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      await expect(lab).toContainText('stale', { timeout: 60_000 });
      await expect(lab.getByRole('status')).toContainText('last-known state');
      // Lab's guests stay listed; home is untouched and the page-wide banner (about the default cluster) stays off.
      await expect(lab.locator('.tree-item .label', { hasText: /^vm-00003$/ })).toBeVisible();
      await expect(home).not.toContainText('stale');
      await expect(page.getByTestId('cluster-unreachable')).toHaveCount(0);
      await page.getByRole('button', { name: 'Collapse cluster corral-sim' }).click();
      await page.screenshot({ path: `${SCREENSHOT_DIR}/multi-cluster-stale.png` });
      await page.getByRole('button', { name: 'Expand cluster corral-sim' }).click();
    } finally {
      await fetch(`${LAB_SIM}/_sim/faults`, { method: 'DELETE' });
    }
    await expect(lab).not.toContainText('stale', { timeout: 60_000 });
    expect(errors).toEqual([]);
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`screenshots, ${theme}`, { tag: '@screenshots' }, async ({ browser }) => {
      for (const [viewport, name] of [
        [{ width: 1440, height: 900 }, ''],
        [{ width: 390, height: 844 }, 'phone-'],
      ] as const) {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        const errors = await open(page, name !== '');
        if (name) await page.getByRole('button', { name: 'Resource tree' }).click();
        await expect(cluster(page, 'lab').locator('.tree-item .label', { hasText: /^vm-00003$/ })).toBeVisible();
        await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}multi-cluster-tree${suffix}.png` });
        expect(errors).toEqual([]);
        await context.close();
      }
    });
  }
});
