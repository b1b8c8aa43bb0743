// Offline migration from the VM page (issue 16): a stopped VM's Migrate asks for a target node (no "let the
// scheduler choose": a stopped VM has no node until it is pinned), the task ends, and the page says the VM is on the
// new node while it stays stopped. Pictures of the offline dialog at desktop and phone width in both themes when
// refreshing docs/screenshots.
import { expect, test, type Page } from '@playwright/test';
import { apiCreate, apiDelete, NS, uniqueName, waitLive } from './helpers';
import { ALL_LOOKS, pictureLooks, watchErrors } from './pictures';

async function openDialog(page: Page, name: string, live = true) {
  await page.goto(`/vms/${NS}/${name}`);
  if (live) await waitLive(page); // the header's live marker is not shown at phone width
  await page.getByTestId('vm-toolbar').getByRole('button', { name: 'Migrate', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await expect(dialog.getByTestId('migrate-offline')).toBeVisible();
  return dialog;
}

test('a stopped VM migrates offline to the node picked, and is shown there', async ({
  page,
  request,
  baseURL,
  browser,
}) => {
  const name = uniqueName('offmig');
  const errors = watchErrors(page);
  try {
    await apiCreate(request, baseURL, name, false);
    const dialog = await openDialog(page, name);
    const confirm = dialog.getByRole('button', { name: 'Migrate', exact: true });
    await expect(confirm).toBeDisabled();
    await expect(confirm).toHaveAttribute('title', /pick the node/);
    await pictureLooks(browser, baseURL, 'vm-migrate-offline', ALL_LOOKS, async (p) => {
      await openDialog(p, name, false);
    });
    await dialog.locator('#migrate-target').selectOption('corral-2');
    await confirm.click();
    await expect(dialog.getByTestId('migrate-progress')).toContainText('pinned to corral-2', { timeout: 30_000 });
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(page.getByTestId('vm-sub')).toContainText('Stopped on corral-2');
    const row = await (await request.get(`/api/vms/${NS}/${name}/row`)).json();
    expect(row).toMatchObject({ node: 'corral-2', status: 'Stopped' });
    expect(errors).toEqual([]);
  } finally {
    await apiDelete(request, baseURL, name);
  }
});
