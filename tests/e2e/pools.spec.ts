// Pools in the UI: make a pool in the tree's Pool view, drag a VM onto it, run an action from the pool page and
// read the result per member; the keyboard way (Move to pool…) files a second guest. Screenshots of the Pool
// view and the pool page at desktop and phone width, both themes.
import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOT_DIR } from './env';
import { apiCreate, apiDelete, NS, origin, uniqueName, waitForStatus } from './helpers';

const DIR = SCREENSHOT_DIR;

async function poolView(page: Page) {
  await page.getByRole('button', { name: 'Pool view' }).click();
  await expect(page.getByTestId('pool-tree')).toBeVisible();
}

test.describe.serial('pools', () => {
  const prefix = uniqueName('pool');
  const pool = `${prefix} apps`;
  const [web, db] = [`${prefix}-web`, `${prefix}-db`];

  test.beforeAll(async ({ request, baseURL }) => {
    await apiCreate(request, baseURL, web, true);
    await apiCreate(request, baseURL, db, false);
    await waitForStatus(request, web, 'Running');
    await waitForStatus(request, db, 'Stopped');
  });

  test.afterAll(async ({ request, baseURL }) => {
    await request.delete(`/api/folders?path=${encodeURIComponent(pool)}`, { headers: origin(baseURL) });
    for (const n of [web, db]) await apiDelete(request, baseURL, n);
  });

  test('create a pool, drag a VM into it, file another with Move to pool…, stop them from the pool page', async ({
    page,
  }) => {
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/');
    await poolView(page);
    await page.getByRole('button', { name: '+ New pool' }).click();
    await page.getByLabel('New pool path').fill(`${pool}/db tier`);
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    const target = page.locator(`[data-pool="${pool}"]`);
    await expect(target).toBeVisible();
    await expect(page.locator(`[data-pool="${pool}/db tier"]`)).toBeVisible();

    // HTML5 drag and drop from the "Not in a pool" list onto the pool.
    const source = page.getByTestId('unfoldered').locator(`[data-guest="${NS}/${web}"] a`);
    await source.dragTo(target);
    const filed = page.locator(`[data-pool="${pool}"] + ul [data-guest="${NS}/${web}"]`);
    await expect(filed).toBeVisible();
    await expect(page.getByTestId('unfoldered').locator(`[data-guest="${NS}/${web}"]`)).toHaveCount(0);

    // The keyboard way: Move to pool… on the stopped VM, into the sub-pool.
    await page.getByRole('button', { name: `Move ${db} to pool…` }).click();
    const dialog = page.getByRole('dialog', { name: `Move ${db} to pool` });
    await dialog.getByLabel('Pool').selectOption(`${pool}/db tier`);
    await dialog.getByRole('button', { name: 'Move', exact: true }).click();
    await expect(page.locator(`[data-pool="${pool}/db tier"] + ul [data-guest="${NS}/${db}"]`)).toBeVisible();

    // The pool page: members of the pool and its sub-pool, and Stop fanned out with a result per member.
    await target.getByRole('link').click();
    await expect(page.getByTestId('pool-page')).toBeVisible();
    const members = page.getByTestId('pool-members');
    await expect(members.locator(`[data-member="${web}"]`)).toContainText('Running');
    await expect(members.locator(`[data-member="${db}"]`)).toContainText('db tier');
    await expect(page.getByTestId('pool-running')).toContainText('1');
    await page.getByTestId('pool-actions').getByRole('button', { name: 'Stop', exact: true }).click();
    const results = page.getByTestId('pool-results');
    await expect(results).toContainText('Stop: 1 ok, 1 skipped, 0 failed');
    await expect(results.locator(`[data-result="${web}"]`)).toContainText('ok');
    await expect(results.locator(`[data-result="${db}"]`)).toContainText(`skipped: VM ${NS}/${db} is not running`);
    await expect(members.locator(`[data-member="${web}"]`)).toContainText('Stopped', { timeout: 60_000 });
    await page.screenshot({ path: `${DIR}/pool-results.png` });
    expect(errors).toEqual([]);
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`screenshots, ${theme}`, { tag: '@screenshots' }, async ({ browser, baseURL }) => {
      for (const [viewport, name] of [
        [{ width: 1440, height: 900 }, ''],
        [{ width: 390, height: 844 }, 'phone-'],
      ] as const) {
        const context = await browser.newContext({ viewport, baseURL });
        const page = await context.newPage();
        // A page that logs a console error or a page error is broken (clean-console.spec.ts's rule).
        const errors: string[] = [];
        page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
        page.on('pageerror', (e) => errors.push(e.message));
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        await page.goto(`/pools?path=${encodeURIComponent(pool)}`);
        await expect(page.getByTestId('pool-members').locator(`[data-member="${web}"]`)).toBeVisible();
        await page.screenshot({ path: `${DIR}/${name}pool-page${suffix}.png` });
        if (name) await page.getByRole('button', { name: 'Resource tree' }).click();
        await poolView(page);
        await expect(page.locator(`[data-pool="${pool}"]`)).toBeVisible();
        await page.screenshot({ path: `${DIR}/${name}pool-tree${suffix}.png` });
        expect(errors).toEqual([]);
        await context.close();
      }
    });
  }
});
