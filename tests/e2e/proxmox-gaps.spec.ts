// Datacenter → Proxmox API (issue 16): Proxmox requests Corral does not serve show up in the gap table with their
// count and last caller, reached from the Datacenter navigation. Screenshots at desktop and phone width in both
// themes.
import { expect, test } from '@playwright/test';
import { SCREENSHOT_DIR } from './env';
import { PHONE_LOOKS, pictureLooks, watchErrors } from './pictures';

const DIR = SCREENSHOT_DIR;

test('unserved Proxmox requests are listed by shape with counts and the caller', async ({
  page,
  browser,
  request,
  baseURL,
}) => {
  const errors = watchErrors(page);
  // Open mode: a loopback caller is root@pam. Two nodes, one shape; a write to another unserved endpoint.
  for (const node of ['corral-1', 'corral-2'])
    expect((await request.get(`/api2/json/nodes/${node}/ceph/status`)).status()).toBe(501);
  expect(
    (await request.post('/api2/json/nodes/corral-1/qemu/100/sendkey', { form: { key: 'ctrl-alt-delete' } })).status(),
  ).toBe(501);

  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/');
  await page.getByRole('link', { name: 'Proxmox API' }).click();
  await expect(page).toHaveURL(/\/proxmox$/);
  const ceph = page.locator('[data-gap="GET /nodes/{node}/ceph/status"]');
  await expect(ceph).toContainText('e.g. /nodes/corral-1/ceph/status');
  await expect(ceph.locator('td.num')).toHaveText(/^[2-9]\d*$/);
  await expect(ceph).toContainText('root@pam');
  await expect(page.locator('[data-gap="POST /nodes/{node}/qemu/{id}/sendkey"]')).toBeVisible();
  await expect(page.locator('.page-head .page-sub')).toContainText('missing');

  await page.screenshot({ path: `${DIR}/proxmox-gaps.png` });
  await page.getByTestId('theme-toggle').click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await page.screenshot({ path: `${DIR}/proxmox-gaps-light.png` });
  await page.getByTestId('theme-toggle').click();
  await pictureLooks(browser, baseURL, 'proxmox-gaps', PHONE_LOOKS, async (p) => {
    await p.goto('/proxmox');
    await expect(p.locator('[data-gap="GET /nodes/{node}/ceph/status"]')).toBeVisible();
  });
  expect(errors).toEqual([]);
});
