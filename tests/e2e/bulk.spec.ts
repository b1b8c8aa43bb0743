import { expect, test } from '@playwright/test';
import { apiCreate, apiDelete, uniqueName, vmRow, waitForStatus, waitLive } from './helpers';

test('bulk-start two stopped VMs and read the result per VM', async ({ page, request, baseURL }) => {
  const prefix = uniqueName('bulk');
  const names = [`${prefix}-a`, `${prefix}-b`];
  try {
    for (const n of names) await apiCreate(request, baseURL, n, false);
    for (const n of names) await waitForStatus(request, n, 'Stopped');

    await page.goto(`/?q=${prefix}`);
    await waitLive(page);
    await expect(page.locator('[data-vm]')).toHaveCount(2);
    for (const n of names) await vmRow(page, n).getByRole('checkbox').check();
    await expect(page.getByTestId('bulk-bar')).toContainText('2 selected');
    await page.getByTestId('bulk-bar').getByRole('button', { name: 'Start', exact: true }).click();

    const results = page.getByTestId('bulk-results');
    await expect(results).toContainText('start: 2 ok, 0 failed');
    for (const n of names) await expect(results.locator(`[data-result="tailvm/${n}"]`)).toContainText('start accepted');
    await expect(page.getByTestId('bulk-bar')).toContainText('0 selected');
    for (const n of names)
      await expect(vmRow(page, n).locator('[data-col="status"]')).toHaveText('Running', { timeout: 60_000 });

    // A second start is refused by the server per VM, and the UI says which and why.
    for (const n of names) await vmRow(page, n).getByRole('checkbox').check();
    await page.getByTestId('bulk-bar').getByRole('button', { name: 'Start', exact: true }).click();
    await expect(results).toContainText('start: 0 ok, 2 failed');
  } finally {
    for (const n of names) await apiDelete(request, baseURL, n);
  }
});
