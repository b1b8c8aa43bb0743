// Datacenter → Schedules and a VM's Options schedule section (issue 12): install snapshot-schedules from the
// Extensions page, add a "nightly, keep 7" schedule by tag from the Schedules page, run it now and read its history;
// add a schedule for one VM from that VM's Options view. Screenshots at desktop and phone width in both themes.
// Everything it creates is removed again (the e2e cluster is shared).
import { expect, test, type Browser, type Page } from '@playwright/test';
import { SCREENSHOT_DIR } from './env';
import { PHONE_LOOKS, pictureLooks, watchErrors } from './pictures';

const DIR = SCREENSHOT_DIR;

/** The screen at phone width in both themes; nothing may widen the page past the phone (tables scroll inside). */
async function phoneShots(browser: Browser, baseURL: string | undefined, path: string, name: string, ready: string) {
  await pictureLooks(
    browser,
    baseURL,
    name,
    PHONE_LOOKS,
    async (p) => {
      await p.goto(path);
      await expect(p.getByTestId(ready)).toBeVisible();
    },
    { fitsPhone: true },
  );
}

async function bothThemes(page: Page, name: string) {
  await page.screenshot({ path: `${DIR}/${name}.png` });
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.screenshot({ path: `${DIR}/${name}-light.png` });
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
}

test('install snapshot-schedules, add a schedule, run it now, add one from a VM', async ({
  page,
  browser,
  request,
  baseURL,
}) => {
  const errors = watchErrors(page);
  const vms = (await (await request.get('/api/vms')).json()) as { namespace: string; name: string }[];
  const vm = vms[0]!;
  try {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto('/');
    await page.getByRole('link', { name: 'Schedules' }).click();
    await expect(page).toHaveURL(/\/schedules$/);
    await expect(page.getByTestId('schedules-need-extension')).toContainText('snapshot-schedules');

    // Install the extension from its card.
    await page.getByTestId('schedules-need-extension').getByRole('link', { name: 'Extensions' }).click();
    const card = page.locator('[data-extension="snapshot-schedules"]');
    await expect(card).toContainText('ServiceAccount corral-snapshot-scheduler');
    await card.getByRole('button', { name: 'Install' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Install', exact: true }).click();
    await expect(page.getByTestId('extension-changes')).toContainText('applied ClusterRole corral-snapshot-scheduler');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await expect(card).toHaveAttribute('data-installed', 'true');

    // Add "nightly, keep 7" for a tag.
    await page.getByRole('link', { name: 'Schedules' }).click();
    await expect(page.getByTestId('schedules-need-extension')).toHaveCount(0);
    await page.getByRole('button', { name: 'Add schedule' }).click();
    await dialog.getByLabel('Name', { exact: true }).fill('e2e-nightly');
    await dialog.getByLabel('Tag', { exact: true }).fill('e2e-backup');
    await dialog.getByLabel('Preset').selectOption({ label: 'Nightly at 02:00' });
    await expect(dialog.getByLabel('Keep (per VM)')).toHaveValue('7');
    await page.screenshot({ path: `${DIR}/schedule-dialog.png` });
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect(dialog).toHaveCount(0);
    const row = page.locator('[data-schedule="e2e-nightly"]');
    await expect(row).toContainText('Nightly at 02:00');
    await expect(row).toContainText('tag e2e-backup');
    await expect(row).toContainText('snapshot, keep 7');
    await expect(row).toContainText('never');

    // Run now: a task, then the run in the history.
    await row.getByRole('button', { name: 'Run now' }).click();
    await expect(page.getByTestId('schedule-run-result').getByRole('status')).toContainText('0 VMs done');
    await row.getByRole('button', { name: 'History' }).click();
    await expect(page.getByTestId('schedule-runs')).toContainText('run now by');
    await expect(page.getByTestId('schedule-runs')).toContainText('0 matching VMs tagged e2e-backup');
    await bothThemes(page, 'schedules');
    await phoneShots(browser, baseURL, '/schedules', 'schedules', 'schedule-table');

    // From a VM's Options view: a schedule for this VM.
    await page.goto(`/vms/${vm.namespace}/${vm.name}?tab=options`);
    const section = page.getByTestId('vm-schedules');
    await expect(section).toContainText('No schedule takes in this VM');
    await section.getByRole('button', { name: 'Add schedule' }).click();
    await expect(dialog.getByLabel('VM', { exact: true })).toHaveValue(`${vm.namespace}/${vm.name}`);
    await dialog.getByLabel('Name', { exact: true }).fill('e2e-vm');
    await dialog.getByLabel('Keep (per VM)').fill('3');
    await dialog.getByRole('button', { name: 'Create' }).click();
    await expect(dialog).toHaveCount(0);
    await expect(section.locator('[data-schedule="e2e-vm"]')).toContainText(`VM ${vm.namespace}/${vm.name}`);
    await expect(section.locator('[data-schedule="e2e-vm"]')).toContainText('snapshot, keep 3');
    await section.scrollIntoViewIfNeeded();
    await bothThemes(page, 'vm-options-schedules');
    await phoneShots(
      browser,
      baseURL,
      `/vms/${vm.namespace}/${vm.name}?tab=options`,
      'vm-options-schedules',
      'vm-schedule-table',
    );
    expect(errors).toEqual([]);
  } finally {
    // Leave the shared e2e cluster as found.
    await request.delete('/api/schedules/e2e-nightly');
    await request.delete('/api/schedules/e2e-vm');
    await request.delete('/api/plugins/snapshot-schedules');
  }
});
