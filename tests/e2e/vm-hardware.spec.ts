// Hardware and Options tabs (issue 9): add a disk and a NIC to a running VM from the Hardware tab and see both
// still there after a stop and start (the NIC is pending until then); expand, detach and remove NIC through their
// dialogs (disabled controls say why); change options and see them; a read-only caller sees the hardware but no
// control.
import { expect, test } from '@playwright/test';
import { READONLY_URL } from './env';
import { apiAction, apiCreate, apiDelete, NS, uniqueName, waitForStatus, waitLive } from './helpers';

test('add a disk and a NIC from the Hardware tab; both survive a restart', async ({ page, request, baseURL }) => {
  const name = uniqueName('hw');
  try {
    await apiCreate(request, baseURL, name, true);
    await waitForStatus(request, name, 'Running');
    await page.goto(`/vms/${NS}/${name}?tab=hardware`);
    await waitLive(page);
    const table = page.getByTestId('hardware-table');
    await expect(page.getByTestId('hw-cpu')).toContainText('1 vCPU');

    // The scale dialog says whether the change is live or needs a restart before anything is sent.
    await page.getByTestId('hw-cpu').getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByTestId('scale-mode')).toContainText(/live|restart/);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await expect(dialog).toBeHidden();

    await page.getByRole('button', { name: 'Add disk' }).click();
    await dialog.getByLabel('Size').fill('0Gi');
    await expect(dialog.getByText('at least 1Gi')).toBeVisible();
    await dialog.getByLabel('Size').fill('2Gi');
    await dialog.getByRole('button', { name: 'Add disk' }).click();
    await expect(dialog).toBeHidden();
    const disk = table.locator('[data-disk]', { hasText: `${name}-disk-` });
    await expect(disk).toContainText('2 GiB');

    await page.getByRole('button', { name: 'Add NIC' }).click();
    await expect(dialog.getByLabel('Network')).toContainText('lan');
    await dialog.getByLabel('Model').selectOption('e1000');
    await dialog.getByRole('button', { name: 'Add NIC' }).click();
    await expect(dialog).toBeHidden();
    const nic = table.locator('[data-nic]', { hasText: 'network=lan' }).filter({ hasText: 'e1000' });
    await expect(nic).toBeVisible();
    await expect(nic).toContainText('next restart');

    await apiAction(request, baseURL, name, 'stop');
    await waitForStatus(request, name, 'Stopped');
    await apiAction(request, baseURL, name, 'start');
    await waitForStatus(request, name, 'Running');
    // The tab follows the VM's row: after the restart the NIC is no longer pending.
    await expect(nic).not.toContainText('next restart');
    await page.reload();
    await expect(disk).toContainText('2 GiB');
    await expect(nic).toBeVisible();
    await expect(page.getByTestId('hw-cpu')).toContainText('1 vCPU');
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test('expand and detach a disk, remove a NIC, each through its dialog; disabled controls say why', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('hwx');
  try {
    await apiCreate(request, baseURL, name, true);
    await waitForStatus(request, name, 'Running');
    await page.goto(`/vms/${NS}/${name}?tab=hardware`);
    await waitLive(page);
    const table = page.getByTestId('hardware-table');
    const dialog = page.getByRole('dialog');

    // The boot disk is not hot-plugged: while the VM runs its Detach is disabled and says why.
    const bootDisk = table.locator('[data-disk]').filter({ hasNotText: 'hot-plugged' }).first();
    const bootDetach = bootDisk.getByRole('button', { name: 'Detach' });
    await expect(bootDetach).toBeDisabled();
    await expect(bootDetach).toHaveAttribute('title', /^Detach: stop the VM first: \S+ is not hot-plugged$/);

    // A hot-plugged disk to work on.
    await page.getByRole('button', { name: 'Add disk' }).click();
    await dialog.getByLabel('Size').fill('1Gi');
    await dialog.getByRole('button', { name: 'Add disk' }).click();
    await expect(dialog).toBeHidden();
    const disk = table.locator('[data-disk]', { hasText: `${name}-disk-` });
    await expect(disk).toContainText('hot-plugged');
    await expect(disk).toContainText('1 GiB');

    // Expand: a size that does not grow is refused in the dialog; a larger one grows the volume.
    await disk.getByRole('button', { name: 'Expand' }).click();
    await expect(dialog.getByLabel('New size')).toHaveValue('1Gi');
    await expect(dialog.getByText('must be larger than now (1 GiB)')).toBeVisible();
    await expect(dialog.getByRole('button', { name: 'Expand' })).toBeDisabled();
    await dialog.getByLabel('New size').fill('3Gi');
    await expect(dialog.getByText(/^Now 1 GiB; a volume only grows/)).toBeVisible();
    await dialog.getByRole('button', { name: 'Expand' }).click();
    await expect(dialog).toBeHidden();
    await expect(disk).toContainText('3 GiB', { timeout: 30_000 });

    // Detach it and delete its volume: the row goes, the boot disk stays.
    await disk.getByRole('button', { name: 'Detach' }).click();
    await expect(dialog).toContainText('unplugged from the running guest');
    await dialog.getByLabel(/Also delete the volume/).check();
    await dialog.getByRole('button', { name: 'Detach and delete' }).click();
    await expect(dialog).toBeHidden();
    await expect(disk).toHaveCount(0, { timeout: 30_000 });
    await expect(bootDisk).toBeVisible();

    // Remove NIC: a NIC added on the lan network, removed again once the VM is stopped.
    await page.getByRole('button', { name: 'Add NIC' }).click();
    await dialog.getByRole('button', { name: 'Add NIC' }).click();
    await expect(dialog).toBeHidden();
    const nic = table.locator('[data-nic]', { hasText: 'network=lan' });
    await expect(nic).toBeVisible();
    await apiAction(request, baseURL, name, 'stop');
    await waitForStatus(request, name, 'Stopped');
    // Stopped, the boot disk's Detach is no longer refused.
    await expect(bootDetach).toBeEnabled();
    const nicName = (await nic.getAttribute('data-nic')) ?? '';
    await nic.getByRole('button', { name: 'Remove' }).click();
    await expect(dialog).toContainText(`Remove ${nicName} from ${name}?`);
    await expect(dialog).toContainText('is removed from the VM spec.');
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await expect(dialog).toBeHidden();
    await expect(table.locator(`[data-nic="${nicName}"]`)).toHaveCount(0);
    await page.reload();
    await expect(table.locator('[data-nic]').first()).toBeVisible();
    await expect(table.locator(`[data-nic="${nicName}"]`)).toHaveCount(0);
    await expect(table.locator('[data-disk]', { hasText: `${name}-disk-` })).toHaveCount(0);
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test('change options: description, firmware and boot order', async ({ page, request, baseURL }) => {
  const name = uniqueName('opt');
  try {
    await apiCreate(request, baseURL, name, false);
    await page.goto(`/vms/${NS}/${name}?tab=options`);
    await waitLive(page);
    const dialog = page.getByRole('dialog');

    await page.getByTestId('opt-description').getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel('Description').fill('build box for the e2e run');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('opt-description')).toContainText('build box for the e2e run');

    await page.getByTestId('opt-firmware').getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel('UEFI (OVMF)').check();
    await dialog.getByLabel(/Secure boot/).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('opt-firmware')).toContainText('UEFI');
    await expect(page.getByTestId('opt-firmware')).toContainText('secure boot on');
    // A stopped VM takes it at once: nothing pending.
    await expect(page.getByTestId('opt-firmware-pending')).toHaveCount(0);

    await page.getByTestId('opt-boot').getByRole('button', { name: 'Edit' }).click();
    const list = dialog.getByTestId('boot-list');
    const last = list.locator('li').last();
    const device = (await last.getAttribute('data-device')) ?? '';
    await last.getByRole('checkbox').check();
    await last.getByRole('button', { name: /Move .* up/ }).click();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('opt-boot')).toContainText(device);

    // Start on boot for a stopped VM would start it: refused in the dialog with the reason.
    await page.getByTestId('opt-start').getByRole('button', { name: 'Edit' }).click();
    await expect(dialog.getByLabel(/^Always/)).toBeDisabled();
    await expect(dialog).toContainText('would start the VM now');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    // A stopped Halted VM starts as Always: start on boot (Proxmox's onboot) says Yes; Manual says No.
    await expect(page.getByTestId('opt-start')).toContainText('Yes');
    await expect(page.getByTestId('opt-start')).toContainText('Halted');
    await page.getByTestId('opt-start').getByRole('button', { name: 'Edit' }).click();
    await dialog.getByLabel(/^Manual/).check();
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('opt-start')).toContainText('No');
    await expect(page.getByTestId('opt-start')).toContainText('Manual');

    await page.reload();
    await expect(page.getByTestId('opt-description')).toContainText('build box for the e2e run');
    await expect(page.getByTestId('opt-firmware')).toContainText('UEFI');
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test.describe('read-only', () => {
  test.use({ baseURL: READONLY_URL || undefined, extraHTTPHeaders: { 'Tailscale-User-Login': 'bob@example.com' } });

  test('a non-admin sees the hardware and options but no control', async ({ page, request }) => {
    test.skip(!READONLY_URL, 'no read-only Corral to test against');
    const rows = (await (await request.get('/api/vms')).json()) as { name: string; namespace: string }[];
    const vm = rows[0];
    if (!vm) throw new Error('the demo fleet has no VM to open');
    await page.goto(`/vms/${vm.namespace}/${vm.name}?tab=hardware`);
    await expect(page.getByTestId('hw-cpu')).toContainText('vCPU');
    await expect(page.getByRole('button', { name: /Add disk|Add NIC|Edit|Expand|Detach|Remove/ })).toHaveCount(0);
    await page.goto(`/vms/${vm.namespace}/${vm.name}?tab=options`);
    await expect(page.getByTestId('opt-firmware')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Edit' })).toHaveCount(0);
  });
});
