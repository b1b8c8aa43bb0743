// The usage charts (issue 10): the VM Summary charts draw the retained samples and take new ones from the live
// push without a reload or a history refetch; the window selector redraws the axis for a day; the crosshair
// reads a sample; the Datacenter "top VMs" widgets list the busiest VM first, as GET /api/metrics/top does; the
// Node page charts its VMs' sums. Plus the screenshots of the charts (desktop and phone, both themes).
// The e2e server samples metrics every few seconds (tests/e2e/serve.ts), so rounds arrive quickly.
import { expect, test, type Page } from '@playwright/test';
import { SIM_URL } from './env';
import { NS, apiCreate, apiDelete, uniqueName, waitForStatus, waitLive } from './helpers';
import { SCREENSHOT_DIR } from './env';

const DIR = SCREENSHOT_DIR;
let vm = '';
let node = '';

interface TopRow {
  namespace: string;
  name: string;
  node: string;
  cpu: number;
  mem?: number;
}

test.beforeAll(async ({ request, baseURL }) => {
  vm = uniqueName('charts');
  await apiCreate(request, baseURL, vm);
  await waitForStatus(request, vm, 'Running');
  // Measured by metrics-server (15–60 s of simulated time after start) and sampled at least twice.
  await expect
    .poll(
      async () => ((await (await request.get(`/api/vms/${NS}/${vm}/metrics/history`)).json()) as unknown[]).length,
      { timeout: 60_000, intervals: [500] },
    )
    .toBeGreaterThanOrEqual(2);
  const rows = (await (await request.get('/api/vms', { params: { namespace: NS } })).json()) as {
    name: string;
    node?: string;
  }[];
  node = rows.find((r) => r.name === vm)?.node ?? '';
  expect(node).not.toBe('');
});

test.afterAll(async ({ request, baseURL }) => {
  await apiDelete(request, baseURL, vm);
});

/** Counts the history requests a page makes (tRPC batches name their procedures in the path). */
function countRequests(page: Page, procedure: string): { count: number } {
  const seen = { count: 0 };
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/trpc/') && r.url().includes(procedure)) seen.count++;
  });
  return seen;
}

test('Summary charts draw the samples and take new ones live, without reload or refetch', async ({ page, request }) => {
  const historyRequests = countRequests(page, 'metrics.vmHistory');
  await page.goto(`/vms/${NS}/${vm}?tab=summary`);
  await waitLive(page);
  const cpu = page.getByTestId('chart-cpu');
  await expect(cpu).toHaveAttribute('data-window', 'hour');
  await expect.poll(async () => Number(await cpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  // Drawn: a line through at least two samples, and the vCPU allocation line (1 vCPU = 1000 millicores).
  await expect(cpu.locator('.chart-line')).toHaveAttribute('d', /^M[\d.]+ [\d.]+L[\d.]+ [\d.]+/);
  await expect(cpu.locator('.chart-ref')).toContainText('1 core allocated');
  await expect(page.getByTestId('chart-mem').locator('.chart-ref')).toContainText('512 MiB limit');
  await expect(page.getByTestId('chart-mem').locator('.chart-line')).toHaveAttribute('d', /^M[\d.]+ [\d.]+L/);
  // Network and disk rates are drawn (two series each) where the cluster measures them, else the chart says so.
  const held = (await (await request.get(`/api/vms/${NS}/${vm}/metrics/history`)).json()) as Record<string, number>[];
  for (const [id, field] of [
    ['chart-net', 'netin'],
    ['chart-disk', 'diskread'],
  ] as const) {
    if (held.some((p) => p[field] !== undefined)) {
      await expect(page.getByTestId(id).locator('[data-series]')).toHaveCount(2);
      await expect(page.getByTestId(id).locator('.chart-line').first()).toHaveAttribute('d', /^M[\d.]+ [\d.]+L/);
    } else {
      await expect(page.getByTestId(`${id}-empty`)).toContainText('Not measured on this cluster');
    }
  }

  // A marker on window survives only if the page is not reloaded.
  await page.evaluate(() => ((window as unknown as { chartMarker: number }).chartMarker = 1));
  // Both attributes read at once: a point may arrive between two separate reads.
  const read = () =>
    cpu.evaluate((el) => ({ t: Number(el.getAttribute('data-last-t')), n: Number(el.getAttribute('data-points')) }));
  const before = await read();
  const requestsBefore = historyRequests.count;
  await expect
    .poll(async () => {
      const now = await read();
      return now.t > before.t && now.n > before.n;
    })
    .toBe(true);
  expect(await page.evaluate(() => (window as unknown as { chartMarker?: number }).chartMarker)).toBe(1);
  expect(historyRequests.count, 'the new point came from the push, not a refetch').toBe(requestsBefore);
});

test('switching to "day" redraws the time axis for a day', async ({ page }) => {
  const dayRequests = countRequests(page, 'metrics.vmHistory');
  await page.goto(`/vms/${NS}/${vm}?tab=summary`);
  const cpu = page.getByTestId('chart-cpu');
  await expect.poll(async () => Number(await cpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(1);
  const hourStep = Number(await cpu.getAttribute('data-tick-step'));
  const hourLabels = await cpu.locator('[data-axis="x"] text').allTextContents();
  expect(hourStep).toBeLessThanOrEqual(15 * 60_000);
  const sent = dayRequests.count;

  await page.getByTestId('chart-window').getByRole('button', { name: 'Day' }).click();
  await expect(page.getByTestId('chart-window').getByRole('button', { name: 'Day' })).toHaveAttribute(
    'aria-pressed',
    'true',
  );
  await expect(cpu).toHaveAttribute('data-window', 'day');
  const dayStep = Number(await cpu.getAttribute('data-tick-step'));
  expect(dayStep).toBeGreaterThanOrEqual(3 * 3_600_000);
  const dayLabels = await cpu.locator('[data-axis="x"] text').allTextContents();
  expect(dayLabels).not.toEqual(hourLabels);
  // Day ticks sit on whole hours (HH:00) or name a day at midnight.
  for (const label of dayLabels) expect(label).toMatch(/^(\d\d:00|[A-Z][a-z]{2} \d{1,2})$/);
  expect(dayRequests.count).toBeGreaterThan(sent);

  await page.getByTestId('chart-window').getByRole('button', { name: 'Week' }).click();
  await expect(cpu).toHaveAttribute('data-window', 'week');
  for (const label of await cpu.locator('[data-axis="x"] text').allTextContents())
    expect(label).toMatch(/^[A-Z][a-z]{2} \d{1,2}$/);
});

test('hovering or the arrow keys show a sample’s value and time', async ({ page }) => {
  await page.goto(`/vms/${NS}/${vm}?tab=summary`);
  const cpu = page.getByTestId('chart-cpu');
  await expect.poll(async () => Number(await cpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  await cpu.scrollIntoViewIfNeeded();
  const box = await cpu.locator('.chart-hit').boundingBox();
  expect(box).not.toBeNull();
  await page.mouse.move(box!.x + box!.width - 2, box!.y + box!.height / 2);
  const tip = page.getByTestId('chart-cpu-tip');
  await expect(tip).toBeVisible();
  await expect(tip).toContainText(/CPU: [\d.]+ (millicores|cores?)/);
  await expect(tip).toContainText(/\d\d:\d\d:\d\d/);
  await page.mouse.move(0, 0);
  await expect(tip).toBeHidden();

  await cpu.focus();
  await page.keyboard.press('ArrowLeft');
  await expect(tip).toBeVisible();
  await expect(cpu).toHaveAttribute('aria-label', /CPU usage, last hour: CPU [\d.]+ (m|cores?) at /);
  await page.keyboard.press('Escape');
  await expect(tip).toBeHidden();
});

test('the Datacenter lists the busiest VMs first, as GET /api/metrics/top does, and charts the fleet', async ({
  page,
  request,
}) => {
  const vmHistory = countRequests(page, 'metrics.vmHistory');
  await page.goto('/');
  await waitLive(page);
  const top = page.getByTestId('top-cpu');
  await expect(top.locator('[data-top]').first()).toBeVisible();
  // The widget and the API agree on the order (compared at the same round: both follow the sampling).
  await expect
    .poll(
      async () => {
        const api = (await (await request.get('/api/metrics/top?by=cpu&limit=5')).json()) as TopRow[];
        const shown = await top.locator('[data-top]').evaluateAll((els) => els.map((e) => e.getAttribute('data-top')));
        return JSON.stringify(shown) === JSON.stringify(api.map((r) => `${r.namespace}/${r.name}`));
      },
      { timeout: 30_000 },
    )
    .toBe(true);
  const values = await top
    .locator('[data-top]')
    .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-value'))));
  expect(values).toEqual([...values].sort((a, b) => b - a));
  // Each row links to its VM.
  const first = (await top.locator('[data-top]').first().getAttribute('data-top'))!;
  const [ns, name] = first.split('/');
  await expect(top.locator('[data-top]').first().getByRole('link')).toHaveAttribute('href', `/vms/${ns}/${name}`);
  await expect(page.getByTestId('top-mem').locator('[data-top]').first()).toBeVisible();

  // Fleet charts: drawn from the fleet sums, never from per-VM histories.
  const fleetCpu = page.getByTestId('fleet-chart-cpu');
  await expect.poll(async () => Number(await fleetCpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  const last = Number(await fleetCpu.getAttribute('data-last-t'));
  await expect
    .poll(async () => Number(await fleetCpu.getAttribute('data-last-t')), { timeout: 30_000 })
    .toBeGreaterThan(last);
  expect(vmHistory.count, 'the datacenter page fetches no per-VM history').toBe(0);
});

test('the Node page charts its VMs and lists its busiest ones', async ({ page, request }) => {
  await page.goto(`/nodes/${node}`);
  await waitLive(page);
  const cpu = page.getByTestId('node-chart-cpu');
  await expect.poll(async () => Number(await cpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  const held = (await (await request.get(`/api/nodes/${node}/metrics/history`)).json()) as Record<string, number>[];
  if (held.some((p) => p.diskread !== undefined)) {
    await expect(page.getByTestId('node-chart-disk').locator('[data-series]')).toHaveCount(2);
  } else {
    await expect(page.getByTestId('node-chart-disk-empty')).toContainText('Not measured on this cluster');
  }
  const api = (await (await request.get(`/api/metrics/top?by=mem&node=${node}&limit=5`)).json()) as TopRow[];
  expect(api.length).toBeGreaterThan(0);
  expect(api.every((r) => r.node === node)).toBe(true);
  const shown = page.getByTestId('top-mem').locator('[data-top]');
  await expect(shown.first()).toBeVisible();
  // Only VMs placed on this node.
  const here = new Set(
    ((await (await request.get('/api/vms')).json()) as { namespace: string; name: string; node?: string }[])
      .filter((r) => r.node === node)
      .map((r) => `${r.namespace}/${r.name}`),
  );
  for (const key of await shown.evaluateAll((els) => els.map((e) => e.getAttribute('data-top') ?? ''))) {
    expect(here.has(key), `${key} runs on ${node}`).toBe(true);
  }
});

test('a metrics-server outage keeps the history drawn under a "stale" caption until it answers again', async ({
  page,
  request,
}) => {
  test.skip(!SIM_URL, 'no E2E_SIM_URL for an external Corral: cannot switch metrics-server off');
  await page.goto(`/vms/${NS}/${vm}?tab=summary`);
  const cpu = page.getByTestId('chart-cpu');
  await expect.poll(async () => Number(await cpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(2);
  const held = Number(await cpu.getAttribute('data-points'));
  const caption = page.getByTestId('vm-charts').locator('.chart-caption').first();
  try {
    const off = await request.patch(`${SIM_URL}/_sim/settings`, { data: { metricsServer: false } });
    expect(off.ok(), await off.text()).toBe(true);
    await expect(caption).toContainText(/metrics-server is not answering: stale since \d+ (s|min) ago/);
    // The history is still drawn; nothing new arrives.
    expect(Number(await cpu.getAttribute('data-points'))).toBeGreaterThanOrEqual(held);
    await expect(cpu.locator('.chart-line')).toHaveAttribute('d', /^M[\d.]+ [\d.]+L/);
    const metrics = (await (await request.get(`/api/vms/${NS}/${vm}/metrics`)).json()) as { stale: boolean };
    expect(metrics.stale).toBe(true);
  } finally {
    await request.patch(`${SIM_URL}/_sim/settings`, { data: { metricsServer: true } });
  }
  await expect(caption).toBeHidden({ timeout: 30_000 });
});

test.describe('chart screenshots', { tag: '@screenshots' }, () => {
  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    for (const size of ['desktop', 'phone'] as const) {
      test(`${size}, ${theme}`, async ({ browser, baseURL }) => {
        const context = await browser.newContext(
          size === 'phone'
            ? { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, baseURL }
            : { viewport: { width: 1440, height: 900 }, baseURL },
        );
        const page = await context.newPage();
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        const prefix = size === 'phone' ? 'phone-charts' : 'charts';
        const shoot = async (testId: string, name: string) => {
          const charts = page.getByTestId(testId);
          await expect
            .poll(async () => Number(await charts.locator('[data-points]').first().getAttribute('data-points')))
            .toBeGreaterThanOrEqual(2);
          await charts.evaluate((el) => el.scrollIntoView({ block: 'start' }));
          await page.waitForTimeout(200);
          await page.screenshot({ path: `${DIR}/${prefix}-${name}${suffix}.png` });
        };
        await page.goto(`/vms/${NS}/${vm}?tab=summary`);
        await shoot('vm-charts', 'summary');
        if (size === 'desktop' && theme === 'dark') {
          await page.getByTestId('chart-cpu').scrollIntoViewIfNeeded();
          const box = await page.getByTestId('chart-cpu').locator('.chart-hit').boundingBox();
          await page.mouse.move(box!.x + box!.width * 0.7, box!.y + box!.height / 2);
          await expect(page.getByTestId('chart-cpu-tip')).toBeVisible();
          await page.screenshot({ path: `${DIR}/charts-hover.png` });
          await page.mouse.move(0, 0);
        }
        await page.goto(`/nodes/${node}`);
        await shoot('node-charts', 'node');
        await page.goto('/');
        await shoot('fleet-charts', 'datacenter');
        await context.close();
      });
    }
  }
});
