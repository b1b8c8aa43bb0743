// Containers in the browser: Create CT through the dialog, the CT in the tree, its Terminal runs a command and
// shows the output, and in a privileged CT a file written in the terminal is still there after Stop and Start.
// Screenshots of the CT page, the terminal and the dialog at desktop and phone width in both themes.
import { expect, test, type Page } from '@playwright/test';
import { NS, origin, uniqueName } from './helpers';

const DIR = 'docs/screenshots';

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

test.describe('container screenshots', () => {
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
        await page.goto(`/cts/${NS}/${name}?tab=summary`);
        await waitPhase(page, 'Running');
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
