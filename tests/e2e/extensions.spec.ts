// Datacenter → Extensions (issue 12): from the Datacenter navigation, install the bootc extension behind its
// confirmation, watch the task list what was applied, see the card turn Installed and capabilities.bootc true;
// remove it again and bootc is false. Screenshots at desktop and phone width in both themes.
import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOT_DIR } from './env';

const DIR = SCREENSHOT_DIR;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

test('install the bootc extension, see it installed, remove it', async ({ page, browser, request, baseURL }) => {
  const errors = watchErrors(page);
  const bootc = async () => ((await (await request.get('/api/capabilities')).json()) as { bootc: boolean }).bootc;
  try {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/');
    await page.getByRole('link', { name: 'Extensions' }).click();
    await expect(page).toHaveURL(/\/extensions$/);
    const card = page.locator('[data-extension="bootc"]');
    await expect(card).toHaveAttribute('data-installed', 'false');
    await expect(card).toContainText('ServiceAccount corral-bootc-builder');
    expect(await bootc()).toBe(false);

    await card.getByRole('button', { name: 'Install' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('labelled corral.dev/extension=bootc');
    await dialog.getByRole('button', { name: 'Install', exact: true }).click();
    await expect(page.getByTestId('extension-changes')).toContainText(
      'applied ServiceAccount tailvm/corral-bootc-builder',
    );
    await expect(page.getByTestId('extension-progress').getByRole('status')).toContainText('installed bootc');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(card).toHaveAttribute('data-installed', 'true');
    await expect(card).toContainText('Installed');
    expect(await bootc()).toBe(true);

    await page.screenshot({ path: `${DIR}/extensions.png` });
    await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.screenshot({ path: `${DIR}/extensions-light.png` });
    await page.getByTestId('theme-toggle').click();
    for (const theme of ['dark', 'light'] as const) {
      const phone = await browser.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
        baseURL,
        colorScheme: theme,
      });
      const p = await phone.newPage();
      const phoneErrors = watchErrors(p);
      await p.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await p.goto('/extensions');
      await expect(p.locator('html')).toHaveAttribute('data-theme', theme);
      await expect(p.locator('[data-extension="bootc"]')).toHaveAttribute('data-installed', 'true');
      await p.screenshot({
        path: `${DIR}/${theme === 'dark' ? 'extensions-phone.png' : 'extensions-phone-light.png'}`,
      });
      expect(phoneErrors).toEqual([]);
      await phone.close();
    }

    await card.getByRole('button', { name: 'Remove' }).click();
    await expect(dialog).toContainText('deletes every object labelled corral.dev/extension=bootc');
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
    await expect(page.getByTestId('extension-changes')).toContainText(
      'removed RoleBinding tailvm/corral-bootc-builder',
    );
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(card).toHaveAttribute('data-installed', 'false');
    expect(await bootc()).toBe(false);
    expect(errors).toEqual([]);
  } finally {
    // Leave the shared e2e cluster as found (the extension not installed).
    await request.delete('/api/plugins/bootc');
  }
});
