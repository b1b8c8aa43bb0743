// Datacenter → Health (issue 12): with KubeVirt's Snapshot feature gate switched off behind Corral's back, the
// Health page shows the failing gate and the header its badge; a VM's disabled Take snapshot links to that row; the
// row's Fix (after its preview) enables the gate, and the VM's Take snapshot is enabled again. Screenshots of the
// page at desktop and phone width in both themes. Further tests follow other disabled controls to their rows: Add
// disk (HotplugVolumes off), Clone and the Clone dialog (Snapshot off), Add NIC (no NetworkAttachmentDefinition).
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { SCREENSHOT_DIR, SIM_URL } from './env';
import { apiCreate, apiDelete, NS, uniqueName } from './helpers';
import { ALL_LOOKS, DESKTOP_LIGHT, PHONE_DARK, PHONE_LIGHT, PHONE_LOOKS, pictureLooks, watchErrors } from './pictures';

const DIR = SCREENSHOT_DIR;
const KUBEVIRT = '/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt';
const SIM_HEADERS = { Authorization: 'Bearer sim-admin-token', 'Content-Type': 'application/merge-patch+json' };

async function featureGates(request: APIRequestContext): Promise<{ gates: string[]; rv: string }> {
  const kv = (await (await request.get(`${SIM_URL}${KUBEVIRT}`, { headers: SIM_HEADERS })).json()) as {
    metadata: { resourceVersion: string };
    spec: { configuration: { developerConfiguration: { featureGates: string[] } } };
  };
  return { gates: kv.spec.configuration.developerConfiguration.featureGates, rv: kv.metadata.resourceVersion };
}

async function setFeatureGates(request: APIRequestContext, gates: string[]) {
  const res = await request.patch(`${SIM_URL}${KUBEVIRT}`, {
    headers: SIM_HEADERS,
    data: JSON.stringify({ spec: { configuration: { developerConfiguration: { featureGates: gates } } } }),
  });
  expect(res.ok(), await res.text()).toBe(true);
}

function row(page: Page, name: string) {
  return page.locator(`[data-check="${name}"]`);
}

/** The failing row in the middle of the view. */
async function centreFailingGate(page: Page) {
  const gate = row(page, 'gate-snapshot');
  await expect(gate).toHaveAttribute('data-status', 'fail');
  await gate.evaluate((el) => el.scrollIntoView({ block: 'center' }));
}

/** The failing row in the middle of the view, then the picture. */
async function shoot(page: Page, file: string) {
  await centreFailingGate(page);
  await page.screenshot({ path: `${DIR}/${file}` });
}

test('a failing feature gate: Health shows it, the VM links to it, Fix enables snapshots', async ({
  page,
  browser,
  request,
  baseURL,
}) => {
  test.skip(!SIM_URL, 'needs the embedded cluster (E2E_SIM_URL) to switch a gate off behind Corral');
  const name = uniqueName('health');
  const before = await featureGates(request);
  const errors = watchErrors(page);
  try {
    await apiCreate(request, baseURL, name, false);
    await setFeatureGates(
      request,
      before.gates.filter((g) => g !== 'Snapshot' && g !== 'VMExport'),
    );

    await page.goto('/health');
    const gate = row(page, 'gate-snapshot');
    await expect(gate).toHaveAttribute('data-status', 'fail');
    await expect(gate).toContainText('the KubeVirt Snapshot feature gate is off');
    await expect(gate).toContainText('Fix: add Snapshot to spec.configuration.developerConfiguration.featureGates');
    await expect(row(page, 'api')).toHaveAttribute('data-status', 'ok');
    await expect(page.getByTestId('health-badge')).toBeVisible();
    await page.setViewportSize({ width: 1440, height: 900 });
    await shoot(page, 'health.png');
    await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await shoot(page, 'health-light.png');
    await page.getByTestId('theme-toggle').click();
    await pictureLooks(browser, baseURL, 'health', PHONE_LOOKS, async (p) => {
      await p.goto('/health');
      await centreFailingGate(p);
    });

    // The VM's Export disk is disabled too, with a link to its check in the More menu.
    await page.goto(`/vms/${NS}/${name}?tab=snapshots`);
    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
    await expect(page.getByRole('menuitem', { name: /Export disk/ })).toBeDisabled();
    await expect(page.getByRole('menuitem', { name: /Export disk/ })).toContainText(
      'the KubeVirt VMExport feature gate is off',
    );
    await expect(page.getByTestId('blocked-export')).toHaveAttribute('href', '/health#check-gate-vmexport');
    await page.keyboard.press('Escape');

    // The VM's Take snapshot is disabled, says why, and links to the row that explains it.
    await expect(page.getByRole('button', { name: 'Take snapshot' })).toBeDisabled();
    const blocked = page.getByTestId('blocked-snapshots');
    await expect(blocked).toContainText('Snapshots are off: the KubeVirt Snapshot feature gate is off');
    await blocked.getByRole('link', { name: 'fix' }).click();
    await expect(page).toHaveURL(/\/health#check-gate-snapshot$/);
    await expect(gate).toHaveClass(/health-linked/);

    await gate.getByRole('button', { name: 'Fix Snapshot feature gate' }).click();
    const dialog = page.getByRole('dialog');
    await expect(dialog).toContainText('add Snapshot to spec.configuration.developerConfiguration.featureGates');
    await dialog.getByRole('button', { name: 'Fix', exact: true }).click();
    await expect(page.getByTestId('health-fixed')).toContainText(
      'enabled feature gate Snapshot on KubeVirt kubevirt/kubevirt',
    );
    await expect(gate).toHaveAttribute('data-status', 'ok');
    // The user's other gates stayed (VMExport is still off until Fix all below).
    expect((await featureGates(request)).gates).toEqual(
      expect.arrayContaining(before.gates.filter((g) => g !== 'VMExport')),
    );

    await page.goto(`/vms/${NS}/${name}?tab=snapshots`);
    await expect(page.getByRole('button', { name: 'Take snapshot' })).toBeEnabled();
    await expect(page.getByTestId('blocked-snapshots')).toHaveCount(0);

    // Fix all takes care of the export gate; the More menu's Export disk no longer blames it
    await page.goto('/health');
    await page.getByRole('button', { name: /^Fix all/ }).click();
    await expect(page.getByRole('dialog')).toContainText('add VMExport to');
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /^Fix \d/ })
      .click();
    await expect(page.getByTestId('health-fixed')).toContainText('enabled feature gate VMExport');
    await expect(page.getByTestId('health-badge')).toHaveCount(0);
    expect((await featureGates(request)).gates).toEqual(expect.arrayContaining(before.gates));
    await page.goto(`/vms/${NS}/${name}?tab=snapshots`);
    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
    // (this VM boots a container disk, so Export stays off — now for that reason alone).
    await expect(page.getByRole('menuitem', { name: /Export disk/ })).not.toContainText('feature gate');
    await expect(page.getByTestId('blocked-export')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    const now = await featureGates(request);
    const missing = ['Snapshot', 'VMExport'].filter((g) => !now.gates.includes(g));
    if (missing.length) await setFeatureGates(request, [...now.gates, ...missing]);
    await apiDelete(request, baseURL, name);
  }
});

test("the HotplugVolumes gate off: a running VM's Add disk links to the gate's row", async ({ page, request }) => {
  test.skip(!SIM_URL, 'needs the embedded cluster (E2E_SIM_URL) to switch a gate off behind Corral');
  const vms = (await (await request.get('/api/vms')).json()) as { namespace: string; name: string; status: string }[];
  const vm = vms.find((v) => v.status === 'Running');
  expect(vm, 'a running demo VM').toBeDefined();
  const before = await featureGates(request);
  const errors = watchErrors(page);
  try {
    await setFeatureGates(
      request,
      before.gates.filter((g) => g !== 'HotplugVolumes'),
    );
    await page.goto('/health');
    await expect(row(page, 'gate-hotplugvolumes')).toHaveAttribute('data-status', 'fail');
    await page.goto(`/vms/${vm!.namespace}/${vm!.name}?tab=hardware`);
    await expect(page.getByRole('button', { name: 'Add disk' })).toBeDisabled();
    const blocked = page.getByTestId('blocked-hotplug');
    await expect(blocked).toContainText('Disk hot-plugs are off: the KubeVirt HotplugVolumes feature gate is off');
    await blocked.getByRole('link', { name: 'fix' }).click();
    await expect(page).toHaveURL(/\/health#check-gate-hotplugvolumes$/);
    await setFeatureGates(request, before.gates);
    await page.goto('/health');
    await expect(row(page, 'gate-hotplugvolumes')).toHaveAttribute('data-status', 'ok');
    await page.goto(`/vms/${vm!.namespace}/${vm!.name}?tab=hardware`);
    await expect(page.getByRole('button', { name: 'Add disk' })).toBeEnabled();
    await expect(page.getByTestId('blocked-hotplug')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    const now = await featureGates(request);
    if (!now.gates.includes('HotplugVolumes')) await setFeatureGates(request, [...now.gates, 'HotplugVolumes']);
  }
});

test("the Snapshot gate off: a running VM's Clone names it and links to the gate's row", async ({
  page,
  browser,
  request,
  baseURL,
}) => {
  test.skip(!SIM_URL, 'needs the embedded cluster (E2E_SIM_URL) to switch a gate off behind Corral');
  // A running VM with a guest agent (it reports its OS) clones through a snapshot; without one it must stop first.
  const vms = (await (await request.get('/api/vms')).json()) as {
    namespace: string;
    name: string;
    status: string;
    os: string;
  }[];
  const vm = vms.find((v) => v.status === 'Running' && v.os !== '');
  expect(vm, 'a running demo VM with a guest agent').toBeDefined();
  const url = `/vms/${vm!.namespace}/${vm!.name}`;
  const before = await featureGates(request);
  const errors = watchErrors(page);
  const openMenu = async (p: Page) => {
    await p.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
    await expect(p.getByRole('menuitem', { name: /^Clone…/ })).toBeDisabled();
  };
  try {
    await setFeatureGates(
      request,
      before.gates.filter((g) => g !== 'Snapshot'),
    );
    await page.goto('/health');
    await expect(row(page, 'gate-snapshot')).toHaveAttribute('data-status', 'fail');

    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(url);
    await openMenu(page);
    await expect(page.getByRole('menuitem', { name: /^Clone…/ })).toContainText(
      'the KubeVirt Snapshot feature gate is off (stop the VM to clone it into another namespace)',
    );
    const link = page.getByTestId('blocked-clone');
    await expect(link).toHaveAttribute('href', '/health#check-gate-snapshot');
    await page.screenshot({ path: `${DIR}/vm-clone-blocked.png` });
    await page.getByTestId('theme-toggle').click();
    await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
    await openMenu(page);
    await page.screenshot({ path: `${DIR}/vm-clone-blocked-light.png` });
    await page.getByTestId('theme-toggle').click();
    await pictureLooks(browser, baseURL, 'vm-clone-blocked', PHONE_LOOKS, async (p) => {
      await p.goto(url);
      await openMenu(p);
      await p.getByTestId('blocked-clone').scrollIntoViewIfNeeded();
    });

    // The theme toggle closed the desktop menu: open it again and follow the link.
    await openMenu(page);
    await link.click();
    await expect(page).toHaveURL(/\/health#check-gate-snapshot$/);
    await expect(row(page, 'gate-snapshot')).toHaveClass(/health-linked/);

    // A stopped VM still clones (into another namespace); the dialog's namespace field links to the same row.
    const stopped = vms.find((v) => v.status === 'Stopped');
    expect(stopped, 'a stopped demo VM').toBeDefined();
    await page.goto(`/vms/${stopped!.namespace}/${stopped!.name}`);
    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
    await page.getByRole('menuitem', { name: /^(Clone|New VM from template)…/ }).click();
    const dialog = page.getByRole('dialog');
    const within = dialog.getByTestId('blocked-snapshots');
    await expect(within).toContainText('Clones within a namespace are off: the KubeVirt Snapshot feature gate is off');
    await page.screenshot({ path: `${DIR}/vm-clone-dialog-blocked.png` });
    await pictureLooks(
      browser,
      baseURL,
      'vm-clone-dialog-blocked',
      [DESKTOP_LIGHT, PHONE_DARK, PHONE_LIGHT],
      async (p) => {
        await p.goto(`/vms/${stopped!.namespace}/${stopped!.name}`);
        await p.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
        await p.getByRole('menuitem', { name: /^(Clone|New VM from template)…/ }).click();
        await expect(p.getByRole('dialog').getByTestId('blocked-snapshots')).toBeVisible();
      },
    );
    await within.getByRole('link', { name: 'fix' }).click();
    await expect(page).toHaveURL(/\/health#check-gate-snapshot$/);

    await setFeatureGates(request, before.gates);
    await expect(async () => {
      await page.goto('/health');
      await expect(row(page, 'gate-snapshot')).toHaveAttribute('data-status', 'ok', { timeout: 1000 });
    }).toPass();
    await page.goto(url);
    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' }).click();
    await expect(page.getByRole('menuitem', { name: /^Clone…/ })).toBeEnabled();
    await expect(page.getByTestId('blocked-clone')).toHaveCount(0);
    expect(errors).toEqual([]);
  } finally {
    const now = await featureGates(request);
    if (!now.gates.includes('Snapshot')) await setFeatureGates(request, [...now.gates, 'Snapshot']);
  }
});

test("no NetworkAttachmentDefinition: a VM's Add NIC links to the multus row", async ({
  page,
  browser,
  request,
  baseURL,
}) => {
  test.skip(!SIM_URL, 'needs the embedded cluster (E2E_SIM_URL) to remove the networks behind Corral');
  const NADS = '/apis/k8s.cni.cncf.io/v1';
  const headers = { Authorization: SIM_HEADERS.Authorization, 'Content-Type': 'application/json' };
  type Nad = { metadata: { name: string; namespace: string; [k: string]: unknown }; [k: string]: unknown };
  const list = async () =>
    (
      (await (await request.get(`${SIM_URL}${NADS}/network-attachment-definitions`, { headers })).json()) as {
        items: Nad[];
      }
    ).items;
  const saved = await list();
  expect(saved.length, 'the demo has networks').toBeGreaterThan(0);
  const vms = (await (await request.get('/api/vms')).json()) as { namespace: string; name: string; status: string }[];
  const vm = vms.find((v) => v.status === 'Running');
  const errors = watchErrors(page);
  try {
    for (const n of saved) {
      const res = await request.delete(
        `${SIM_URL}${NADS}/namespaces/${n.metadata.namespace}/network-attachment-definitions/${n.metadata.name}`,
        { headers },
      );
      expect(res.ok(), await res.text()).toBe(true);
    }
    await page.goto('/health');
    await expect(row(page, 'multus')).toHaveAttribute('data-status', 'warn');
    await page.goto(`/vms/${vm!.namespace}/${vm!.name}?tab=hardware`);
    await expect(page.getByRole('button', { name: 'Add NIC' })).toBeDisabled();
    const blocked = page.getByTestId('blocked-networks');
    await expect(blocked).toContainText(
      'Bridged NICs are off: Multus is installed but there is no NetworkAttachmentDefinition',
    );
    await pictureLooks(browser, baseURL, 'vm-nic-blocked', ALL_LOOKS, async (p) => {
      await p.goto(`/vms/${vm!.namespace}/${vm!.name}?tab=hardware`);
      await expect(p.getByTestId('blocked-networks')).toBeVisible();
    });
    await blocked.getByRole('link', { name: 'fix' }).click();
    await expect(page).toHaveURL(/\/health#check-multus$/);
    await expect(row(page, 'multus')).toHaveClass(/health-linked/);
    expect(errors).toEqual([]);
  } finally {
    const now = new Set((await list()).map((n) => `${n.metadata.namespace}/${n.metadata.name}`));
    for (const n of saved) {
      if (now.has(`${n.metadata.namespace}/${n.metadata.name}`)) continue;
      const { name, namespace, labels, annotations } = n.metadata;
      await request.post(`${SIM_URL}${NADS}/namespaces/${namespace}/network-attachment-definitions`, {
        headers,
        data: JSON.stringify({ ...n, metadata: { name, namespace, labels, annotations } }),
      });
    }
  }
  // With the networks back, Add NIC is enabled again.
  await page.goto('/health');
  await expect(row(page, 'multus')).toHaveAttribute('data-status', 'ok');
  await page.goto(`/vms/${vm!.namespace}/${vm!.name}?tab=hardware`);
  await expect(page.getByRole('button', { name: 'Add NIC' })).toBeEnabled();
  await expect(page.getByTestId('blocked-networks')).toHaveCount(0);
});
