// Several clusters in the tree: a Corral of its own (two-clusters.ts: the shared e2e servers serve one cluster, which
// every other spec counts on) with an embedded cluster plus a second one, `lab`, started by serve.ts --lab-sim-port.
// The tree gets a top level per cluster with its health; when lab stops answering its subtree says so and keeps its
// last-known guests, marked stale, while the default cluster's subtree stays as it was. A lab VM's page
// (?context=lab) shows and acts on lab's VM, never on the default cluster's VM of the same namespace/name; so does a
// bulk action on lab's row in the Datacenter table.
import { expect, type Page } from '@playwright/test';
import { EXTERNAL_URL, SCREENSHOT_DIR } from './env';
import { waitLive } from './helpers';
import { LAB_SIM, test, TWO_CLUSTERS_URL as URL } from './two-clusters';

test.describe('several clusters', () => {
  test.skip(!!EXTERNAL_URL, 'starts its own Corral beside the embedded clusters');
  test.describe.configure({ timeout: 180_000 });

  // The two-cluster Corral (two-clusters.ts), shared with the move spec.
  test.beforeAll(async ({ twoClusters }) => void twoClusters);

  test.afterAll(async () => {
    await fetch(`${LAB_SIM}/_sim/faults`, { method: 'DELETE' }).catch(() => undefined);
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

  const LAB_VM = '/vms/fleet-00/vm-00002?context=lab';
  type ApiRow = { name: string; status: string; context: string };
  const statusOf = async (context: string, name = 'vm-00002') =>
    ((await (await fetch(`${URL}/api/vms?context=${context}`)).json()) as ApiRow[]).find((r) => r.name === name)
      ?.status;

  test("a lab VM opens from the tree with ?context=lab; its Summary, Console and Start/Stop act on lab's VM, not home's namesake", async ({
    page,
  }) => {
    const errors = await open(page);
    await cluster(page, 'lab')
      .locator('.tree-item', { hasText: /^vm-00002/ })
      .first()
      .click();
    await expect(page).toHaveURL(/\/vms\/fleet-00\/vm-00002\?context=lab$/);
    await expect(page.getByTestId('vm-cluster')).toHaveText('lab');
    await expect(page.getByTestId('vm-sub')).toContainText('lab · fleet-00');
    // Only lab's row is marked as the open page, not home's vm-00002 of the same namespace.
    const currentIn = (context: string) =>
      cluster(page, context).locator('[aria-current="page"]', { hasText: 'vm-00002' });
    await expect(currentIn('lab')).toHaveCount(1);
    await expect(currentIn('corral-sim')).toHaveCount(0);
    await expect(page.getByTestId('vm-status')).toContainText('Running');

    // The console bridges to lab's VM: its session is held in lab, none in home for the same namespace/name.
    await page.getByRole('tab', { name: 'Console' }).click();
    await expect(page).toHaveURL(/tab=console&context=lab$/);
    await expect(page.locator('[data-testid="vnc-screen"] canvas')).toBeVisible({ timeout: 30_000 });
    const holder = async (context: string) =>
      (
        (await (await fetch(`${URL}/api/vms/fleet-00/vm-00002/console-sessions?context=${context}`)).json()) as {
          vnc: unknown;
        }
      ).vnc;
    await expect.poll(() => holder('lab'), { timeout: 30_000 }).not.toBeNull();
    expect(await holder('corral-sim')).toBeNull();

    // Stop and start from the toolbar: lab's VM changes, home's vm-00002 keeps running.
    await page.getByRole('toolbar', { name: 'VM actions' }).getByRole('button', { name: 'Stop', exact: true }).click();
    await expect(page.getByTestId('console-notice')).toContainText('not running', { timeout: 60_000 });
    await expect.poll(() => statusOf('lab'), { timeout: 60_000 }).toBe('Stopped');
    expect(await statusOf('corral-sim')).toBe('Running');
    await page.getByRole('toolbar', { name: 'VM actions' }).getByRole('button', { name: 'Start', exact: true }).click();
    await expect.poll(() => statusOf('lab'), { timeout: 60_000 }).toBe('Running');
    await expect(page.getByTestId('vm-sub')).toContainText('Running');
    expect(errors).toEqual([]);
  });

  test("the Datacenter table's bulk Stop of lab's vm-00003 stops lab's VM, not home's namesake", async ({ page }) => {
    const errors = await open(page);
    const bar = page.getByTestId('bulk-bar');
    const labRow = page.locator('[data-vm="lab//fleet-00/vm-00003"]');
    // Both clusters' vm-00003 are rows of their own.
    await expect(labRow).toHaveAttribute('data-context', 'lab');
    await expect(page.locator('[data-vm="fleet-00/vm-00003"]')).toHaveAttribute('data-context', 'corral-sim');
    expect(await statusOf('lab', 'vm-00003')).toBe('Running');
    expect(await statusOf('corral-sim', 'vm-00003')).toBe('Running');

    const bulk = async (action: 'Stop' | 'Start') => {
      await labRow.getByRole('checkbox', { name: 'Select vm-00003 on lab' }).check();
      await expect(bar).toContainText('1 selected');
      await bar.getByRole('button', { name: action, exact: true }).click();
      await expect(page.getByTestId('bulk-results')).toContainText(`${action.toLowerCase()}: 1 ok, 0 failed`, {
        timeout: 60_000,
      });
      await expect(page.locator('[data-result="lab//fleet-00/vm-00003"]')).toContainText('lab: fleet-00/vm-00003');
    };
    await bulk('Stop');
    await expect.poll(() => statusOf('lab', 'vm-00003'), { timeout: 60_000 }).toBe('Stopped');
    expect(await statusOf('corral-sim', 'vm-00003')).toBe('Running');
    await expect(labRow.locator('[data-col="status"]')).toContainText('Stopped');

    await bulk('Start');
    await expect.poll(() => statusOf('lab', 'vm-00003'), { timeout: 60_000 }).toBe('Running');
    expect(await statusOf('corral-sim', 'vm-00003')).toBe('Running');
    expect(errors).toEqual([]);
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`lab VM page screenshots, ${theme}`, { tag: '@screenshots' }, async ({ browser }) => {
      for (const [viewport, name] of [
        [{ width: 1440, height: 900 }, ''],
        [{ width: 390, height: 844 }, 'phone-'],
      ] as const) {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        const errors: string[] = [];
        page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
        page.on('pageerror', (e) => errors.push(e.message));
        await page.goto(URL + LAB_VM);
        await expect(page.getByTestId('vm-cluster')).toHaveText('lab');
        await expect(page.getByTestId('vm-status')).toContainText('Running');
        await page.screenshot({ path: `${SCREENSHOT_DIR}/${name}multi-cluster-lab-vm${suffix}.png` });
        expect(errors).toEqual([]);
        await context.close();
      }
    });
  }

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
