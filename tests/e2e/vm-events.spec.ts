// The VM page's Events tab and the Summary tab's guest-info block (issue 10): clicking Start makes the VMI's
// Started event appear in the open Events tab without a reload (pushed, not polled), the type filter keeps one
// type, and the guest-info block shows the guest's OS, filesystems and addresses — or says why it cannot.
// Screenshots of both at desktop and phone width, in both themes.
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { apiCreate, apiDelete, NS, origin, uniqueName, waitForStatus, waitLive } from './helpers';
import { SCREENSHOT_DIR } from './env';

const DIR = SCREENSHOT_DIR;

async function createFedora(request: APIRequestContext, baseURL: string | undefined, name: string, start: boolean) {
  const res = await request.post('/api/vms', {
    headers: origin(baseURL),
    data: { name, namespace: NS, containerDisk: 'quay.io/containerdisks/fedora:42', cpu: 1, mem: '1Gi', start },
  });
  expect(res.status(), await res.text()).toBe(201);
}

function startedRow(page: Page) {
  return page
    .getByTestId('event-row')
    .filter({ hasText: 'VirtualMachineInstance' })
    .and(page.locator('[data-reason="Started"]'));
}

test('the Events tab shows the start event after clicking Start, live; the filter keeps one type', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('ev');
  try {
    await createFedora(request, baseURL, name, false);
    await page.goto(`/vms/${NS}/${name}?tab=events`);
    await waitLive(page);
    await expect(page.getByTestId('events-live')).toHaveText('live');
    await expect(startedRow(page)).toHaveCount(0);

    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'Start', exact: true }).click();
    await expect(startedRow(page)).toBeVisible({ timeout: 30_000 });
    const time = startedRow(page).locator('time');
    await expect(time).toHaveText(/just now|s ago/);
    await expect(time).toHaveAttribute('title', /\d/); // the absolute time on hover

    await page.getByRole('group', { name: 'Event type' }).getByRole('button', { name: 'Warning' }).click();
    await expect(startedRow(page)).toHaveCount(0);
    await page.getByRole('group', { name: 'Event type' }).getByRole('button', { name: 'Normal' }).click();
    await expect(startedRow(page)).toBeVisible();
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test('the guest-info block shows the OS of a guest with an agent, and why not for the others', async ({
  page,
  request,
  baseURL,
}) => {
  const agent = uniqueName('ga');
  const plain = uniqueName('gn');
  const off = uniqueName('go');
  try {
    await createFedora(request, baseURL, agent, true);
    await apiCreate(request, baseURL, plain, true);
    await apiCreate(request, baseURL, off, false);
    await waitForStatus(request, agent, 'Running');
    await waitForStatus(request, plain, 'Running');

    await page.goto(`/vms/${NS}/${agent}?tab=summary`);
    await waitLive(page);
    const guest = page.getByTestId('guest-info');
    await expect(guest.getByTestId('guest-os')).toContainText('Fedora Linux 42 (Cloud Edition)', { timeout: 30_000 });
    await expect(guest.getByTestId('guest-os')).toContainText(agent); // the hostname
    await expect(guest.getByTestId('guest-filesystems').getByRole('meter', { name: '/ used' })).toBeVisible();
    await expect(guest.getByTestId('guest-interfaces')).toContainText(/\d+\.\d+\.\d+\.\d+/);

    await page.goto(`/vms/${NS}/${plain}?tab=summary`);
    await expect(page.getByTestId('guest-state')).toContainText('Guest agent not connected');
    await page.goto(`/vms/${NS}/${off}?tab=summary`);
    await expect(page.getByTestId('guest-state')).toContainText('VM not running');
  } finally {
    for (const n of [agent, plain, off]) await apiDelete(request, baseURL, n);
  }
});

// Screenshots: a running Fedora VM's Events tab and its Summary tab's guest block, and the events of a VM whose
// disk import fails (a Warning). Run alone with `-g "events screenshots"`.
test.describe('events screenshots', { tag: '@screenshots' }, () => {
  const VM = 'web-fedora';
  const BROKEN = 'broken-import';

  test.beforeAll(async ({ request, baseURL }) => {
    const create = async (name: string, source: Record<string, unknown>) => {
      const res = await request.post('/api/vms', {
        headers: origin(baseURL),
        data: { name, namespace: NS, cpu: 2, mem: '2Gi', ...source },
      });
      expect([201, 409], await res.text()).toContain(res.status()); // 409: made by an earlier run
    };
    await create(VM, { containerDisk: 'quay.io/containerdisks/fedora:42', start: true });
    await create(BROKEN, { import: 'https://images.corral.invalid/disk.qcow2', disk: '10Gi', start: false });
    await waitForStatus(request, VM, 'Running');
  });

  test('a failing import, desktop dark', async ({ page }) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`/vms/${NS}/${BROKEN}?tab=events`);
    await expect(page.getByTestId('event-row').filter({ hasText: 'Warning' }).first()).toBeVisible({
      timeout: 30_000,
    });
    await page.screenshot({ path: `${DIR}/vm-events-warning.png` });
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    for (const phone of [false, true]) {
      test(`${phone ? 'phone' : 'desktop'}, ${theme}`, async ({ browser, baseURL }) => {
        const context = await browser.newContext({
          viewport: phone ? { width: 390, height: 844 } : { width: 1440, height: 900 },
          ...(phone ? { isMobile: true, hasTouch: true } : {}),
          baseURL,
        });
        const page = await context.newPage();
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        const prefix = phone ? 'phone-' : 'vm-';
        await page.goto(`/vms/${NS}/${VM}?tab=events`);
        await expect(startedRow(page).first()).toBeVisible({ timeout: 30_000 });
        await page.screenshot({ path: `${DIR}/${prefix}events${suffix}.png` });
        await page.goto(`/vms/${NS}/${VM}?tab=summary`);
        const guest = page.getByTestId('guest-info');
        await expect(guest.getByTestId('guest-os')).toContainText('Fedora Linux', { timeout: 30_000 });
        await guest.scrollIntoViewIfNeeded();
        await guest.screenshot({ path: `${DIR}/${prefix}guest-info${suffix}.png` });
        await context.close();
      });
    }
  }
});
