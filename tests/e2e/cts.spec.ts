// Containers in the browser: Create CT through the dialog, the CT in the tree, its Terminal runs a command and
// shows the output, and in a privileged CT a file written in the terminal is still there after Stop and Start.
// CTs in the Datacenter table beside VMs (Type column, `type:ct` filter, a bulk Stop with a result per guest, the
// live status change without reload, bulk Delete), and the CT page following a Start pushed by the server.
// Screenshots of the CT page, the terminal, the dialog and the mixed table at desktop and phone width in both themes.
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { SCREENSHOT_DIR as DIR } from './env';
import { apiCreate, apiDelete, NS, origin, uniqueName, vmRow, waitForStatus, waitLive } from './helpers';

async function waitPhase(page: Page, phase: string) {
  await expect(page.getByTestId('ct-status')).toContainText(`· ${phase}`, { timeout: 60_000 });
}

async function typeInTerminal(page: Page, line: string) {
  const screen = page.getByTestId('ct-terminal-screen');
  await expect(screen.locator('.xterm-rows')).toContainText('# ', { timeout: 30_000 });
  await screen.click();
  await page.keyboard.type(line);
  await page.keyboard.press('Enter');
}

test.describe('containers', () => {
  const name = uniqueName('ct');

  test.afterAll(async ({ request, baseURL }) => {
    await request.delete(`/api/cts/${NS}/${name}`, { headers: origin(baseURL) });
  });

  test('create a privileged CT, run a command in its terminal, and keep a file across Stop/Start', async ({ page }) => {
    // A page that logs an error is broken (clean-console.spec.ts); this flow covers the CT page and its terminal.
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    await page.goto('/');
    await page.getByRole('button', { name: 'Create CT' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create CT' });
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByRole('checkbox', { name: /Privileged/ }).check();
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await page.waitForURL(new RegExp(`/cts/${NS}/${name}`), { timeout: 60_000 });
    await waitPhase(page, 'Running');
    await expect(page.getByTestId('ct-summary')).toContainText('docker.io/library/debian:bookworm');
    await expect(page.locator(`[data-testid="tree-ct"][title^="CT ${NS}/${name}"]`)).toBeVisible();

    await page.getByRole('tab', { name: 'Terminal' }).click();
    await typeInTerminal(page, 'echo kept-across-restarts > /root/marker; cat /root/marker');
    const rows = page.getByTestId('ct-terminal-screen').locator('.xterm-rows');
    await expect.poll(async () => ((await rows.textContent()) ?? '').split('kept-across-restarts').length).toBe(3);

    const toolbar = page.getByTestId('ct-toolbar');
    await toolbar.getByRole('button', { name: 'Stop', exact: true }).click();
    await waitPhase(page, 'Stopped');
    await expect(page.getByTestId('ct-terminal')).toContainText('start it to open its terminal');
    await toolbar.getByRole('button', { name: 'Start', exact: true }).click();
    await waitPhase(page, 'Running');
    await typeInTerminal(page, 'cat /root/marker');
    // A fresh terminal on the new pod: the only place the text can come from is the file.
    await expect(page.getByTestId('ct-terminal-screen').locator('.xterm-rows')).toContainText('kept-across-restarts', {
      timeout: 30_000,
    });
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect(page.getByTestId('ct-yaml')).toContainText('corral.ct/spec');
    expect(errors).toEqual([]);
  });
});

async function apiCreateCt(request: APIRequestContext, baseURL: string | undefined, name: string, extra = {}) {
  const res = await request.post('/api/cts', {
    headers: origin(baseURL),
    data: { name, namespace: NS, image: 'docker.io/library/debian:bookworm', ...extra },
  });
  expect(res.status(), await res.text()).toBe(201);
  await expect
    .poll(async () => ((await (await request.get(`/api/cts/${NS}/${name}`)).json()) as { phase: string }).phase, {
      timeout: 60_000,
    })
    .toBe('Running');
}

test.describe('containers in the datacenter table', () => {
  const prefix = uniqueName('dc');
  const ctName = `${prefix}-ct`;
  const vmName = `${prefix}-vm`;

  test.afterAll(async ({ request, baseURL }) => {
    await request.delete(`/api/cts/${NS}/${ctName}`, { headers: origin(baseURL) });
    await apiDelete(request, baseURL, vmName);
  });

  test('a CT row with its type, type:ct, a mixed bulk Stop with a result per guest, live status, bulk Delete', async ({
    page,
    request,
    baseURL,
  }) => {
    await apiCreateCt(request, baseURL, ctName);
    await apiCreate(request, baseURL, vmName, false);
    await waitForStatus(request, vmName, 'Stopped');

    await page.goto(`/?q=${prefix}`);
    await waitLive(page);
    const ct = page.locator(`[data-ct="${NS}/${ctName}"]`);
    await expect(ct.locator('[data-col="type"]')).toContainText('CT');
    await expect(ct.getByRole('img', { name: 'Container' })).toBeVisible();
    await expect(vmRow(page, vmName).locator('[data-col="type"]')).toContainText('VM');
    await expect(ct.locator('[data-col="status"]')).toHaveText('Running');

    const filter = page.getByTestId('vm-filter');
    await filter.fill(`type:ct ${prefix}`);
    await expect(ct).toBeVisible();
    await expect(page.locator('[data-vm]')).toHaveCount(0);
    await expect(page.getByTestId('shown-count')).toContainText('1 of');
    await filter.fill(`type:vm ${prefix}`);
    await expect(vmRow(page, vmName)).toBeVisible();
    await expect(page.locator('[data-ct]')).toHaveCount(0);

    // A running CT and a stopped VM: the CT stops, the VM's refusal is its own line.
    await filter.fill(prefix);
    await ct.getByRole('checkbox').check();
    await vmRow(page, vmName).getByRole('checkbox').check();
    const bar = page.getByTestId('bulk-bar');
    await expect(bar).toContainText('2 selected');
    await bar.getByRole('button', { name: 'Stop', exact: true }).click();
    const results = page.getByTestId('bulk-results');
    await expect(results).toContainText('stop: 1 ok, 1 failed');
    await expect(results.locator(`[data-result="ct:${NS}/${ctName}"]`)).toContainText('stop started');
    await expect(results.locator(`[data-result="${NS}/${vmName}"]`)).toContainText('not running');
    // Pushed by the server: the row changes without a reload or a poll.
    await expect(ct.locator('[data-col="status"]')).toHaveText('Stopped', { timeout: 30_000 });

    // The CT page follows a Start made elsewhere (the API here) without reloading.
    await ct.getByRole('link', { name: ctName }).click();
    await waitPhase(page, 'Stopped');
    await expect(page.getByTestId('ct-disk-usage')).toContainText('unknown — measured only while the CT runs');
    const start = await request.post(`/api/cts/${NS}/${ctName}/start`, { headers: origin(baseURL), data: {} });
    expect(start.status(), await start.text()).toBe(200);
    await waitPhase(page, 'Running');
    await expect(page.getByTestId('ct-disk-usage')).toContainText(/of 8 GiB used/, { timeout: 30_000 });

    // Bulk Delete asks first, lists what goes, and reports each guest.
    await page.goto(`/?q=${prefix}`);
    await waitLive(page);
    await page.getByRole('checkbox', { name: /Select all/ }).check();
    await bar.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete 2 selected' });
    await expect(dialog.getByTestId('bulk-delete-list')).toContainText(`CT ${NS}/${ctName}`);
    await expect(dialog.getByTestId('bulk-delete-list')).toContainText(`VM ${NS}/${vmName}`);
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await expect(results).toContainText('delete: 2 ok, 0 failed', { timeout: 30_000 });
    await expect(page.locator(`[data-ct="${NS}/${ctName}"]`)).toHaveCount(0, { timeout: 30_000 });
  });
});

test.describe('container screenshots', { tag: '@screenshots' }, () => {
  let name = '';

  test.beforeAll(async ({ request, baseURL }) => {
    name = uniqueName('shot');
    const res = await request.post('/api/cts', {
      headers: origin(baseURL),
      data: { name, namespace: NS, image: 'docker.io/library/debian:bookworm', cpu: 2, mem: '2Gi', privileged: true },
    });
    expect(res.status(), await res.text()).toBe(201);
    await expect
      .poll(async () => ((await (await request.get(`/api/cts/${NS}/${name}`)).json()) as { phase: string }).phase, {
        timeout: 60_000,
      })
      .toBe('Running');
  });

  test.afterAll(async ({ request, baseURL }) => {
    await request.delete(`/api/cts/${NS}/${name}`, { headers: origin(baseURL) });
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`screenshots, ${theme}`, async ({ browser, baseURL }) => {
      for (const [viewport, prefix] of [
        [{ width: 1440, height: 900 }, ''],
        [{ width: 390, height: 844 }, 'phone-'],
      ] as const) {
        const context = await browser.newContext({ viewport, baseURL });
        const page = await context.newPage();
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        await page.goto(`/`);
        // (The header's "live" word is hidden at phone width; the table's rows say the fleet has arrived.)
        await expect(page.locator('[data-vm]').first()).toBeVisible();
        await page.getByRole('button', { name: 'Type', exact: true }).click();
        await expect(page.locator(`[data-ct="${NS}/${name}"]`)).toBeVisible();
        await page.locator('section[aria-labelledby="vms-title"]').screenshot({
          path: `${DIR}/${prefix}datacenter-cts${suffix}.png`,
        });
        await page.goto(`/cts/${NS}/${name}?tab=summary`);
        await waitPhase(page, 'Running');
        await expect(page.getByTestId('ct-disk-usage')).toContainText('used (', { timeout: 30_000 });
        await page.screenshot({ path: `${DIR}/${prefix}ct-summary${suffix}.png` });
        await page.getByRole('tab', { name: 'Terminal' }).click();
        await typeInTerminal(page, 'cat /etc/os-release');
        await expect(page.getByTestId('ct-terminal-screen').locator('.xterm-rows')).toContainText('PRETTY_NAME');
        await page.screenshot({ path: `${DIR}/${prefix}ct-terminal${suffix}.png` });
        await page.getByRole('button', { name: 'Create CT' }).click();
        await expect(page.getByRole('dialog', { name: 'Create CT' })).toBeVisible();
        await page.screenshot({ path: `${DIR}/${prefix}ct-create${suffix}.png` });
        await context.close();
      }
    });
  }
});
