// Snapshots, clone, templates and disk export from the UI (issue 9): take a snapshot, change the VM, roll back and
// see the change undone; clone a stopped VM and land on the clone; mark a template, create a VM from it, unmark
// it; download the disk export in the browser. Read-only callers see none of the controls.
import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { expect, test, type APIRequestContext, type Page } from '@playwright/test';
import { READONLY_URL, SIM_URL } from './env';
import { apiCreate, apiDelete, NS, origin, uniqueName, vmRow, waitForStatus, waitLive } from './helpers';

/** The embedded cluster's apiserver (same port as its fault interface) and the token its kubeconfig carries. */
const SIM_TOKEN = 'sim-admin-token';

/** A change made behind Corral's back, straight on the cluster: the VM's vCPU count. */
async function setCoresOnCluster(request: APIRequestContext, name: string, cores: number) {
  const res = await request.patch(`${SIM_URL}/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines/${name}`, {
    headers: { Authorization: `Bearer ${SIM_TOKEN}`, 'Content-Type': 'application/merge-patch+json' },
    data: JSON.stringify({ spec: { template: { spec: { domain: { cpu: { cores, sockets: 1, threads: 1 } } } } } }),
  });
  expect(res.ok(), await res.text()).toBe(true);
}

function vcpus(page: Page) {
  return page.locator('dl.kv dt', { hasText: /^vCPUs$/ }).locator('xpath=following-sibling::dd[1]');
}

/** Bytes of a gzip file once inflated, streamed (the image is a whole disk). */
async function gunzippedSize(path: string): Promise<number> {
  let bytes = 0;
  await pipeline(createReadStream(path), createGunzip(), async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) bytes += chunk.length;
    yield* [];
  });
  return bytes;
}

function more(page: Page) {
  return page.getByTestId('vm-toolbar').getByRole('button', { name: 'More ▾' });
}

test('take a snapshot, change the VM, roll back: the change is undone; delete the snapshot', async ({
  page,
  request,
  baseURL,
}) => {
  test.skip(!SIM_URL, 'needs the embedded cluster (E2E_SIM_URL) to change the VM behind Corral');
  const name = uniqueName('snap');
  try {
    await apiCreate(request, baseURL, name, false);
    await page.goto(`/vms/${NS}/${name}?tab=snapshots`);
    await waitLive(page);
    const table = page.getByTestId('snapshot-table');
    await expect(table).toContainText('no snapshots yet');

    await page.getByRole('button', { name: 'Take snapshot' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('1st');
    await expect(dialog.getByText('Must start with a letter')).toBeVisible();
    await expect(dialog.getByRole('button', { name: 'Take snapshot' })).toBeDisabled();
    await dialog.getByLabel('Name').fill('before-change');
    await dialog.getByLabel('Description').fill('one vCPU');
    await dialog.getByRole('button', { name: 'Take snapshot' }).click();
    await expect(dialog).toBeHidden();
    const row = table.locator('[data-snapshot="before-change"]');
    await expect(row).toContainText('Succeeded');
    await expect(row).toContainText('one vCPU');
    await expect(page.getByTestId('snapshot-task')).toContainText('OK');

    await page.getByRole('tab', { name: 'Summary' }).click();
    await expect(vcpus(page)).toHaveText('1');
    await setCoresOnCluster(request, name, 3);
    await expect(vcpus(page)).toHaveText('3');

    await page.getByRole('tab', { name: 'Snapshots' }).click();
    await row.getByRole('button', { name: 'Rollback' }).click();
    await expect(dialog).toContainText('Everything changed since then is lost');
    await dialog.getByRole('button', { name: 'Rollback' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('snapshot-task')).toContainText('rollback');
    await expect(page.getByTestId('snapshot-task')).toContainText('OK', { timeout: 30_000 });
    await page.getByRole('tab', { name: 'Summary' }).click();
    await expect(vcpus(page)).toHaveText('1');

    await page.getByRole('tab', { name: 'Snapshots' }).click();
    await row.getByRole('button', { name: 'Delete' }).click();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await expect(row).toHaveCount(0, { timeout: 30_000 });
    await expect(table).toContainText('no snapshots yet');
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test('a VM whose storage cannot be snapshotted: the 409 is shown and Take then says why it is disabled', async ({
  page,
}) => {
  // The demo fleet's db keeps its disk on the nfs storage class, whose driver has no VolumeSnapshotClass.
  await page.goto(`/vms/${NS}/db?tab=snapshots`);
  await waitLive(page);
  const take = page.getByRole('button', { name: 'Take snapshot' });
  await take.click();
  const dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Take snapshot' }).click();
  await expect(dialog.locator('.inline-error')).toContainText('no VolumeSnapshotClass for storage class nfs');
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(take).toBeDisabled();
  await expect(take).toHaveAttribute('title', /^Take snapshot: no VolumeSnapshotClass for storage class nfs/);
});

test('clone a stopped VM and open the clone; template: mark, create a VM from it, unmark', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('src');
  const clone = `${name}-c`;
  const fromTemplate = `${name}-t`;
  try {
    await apiCreate(request, baseURL, name, false);
    await page.goto(`/vms/${NS}/${name}?tab=summary`);
    await waitLive(page);
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped');

    await more(page).click();
    await page.getByRole('menuitem', { name: 'Clone…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name of the new VM').fill(clone);
    await dialog.getByRole('button', { name: 'Clone' }).click();
    await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${clone}\\?tab=summary$`), { timeout: 30_000 });
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(clone);
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped');

    // Mark the source as a template from its toolbar.
    await page.goto(`/vms/${NS}/${name}?tab=summary`);
    await more(page).click();
    await page.getByRole('menuitem', { name: 'Convert to template' }).click();
    await dialog.getByRole('button', { name: 'Convert to template' }).click();
    await expect(dialog).toBeHidden();
    await more(page).click();
    await expect(page.getByRole('menuitem', { name: 'Unmark template' })).toBeVisible();
    await page.keyboard.press('Escape');

    // The Datacenter lists it under Templates, not among the VMs; a VM is created from it in the wizard.
    await page.goto('/');
    const tpl = page.locator(`[data-template="${NS}/${name}"]`);
    await expect(tpl).toBeVisible();
    await expect(vmRow(page, name)).toHaveCount(0);
    await tpl.getByRole('link', { name: 'Create VM from template' }).click();
    await expect(page).toHaveURL(/\/create\?template=/);
    await expect(page.getByTestId('template-note')).toBeVisible();
    await page.getByLabel('Name', { exact: true }).fill(fromTemplate);
    await page.getByText('Start after creation').click(); // off: the test needs no running copy
    await page.getByTestId('create-submit').click();
    await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${fromTemplate}\\?tab=summary$`), { timeout: 30_000 });
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped');

    // Unmark from the Datacenter's templates list: it is an ordinary VM again.
    await page.goto('/');
    await tpl.getByRole('button', { name: 'Unmark' }).click();
    await dialog.getByRole('button', { name: 'Unmark template' }).click();
    await expect(tpl).toHaveCount(0);
    await page.getByTestId('vm-filter').fill(name);
    await expect(vmRow(page, name)).toBeVisible();
  } finally {
    await Promise.all([name, clone, fromTemplate].map((n) => apiDelete(request, baseURL, n)));
  }
});

test('clone into another namespace from the Clone dialog and open the clone there', async ({
  page,
  request,
  baseURL,
}) => {
  test.skip(!SIM_URL, 'needs the embedded cluster (E2E_SIM_URL) to create the target namespace');
  const name = uniqueName('xns');
  const clone = `${name}-c`;
  const other = uniqueName('e2e-ns');
  const ns = await request.post(`${SIM_URL}/api/v1/namespaces`, {
    headers: { Authorization: `Bearer ${SIM_TOKEN}`, 'Content-Type': 'application/json' },
    data: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: other } }),
  });
  expect(ns.ok(), await ns.text()).toBe(true);
  try {
    // A VM whose disk is a PVC (an imported image), so there is a disk to copy across namespaces.
    const res = await request.post('/api/vms', {
      headers: origin(baseURL),
      data: { name, namespace: NS, import: 'https://example.org/disk.qcow2', disk: '1Gi', cpu: 1, mem: '512Mi' },
    });
    expect(res.status(), await res.text()).toBe(201);
    await expect
      .poll(
        async () => {
          const dv = await request.get(
            `${SIM_URL}/apis/cdi.kubevirt.io/v1beta1/namespaces/${NS}/datavolumes?labelSelector=corral.dev/vm=${name}`,
            { headers: { Authorization: `Bearer ${SIM_TOKEN}` } },
          );
          const items = ((await dv.json()) as { items: { status?: { phase?: string } }[] }).items;
          return items.length > 0 && items.every((i) => i.status?.phase === 'Succeeded');
        },
        { timeout: 60_000, message: 'the disk imported' },
      )
      .toBe(true);
    await page.goto(`/vms/${NS}/${name}?tab=summary`);
    await waitLive(page);
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped');

    await more(page).click();
    await page.getByRole('menuitem', { name: 'Clone…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name of the new VM').fill(clone);
    // A namespace that does not exist: the server's 400 names it, nothing is created.
    await dialog.getByLabel('Namespace').fill(`${other}-missing`);
    await expect(dialog.getByTestId('clone-how')).toContainText('CDI clones each disk across namespaces');
    await dialog.getByRole('button', { name: 'Clone' }).click();
    await expect(dialog).toContainText(`there is no namespace '${other}-missing'`);
    await dialog.getByLabel('Namespace').fill(other);
    await expect(dialog.getByTestId('clone-namespace-hint')).toContainText('must exist already');
    await dialog.getByRole('button', { name: 'Clone' }).click();
    await expect(page).toHaveURL(new RegExp(`/vms/${other}/${clone}\\?tab=summary$`), { timeout: 60_000 });
    await expect(page.getByRole('heading', { level: 1 })).toHaveText(clone);
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped');
    await page.goto(`/vms/${other}/${clone}?tab=hardware`);
    // Its disk is its own PVC in the other namespace, cloned from the source's.
    await expect(page.getByTestId('hardware-table').locator('[data-disk]', { hasText: `${clone}-` })).toHaveCount(1);
  } finally {
    await request.delete(`/api/vms/${other}/${clone}`, { headers: origin(baseURL) });
    await apiDelete(request, baseURL, name);
  }
});

test('export disk: disabled while running, downloads a gzipped image when stopped', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('exp');
  try {
    const res = await request.post('/api/vms', {
      headers: origin(baseURL),
      data: { name, namespace: NS, import: 'https://example.org/disk.qcow2', disk: '1Gi', cpu: 1, mem: '512Mi' },
    });
    expect(res.status(), await res.text()).toBe(201);
    await page.goto(`/vms/${NS}/${name}?tab=summary`);
    await waitLive(page);

    // Running: the item is disabled and says why, visibly.
    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'Start', exact: true }).click();
    await expect(page.getByTestId('vm-status')).toHaveText('Running', { timeout: 60_000 });
    await more(page).click();
    const item = page.getByRole('menuitem', { name: /Export disk/ });
    await expect(item).toBeDisabled();
    await expect(item).toContainText('stop the VM first');
    await expect(item).toHaveAttribute('title', /^Export disk…: stop the VM first/);
    await page.keyboard.press('Escape');
    await page.getByTestId('vm-toolbar').getByRole('button', { name: 'Stop', exact: true }).click();
    await waitForStatus(request, name, 'Stopped');
    await expect(page.getByTestId('vm-status')).toHaveText('Stopped');

    await more(page).click();
    await expect(item).toBeEnabled();
    await item.click();
    const dialog = page.getByRole('dialog');
    await expect(dialog.getByLabel(/qcow2/)).toBeVisible();
    await dialog.getByLabel(/raw\.gz/).check();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dialog.getByTestId('export-download').click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${name}.img.gz`);
    const path = await download.path();
    // A whole disk image (the embedded cluster's images are a few MiB of sectors).
    const size = await gunzippedSize(path);
    expect(size).toBeGreaterThan(0);
    expect(size % 512).toBe(0);
    await expect(dialog.getByTestId('export-progress')).toContainText('OK');
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test.describe('read-only', () => {
  test.use({ baseURL: READONLY_URL || undefined, extraHTTPHeaders: { 'Tailscale-User-Login': 'bob@example.com' } });

  test('a non-admin sees the snapshots but no Take/Rollback/Delete and no More menu', async ({ page, request }) => {
    test.skip(!READONLY_URL, 'no read-only Corral to test against');
    const rows = (await (await request.get('/api/vms')).json()) as { name: string; namespace: string }[];
    const vm = rows[0];
    if (!vm) throw new Error('the demo fleet has no VM to open');
    await page.goto(`/vms/${vm.namespace}/${vm.name}?tab=snapshots`);
    await expect(page.getByTestId('snapshot-table')).toContainText('NOW');
    await expect(page.getByRole('button', { name: /Take snapshot|Rollback|Delete|More/ })).toHaveCount(0);
    await page.goto('/');
    await expect(page.locator('[data-template]').first()).toBeVisible();
    await expect(page.getByRole('button', { name: 'Unmark' })).toHaveCount(0);
    await expect(page.getByRole('link', { name: 'Create VM from template' })).toHaveCount(0);
  });
});
