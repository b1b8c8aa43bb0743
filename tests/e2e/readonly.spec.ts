// A caller not in CORRAL_ADMINS (the second Corral instance of playwright.config.ts) sees the fleet but no control
// that changes state, and a badge saying why.
import { expect, test } from '@playwright/test';
import { READONLY_URL } from './env';

test.use({ baseURL: READONLY_URL || undefined, extraHTTPHeaders: { 'Tailscale-User-Login': 'bob@example.com' } });

test('a non-admin caller sees no action buttons', async ({ page, request }) => {
  test.skip(!READONLY_URL, 'E2E_BASE_URL given without E2E_READONLY_URL: no read-only Corral to test against');
  await page.goto('/');
  await expect(page.getByTestId('readonly-badge')).toBeVisible();
  await expect(page.getByText('bob@example.com')).toBeVisible();
  await expect(page.getByRole('link', { name: /Create VM/ })).toHaveCount(0);
  await expect(page.getByTestId('bulk-bar')).toHaveCount(0);
  await expect(page.locator('[data-vm] input[type=checkbox]')).toHaveCount(0);

  const rows = (await (await request.get('/api/vms')).json()) as { name: string; namespace: string }[];
  const vm = rows[0];
  if (!vm) throw new Error('the demo fleet has no VM to open');
  await page.goto(`/vms/${vm.namespace}/${vm.name}`);
  await expect(page.getByTestId('vm-status')).toBeVisible();
  await expect(page.getByTestId('vm-toolbar')).toHaveCount(0);
  await expect(page.getByRole('button', { name: /^(Start|Stop|Restart|Pause|Resume|Migrate|Delete)$/ })).toHaveCount(0);
  await expect(page.getByLabel('New tag')).toHaveCount(0);
});
