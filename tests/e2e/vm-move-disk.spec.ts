// Hardware tab → Move (issue 16): a stopped VM's disk moves to another StorageClass through its dialog and the row
// then shows the new class; while the VM runs a hot-plugged disk's button is disabled and says why. Screenshots of the dialog at
// desktop and phone width in both themes.
import { expect, test } from '@playwright/test';
import { apiAction, apiCreate, apiDelete, NS, origin, uniqueName, waitForStatus, waitLive } from './helpers';
import { ALL_LOOKS, pictureLooks, watchErrors } from './pictures';

test('move a stopped VM disk to another storage class from the Hardware tab', async ({
  page,
  browser,
  request,
  baseURL,
}) => {
  const name = uniqueName('mv');
  const errors = watchErrors(page);
  try {
    await apiCreate(request, baseURL, name, true);
    await waitForStatus(request, name, 'Running');
    await page.setViewportSize({ width: 1440, height: 900 });
    // A volume to move (the cirros root disk is a containerDisk, which has no claim).
    const added = await request.post(`/api/vms/${NS}/${name}/volumes`, {
      headers: origin(baseURL),
      data: { size: '1Gi' },
    });
    expect(added.status(), await added.text()).toBe(202);
    await page.goto(`/vms/${NS}/${name}?tab=hardware`);
    await waitLive(page);
    const root = page.getByTestId('hardware-table').locator('[data-disk]', { hasText: `${name}-disk-` });
    const move = root.getByRole('button', { name: 'Move' });
    await expect(move).toBeDisabled();
    // A running VM's disks move by a volume migration, but not one hot-plugged after the start (as this one is).
    await expect(move).toHaveAttribute('title', /Stop the VM first: a hot-plugged disk cannot move while the VM runs/);

    await apiAction(request, baseURL, name, 'stop');
    await waitForStatus(request, name, 'Stopped');
    await expect(move).toBeEnabled();
    await move.click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Storage class').fill('longhorn');
    await expect(dialog.getByText('the disk is already on longhorn')).toBeVisible();
    await dialog.getByLabel('Storage class').fill('nfs');
    await dialog.getByRole('button', { name: 'Move', exact: true }).click();
    await expect(dialog).toBeHidden();
    const moved = page.getByTestId('hardware-table').locator('[data-disk]', { hasText: 'storage=nfs' });
    await expect(moved).toBeVisible({ timeout: 60_000 });
    await expect(moved).toContainText(/-mv[0-9a-z]+/);

    // The dialog (the modal blocks the theme toggle, so each picture is its own context).
    await pictureLooks(browser, baseURL, 'vm-move-disk', ALL_LOOKS, async (p) => {
      await p.goto(`/vms/${NS}/${name}?tab=hardware`);
      const row = p.getByTestId('hardware-table').locator('[data-disk]', { hasText: 'storage=nfs' });
      await row.getByRole('button', { name: 'Move' }).click();
      await p.getByRole('dialog').getByLabel('Storage class').fill('longhorn');
    });
    expect(errors).toEqual([]);
  } finally {
    await apiDelete(request, baseURL, name);
  }
});
