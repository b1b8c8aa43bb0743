// Datacenter → Extensions (issue 12): from the Datacenter navigation, install the bootc extension behind its
// confirmation, watch the task list what was applied, see the card turn Installed and capabilities.bootc true;
// remove it again and bootc is false. Screenshots at desktop and phone width in both themes.
import { expect, test } from '@playwright/test';
import { SCREENSHOT_DIR } from './env';
import { PHONE_LOOKS, pictureLooks, watchErrors } from './pictures';

const DIR = SCREENSHOT_DIR;

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
    await pictureLooks(browser, baseURL, 'extensions', PHONE_LOOKS, async (p) => {
      await p.goto('/extensions');
      await expect(p.locator('[data-extension="bootc"]')).toHaveAttribute('data-installed', 'true');
    });

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
