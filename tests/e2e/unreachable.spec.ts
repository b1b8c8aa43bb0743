// When the embedded cluster stops answering (its fault-control interface makes it refuse every connection and
// drops the open watches), the UI says so in a banner with Retry — and keeps showing the last known state. When
// the cluster answers again, the banner goes away by itself.
import { expect, test } from '@playwright/test';
import { SIM_URL } from './env';
import { apiCreate, apiDelete, uniqueName, vmRow, waitLive } from './helpers';

test('the unreachable-cluster banner appears when the cluster stops answering', async ({ page, request }) => {
  test.skip(!SIM_URL, 'no E2E_SIM_URL for an external Corral: cannot inject cluster faults');
  await page.goto('/');
  await waitLive(page);
  await expect(page.getByTestId('cluster-unreachable')).toHaveCount(0);
  try {
    expect((await request.post(`${SIM_URL}/_sim/faults`, { data: { unresponsive: 'refuse' } })).ok()).toBe(true);
    expect((await request.post(`${SIM_URL}/_sim/faults/drop-watches`, { data: {} })).ok()).toBe(true);
    const banner = page.getByTestId('cluster-unreachable');
    await expect(banner).toBeVisible({ timeout: 60_000 });
    await expect(banner).toContainText('Cluster unreachable');
    await expect(banner.getByRole('button', { name: 'Retry' })).toBeVisible();
    // Never a blank page: the last known fleet stays on screen.
    await expect(page.getByRole('heading', { name: 'Datacenter' })).toBeVisible();
  } finally {
    await request.delete(`${SIM_URL}/_sim/faults`);
  }
  await expect(page.getByTestId('cluster-unreachable')).toHaveCount(0, { timeout: 60_000 });
});

// A hung cluster (requests accepted, never answered; the open watches go silent): the banner appears once the
// grace period has passed, the last known fleet stays, and within seconds of the cluster answering again the banner
// is gone and the page shows changes made after the hang.
test('a hung cluster: stale banner while hung, the page current again within seconds', async ({
  page,
  request,
  baseURL,
}) => {
  test.skip(!SIM_URL, 'no E2E_SIM_URL for an external Corral: cannot inject cluster faults');
  const name = uniqueName('after-hang');
  await page.goto(`/?q=${name}`); // the table shows only the VM created after the hang
  await waitLive(page);
  await expect(page.getByTestId('cluster-unreachable')).toHaveCount(0);
  try {
    expect((await request.post(`${SIM_URL}/_sim/faults`, { data: { unresponsive: 'hang' } })).ok()).toBe(true);
    expect((await request.post(`${SIM_URL}/_sim/faults/drop-watches`, { data: {} })).ok()).toBe(true);
    await expect(page.getByTestId('cluster-unreachable')).toBeVisible({ timeout: 30_000 });
    await expect(page.getByRole('heading', { name: 'Datacenter' })).toBeVisible();
  } finally {
    await request.delete(`${SIM_URL}/_sim/faults`);
  }
  await expect(page.getByTestId('cluster-unreachable')).toHaveCount(0, { timeout: 10_000 });
  try {
    await apiCreate(request, baseURL, name, false);
    await expect(vmRow(page, name)).toBeVisible({ timeout: 5000 });
  } finally {
    await apiDelete(request, baseURL, name);
  }
});
