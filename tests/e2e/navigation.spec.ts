import { expect, test } from '@playwright/test';
import { apiCreate, apiDelete, NS, uniqueName, waitLive } from './helpers';

test('a VM page URL reloads to the same VM and tab', async ({ page, request, baseURL }) => {
  const name = uniqueName('nav');
  try {
    await apiCreate(request, baseURL, name);
    await page.goto(`/vms/${NS}/${name}?tab=summary`);
    await waitLive(page);
    await page.getByRole('tab', { name: 'YAML' }).click();
    await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${name}\\?tab=yaml$`));
    await expect(page.getByTestId('vm-yaml')).toContainText('kind: VirtualMachine');
    await page.reload();
    await expect(page.getByRole('tab', { name: 'YAML' })).toHaveAttribute('aria-selected', 'true');
    await expect(page.getByTestId('vm-yaml')).toContainText(`name: ${name}`);
    await expect(page.getByRole('heading', { level: 1 })).toContainText(name);
    // The tree marks the selected VM.
    await expect(page.locator('#resource-tree [aria-current="page"]')).toContainText(name);
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test('an unknown VM shows a clear message, never a blank page', async ({ page }) => {
  await page.goto(`/vms/${NS}/does-not-exist-${Date.now()}`);
  await expect(page.getByTestId('vm-missing')).toContainText('No VM');
});
