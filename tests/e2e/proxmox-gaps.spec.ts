// Datacenter → Proxmox API (issue 16): Proxmox requests Corral does not serve show up in the gap table with their
// count and last caller, reached from the Datacenter navigation. Screenshots at desktop and phone width in both
// themes.
import { expect, test, type Page } from '@playwright/test';
import { REFRESHING_SCREENSHOTS, SCREENSHOT_DIR } from './env';

const DIR = SCREENSHOT_DIR;

function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

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
  for (const theme of REFRESHING_SCREENSHOTS ? (['dark', 'light'] as const) : []) {
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      baseURL,
      colorScheme: theme,
    });
    const p = await phone.newPage();
    const phoneErrors = watchErrors(p);
    await p.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
    await p.goto('/proxmox');
    await expect(p.locator('html')).toHaveAttribute('data-theme', theme);
    await expect(p.locator('[data-gap="GET /nodes/{node}/ceph/status"]')).toBeVisible();
    await p.screenshot({
      path: `${DIR}/${theme === 'dark' ? 'proxmox-gaps-phone.png' : 'proxmox-gaps-phone-light.png'}`,
    });
    expect(phoneErrors).toEqual([]);
    await phone.close();
  }
  expect(errors).toEqual([]);
});
