// The main path: create from the catalog and watch it run without reloading, tag it, filter by tag and status,
// stop it, delete it.
import { expect, test } from '@playwright/test';
import { apiDelete, NS, uniqueName, vmRow, waitLive } from './helpers';

test('create from the catalog, watch it run live, tag, filter, stop and delete', async ({ page, request, baseURL }) => {
  const name = uniqueName('e2e');
  try {
    await page.goto('/create');
    await waitLive(page);
    await page.locator('[data-image="cirros"]').click();
    await page.getByTestId('wizard-next').click();
    await page.getByLabel('Name', { exact: true }).fill('Bad_Name');
    await expect(page.getByTestId('error-name')).toContainText('Lower-case');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await expect(page.getByTestId('error-name')).toHaveCount(0);
    await page.getByRole('button', { name: 'Small' }).click();
    await page.getByTestId('create-submit').click();

    await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${name}\\?tab=summary$`));
    // No reload from here on: the status must arrive through the live stream.
    await expect(page.getByTestId('vm-status')).toHaveText('Running', { timeout: 60_000 });

    await page.getByLabel('New tag').fill('e2etag');
    await page.getByRole('button', { name: 'Add tag' }).click();
    await expect(page.getByTestId('vm-tags')).toContainText('e2etag');

    await page.getByRole('link', { name: 'Datacenter' }).first().click();
    const filter = page.getByTestId('vm-filter');
    await filter.fill('tag:e2etag');
    await expect(vmRow(page, name)).toBeVisible();
    await expect(page.locator('[data-vm]')).toHaveCount(1);
    await filter.fill(`tag:e2etag status:running`);
    await expect(vmRow(page, name)).toBeVisible();
    await filter.fill(`tag:e2etag status:stopped`);
    await expect(page.getByText('Nothing matches')).toBeVisible();
    await expect(page).toHaveURL(/q=tag%3Ae2etag/);

    await page.goto(`/vms/${NS}/${name}`);
    const stop = page.getByTestId('vm-toolbar').getByRole('button', { name: 'Stop', exact: true });
    await stop.click();
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped', { timeout: 60_000 });
    await expect(stop).toBeDisabled();
    await expect(stop).toHaveAttribute('title', 'Stop: already stopped');
    const start = page.getByTestId('vm-toolbar').getByRole('button', { name: 'Start', exact: true });
    await expect(start).toBeEnabled();

    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'Delete' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByTestId('deletion-plan')).toContainText(`VirtualMachine ${NS}/${name}`);
    const confirm = dialog.getByRole('button', { name: 'Delete' });
    await expect(confirm).toBeDisabled();
    await dialog.getByLabel(/to confirm/).fill(name);
    await confirm.click();
    await expect(page).toHaveURL(/\/$/);
    await page.getByTestId('vm-filter').fill(name);
    await expect(vmRow(page, name)).toHaveCount(0, { timeout: 30_000 });
  } finally {
    await apiDelete(request, baseURL, name);
  }
});
