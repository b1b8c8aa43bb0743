import { expect, test } from '@playwright/test';
import { REFRESHING_SCREENSHOTS, SCREENSHOT_DIR, SIM_URL } from './env';
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

test('a slow bulk start shows its progress, and Cancel the rest leaves the unsent guests cancelled', async ({
  page,
  request,
  baseURL,
}) => {
  const prefix = uniqueName('bulkc');
  const names = Array.from({ length: 8 }, (_, i) => `${prefix}-${i}`);
  // The embedded cluster answers each start 4 s late (inside Corral's 5 s request time-out): the run is slow enough
  // to watch and cancel (six are in flight at once, so two are still unsent when Cancel is pressed).
  const faults = (body: unknown) =>
    fetch(`${SIM_URL}/_sim/faults`, {
      method: body ? 'POST' : 'DELETE',
      headers: { 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
  try {
    for (const n of names) await apiCreate(request, baseURL, n, false);
    for (const n of names) await waitForStatus(request, n, 'Stopped');
    await page.goto(`/?q=${prefix}`);
    await waitLive(page);
    await expect(page.locator('[data-vm]')).toHaveCount(8);
    for (const n of names) await vmRow(page, n).getByRole('checkbox').check();
    expect((await faults({ delayFraction: 1, delayMs: 4000, pathPrefix: '/apis/subresources.kubevirt.io/' })).ok).toBe(
      true,
    );
    await page.getByTestId('bulk-bar').getByRole('button', { name: 'Start', exact: true }).click();

    const progress = page.getByTestId('bulk-progress');
    await expect(progress).toContainText('start 0 / 8');
    const cancel = progress.getByRole('button', { name: 'Cancel the rest' });
    await expect(cancel).toBeEnabled();
    // The four pictures only when refreshing them: Cancel must come within the first starts' 4 s, and on a loaded
    // machine four screenshots took longer than that (all eight were sent before Cancel).
    if (REFRESHING_SCREENSHOTS) {
      await page.screenshot({ path: `${SCREENSHOT_DIR}/bulk-progress.png` });
      await page.getByTestId('theme-toggle').click();
      await page.screenshot({ path: `${SCREENSHOT_DIR}/bulk-progress-light.png` });
      await page.setViewportSize({ width: 390, height: 844 });
      await progress.scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SCREENSHOT_DIR}/bulk-progress-phone-light.png` });
      await page.getByTestId('theme-toggle').click();
      await page.screenshot({ path: `${SCREENSHOT_DIR}/bulk-progress-phone.png` });
      await page.setViewportSize({ width: 1280, height: 800 });
    }

    await cancel.click();
    await expect(progress).toContainText('Cancelling…');
    const results = page.getByTestId('bulk-results');
    await expect(results).toContainText('start: 6 ok, 2 failed', { timeout: 30_000 });
    await expect(results.locator('[data-result]', { hasText: 'cancelled before it was sent' })).toHaveCount(2);
    await expect(progress).toHaveCount(0);
  } finally {
    await faults(undefined);
    for (const n of names) await apiDelete(request, baseURL, n);
  }
});
