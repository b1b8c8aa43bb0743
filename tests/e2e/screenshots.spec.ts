// Screenshots of the main screens for docs/screenshots (README and docs/ui.md link them). Each shot waits for
// the screen's real content first, so a broken screen fails here instead of producing a blank picture.
import { expect, test, type Page } from '@playwright/test';
import { waitLive } from './helpers';
import { SCREENSHOT_DIR } from './env';

const DIR = SCREENSHOT_DIR;

async function firstVm(page: Page): Promise<{ ns: string; name: string; node: string }> {
  const rows = (await (await page.request.get('/api/vms')).json()) as {
    namespace: string;
    name: string;
    status: string;
    node: string;
  }[];
  const vm = rows.find((r) => r.status === 'Running' && r.node) ?? rows[0];
  if (!vm) throw new Error('the demo fleet has no VM');
  return { ns: vm.namespace, name: vm.name, node: vm.node };
}

test.describe('screenshots', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('datacenter, VM summary, node, create wizard, light theme', async ({ page }) => {
    await page.goto('/');
    await waitLive(page);
    await expect(page.locator('[data-vm]').first()).toBeVisible();
    await page.screenshot({ path: `${DIR}/datacenter.png` });

    const vm = await firstVm(page);
    await page.goto(`/vms/${vm.ns}/${vm.name}?tab=summary`);
    await expect(page.getByTestId('vm-status')).toBeVisible();
    await page.waitForTimeout(500); // the manifest-derived facts (live-migratable, agent) arrive just after
    await page.screenshot({ path: `${DIR}/vm-summary.png` });

    if (vm.node) {
      await page.goto(`/nodes/${vm.node}`);
      await expect(page.getByRole('heading', { level: 2, name: `VMs on ${vm.node}` })).toBeVisible();
      await page.screenshot({ path: `${DIR}/node.png` });
    }

    await page.goto('/create');
    await expect(page.locator('[data-image]').first()).toBeVisible();
    await page.screenshot({ path: `${DIR}/create-source.png` });
    await page.locator('[data-image]').first().click();
    await page.getByTestId('wizard-next').click();
    await page.getByLabel('Name', { exact: true }).fill('Web_1');
    await page.getByLabel('Name', { exact: true }).blur();
    await expect(page.getByTestId('error-name')).toBeVisible();
    await page.screenshot({ path: `${DIR}/create-config.png` });

    await page.goto('/');
    await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await expect(page.locator('[data-vm]').first()).toBeVisible();
    await page.screenshot({ path: `${DIR}/datacenter-light.png` });
    // The choice survives a reload.
    await page.reload();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await page.getByTestId('theme-toggle').click();
  });

  test('phone: the tree is a drawer', async ({ browser, baseURL }) => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      baseURL,
    });
    const page = await context.newPage();
    await page.goto('/');
    await expect(page.locator('[data-vm]').first()).toBeVisible();
    await expect(page.locator('#resource-tree')).not.toBeInViewport();
    await page.screenshot({ path: `${DIR}/phone.png` });
    await page.getByRole('button', { name: 'Resource tree' }).click();
    await expect(page.locator('#resource-tree')).toBeInViewport();
    await page.waitForTimeout(300); // the slide-in transition
    await page.screenshot({ path: `${DIR}/phone-drawer.png` });
    await page.keyboard.press('Escape');
    await expect(page.locator('#resource-tree')).not.toBeInViewport();
    await context.close();
  });
});

/** The Clone dialog of the demo's stopped template, its namespace set to another one. */
async function cloneIntoNamespace(page: Page, ns: string): Promise<void> {
  await page.goto(`/vms/${ns}/fedora-template?tab=summary`);
  await expect(page.locator('.badge-live')).toBeAttached(); // hidden on phones, but rendered
  await expect(page.getByTestId('vm-status')).toHaveText('Stopped');
  await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
  await page.getByRole('menuitem', { name: 'New VM from template…' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Name of the new VM').fill('fedora-lab');
  await dialog.getByLabel('Namespace').fill('lab');
  await expect(dialog.getByTestId('clone-how')).toContainText('CDI clones each disk across namespaces');
  await dialog.getByLabel('Namespace').blur();
}

// The Snapshots tab, the More ▾ menu, the export dialog and the wizard's template source, at desktop and phone
// width in both themes. Run alone with `-g "snapshots and More"`.
test.describe('snapshots and More ▾', { tag: '@screenshots' }, () => {
  const VM = { ns: 'tailvm', name: 'installer' }; // running, with a disk on a snapshot-capable storage class
  const SNAPSHOTS = [
    { name: 'before-upgrade', description: 'PostgreSQL 16 before the upgrade to 17' },
    { name: 'nightly', description: 'nightly, taken online' },
  ];

  test.beforeAll(async ({ request, baseURL }) => {
    const headers = { Origin: new URL(baseURL ?? 'http://localhost').origin, 'Content-Type': 'application/json' };
    for (const s of SNAPSHOTS) {
      const res = await request.post(`/api/vms/${VM.ns}/${VM.name}/snapshots`, { headers, data: s });
      expect([202, 409], await res.text()).toContain(res.status()); // 409: taken by an earlier run
    }
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';

    test(`desktop, ${theme}`, async ({ page }) => {
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await page.goto(`/vms/${VM.ns}/${VM.name}?tab=snapshots`);
      await waitLive(page);
      for (const s of SNAPSHOTS)
        await expect(page.locator(`[data-snapshot="${s.name}"]`)).toContainText('Succeeded', { timeout: 30_000 });
      await page.screenshot({ path: `${DIR}/vm-snapshots${suffix}.png` });

      await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
      await expect(page.getByRole('menu')).toBeVisible();
      await page.screenshot({ path: `${DIR}/vm-more-menu${suffix}.png` });
      await page.keyboard.press('Escape');

      // Clone into another namespace (a stopped VM: the template), with the dialog saying how it is copied.
      await cloneIntoNamespace(page, VM.ns);
      await page.screenshot({ path: `${DIR}/vm-clone-namespace${suffix}.png` });
      await page.goto(`/vms/${VM.ns}/${VM.name}?tab=snapshots`);

      if (theme === 'dark') {
        await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
        await page.getByRole('menuitem', { name: 'Clone…' }).click();
        await expect(page.getByRole('dialog')).toBeVisible();
        await page.screenshot({ path: `${DIR}/vm-clone.png` });
        await page.keyboard.press('Escape');
        await page.getByRole('button', { name: 'Take snapshot' }).click();
        await expect(page.getByRole('dialog').getByLabel('Name')).toBeVisible();
        await page.getByRole('dialog').getByLabel('Description').fill('before changing the schema');
        await page.screenshot({ path: `${DIR}/vm-take-snapshot.png` });
        await page.keyboard.press('Escape');

        const stopped = 'fedora-template';
        await page.goto(`/create?template=${VM.ns}/${stopped}`);
        await expect(page.getByTestId('template-note')).toBeVisible();
        await expect(page.getByText('local user')).toBeVisible(); // whoami and capabilities are in
        await page.screenshot({ path: `${DIR}/create-template.png` });
      }
    });

    test(`phone, ${theme}`, async ({ browser, baseURL }) => {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
        baseURL,
      });
      const page = await context.newPage();
      await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await page.goto(`/vms/${VM.ns}/${VM.name}?tab=snapshots`);
      await expect(page.locator('.badge-live')).toBeAttached(); // hidden on phones, but rendered
      await expect(page.locator(`[data-snapshot="${SNAPSHOTS[0]?.name}"]`)).toContainText('Succeeded');
      await page.screenshot({ path: `${DIR}/phone-snapshots${suffix}.png` });
      await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
      await expect(page.getByRole('menu')).toBeVisible();
      await page.screenshot({ path: `${DIR}/phone-more-menu${suffix}.png` });
      await page.keyboard.press('Escape');
      await cloneIntoNamespace(page, VM.ns);
      await page.screenshot({ path: `${DIR}/phone-clone-namespace${suffix}.png` });
      if (theme === 'dark') {
        // db's disk is on nfs, which has no VolumeSnapshotClass: the 409 disables Take, with the reason visible.
        await page.goto(`/vms/${VM.ns}/db?tab=snapshots`);
        await page.getByRole('button', { name: 'Take snapshot' }).click();
        const dialog = page.getByRole('dialog');
        await dialog.getByRole('button', { name: 'Take snapshot' }).click();
        await expect(dialog.locator('.inline-error')).toBeVisible();
        await dialog.getByRole('button', { name: 'Cancel' }).click();
        await expect(page.locator('#take-why')).toBeVisible();
        await page.screenshot({ path: `${DIR}/phone-snapshot-refused.png` });
      }
      await context.close();
    });
  }
});

// The Hardware and Options tabs of a running VM with a hot-plugged disk, a NIC and a boot order still pending
// (orange) until its next restart, at desktop and phone width in both themes. Run alone with
// `-g "hardware and Options"`.
test.describe('hardware and Options', { tag: '@screenshots' }, () => {
  const VM = { ns: 'tailvm', name: 'app-1' };

  test.beforeAll(async ({ request, baseURL }) => {
    const headers = { Origin: new URL(baseURL ?? 'http://localhost').origin, 'Content-Type': 'application/json' };
    const base = `/api/vms/${VM.ns}/${VM.name}`;
    const created = await request.post('/api/vms', {
      headers,
      data: { name: VM.name, namespace: VM.ns, image: 'cirros', cpu: 2, mem: '2Gi', start: true },
    });
    expect([201, 409], await created.text()).toContain(created.status()); // 409: made by an earlier run
    if (created.status() !== 201) return;
    await expect
      .poll(async () => {
        const rows = (await (await request.get('/api/vms', { params: { namespace: VM.ns } })).json()) as {
          name: string;
          status: string;
        }[];
        return rows.find((r) => r.name === VM.name)?.status;
      })
      .toBe('Running');
    const calls: [string, unknown][] = [
      [`${base}/volumes`, { size: '20Gi' }],
      [`${base}/nics`, { nad: 'lan' }],
      [`${base}/options`, { description: 'Application server\nowner: platform team', firmware: 'uefi' }],
    ];
    for (const [url, data] of calls) {
      const res = await request.post(url, { headers, data });
      expect(res.ok(), await res.text()).toBe(true);
    }
  });

  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';

    test(`desktop, ${theme}`, async ({ page }) => {
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await page.goto(`/vms/${VM.ns}/${VM.name}?tab=hardware`);
      await waitLive(page);
      await expect(page.locator('[data-nic]', { hasText: 'network=lan' })).toBeVisible();
      await expect(page.locator('[data-disk]', { hasText: `${VM.name}-disk-` })).toContainText('20 GiB');
      await page.screenshot({ path: `${DIR}/vm-hardware${suffix}.png` });
      if (theme === 'dark') {
        await page.getByRole('button', { name: 'Add NIC' }).click();
        await expect(page.getByRole('dialog').getByLabel('Network')).toContainText('lan');
        await page.screenshot({ path: `${DIR}/vm-add-nic.png` });
        await page.keyboard.press('Escape');
        await page.getByTestId('hw-mem').getByRole('button', { name: 'Edit' }).click();
        await expect(page.getByRole('dialog').getByTestId('scale-mode')).toBeVisible();
        await page.screenshot({ path: `${DIR}/vm-scale.png` });
        await page.keyboard.press('Escape');
      }
      await page.getByRole('tab', { name: 'Options' }).click();
      await expect(page.getByTestId('opt-description')).toContainText('Application server');
      await page.screenshot({ path: `${DIR}/vm-options${suffix}.png` });
      if (theme === 'dark') {
        await page.getByTestId('opt-boot').getByRole('button', { name: 'Edit' }).click();
        await expect(page.getByRole('dialog').getByTestId('boot-list')).toBeVisible();
        await page.screenshot({ path: `${DIR}/vm-boot-order.png` });
        await page.keyboard.press('Escape');
      }
    });

    test(`phone, ${theme}`, async ({ browser, baseURL }) => {
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
        baseURL,
      });
      const page = await context.newPage();
      await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await page.goto(`/vms/${VM.ns}/${VM.name}?tab=hardware`);
      await expect(page.locator('.badge-live')).toBeAttached(); // hidden on phones, but rendered
      const nic = page.locator('[data-nic]', { hasText: 'network=lan' });
      await expect(nic).toBeVisible();
      await nic.scrollIntoViewIfNeeded(); // the pending (orange) NIC at the end of the table
      await page.screenshot({ path: `${DIR}/phone-hardware${suffix}.png` });
      await page.goto(`/vms/${VM.ns}/${VM.name}?tab=options`);
      await expect(page.getByTestId('opt-description')).toContainText('Application server');
      await page.screenshot({ path: `${DIR}/phone-options${suffix}.png` });
      await context.close();
    });
  }
});
