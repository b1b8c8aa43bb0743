// Cross-cluster move (docs/move.md) in the two-cluster Corral the multi-cluster spec uses (two-clusters.ts): a VM
// of `lab` dragged in the tree onto the default cluster opens the move dialog; its live preflight lists a refusal
// (with its remedy) and keeps Move disabled while the namespace does not exist there, and is ready once it does;
// Move shows the task's progress, and the moved VM's page opens from the dialog.
import { expect, type APIRequestContext, type Page } from '@playwright/test';
import { EXTERNAL_URL, REFRESHING_SCREENSHOTS, SCREENSHOT_DIR } from './env';
import { NS, uniqueName, waitLive } from './helpers';
import { LAB_SIM, test, TWO_CLUSTERS_URL as URL } from './two-clusters';

const HOME = 'corral-sim';
const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';
const headers = { Origin: URL, 'Content-Type': 'application/json' };

test.describe('move to another cluster', () => {
  test.skip(!!EXTERNAL_URL, 'uses the two-cluster Corral beside the embedded clusters');
  test.describe.configure({ timeout: 180_000 });
  test.beforeAll(async ({ twoClusters }) => void twoClusters);

  const cluster = (page: Page, context: string) =>
    page.locator(`[data-testid="tree-cluster"][data-context="${context}"]`);

  async function open(page: Page, path = '/', phone = false) {
    const errors: string[] = [];
    page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(URL + path);
    if (!phone) await waitLive(page);
    return errors;
  }

  test('drag a VM onto the other cluster, read the preflight, move it, open it there', async ({ page, request }) => {
    const name = uniqueName('mover');
    const made = await request.post(`${URL}/api/vms`, {
      headers,
      // A disk imported into a DataVolume, so the move exports it from lab and uploads it into the default cluster.
      data: { name, namespace: NS, import: IMAGE_URL, disk: '2G', cpu: 1, mem: '512Mi', start: true, context: 'lab' },
    });
    expect(made.status(), await made.text()).toBe(201);
    try {
      await expect
        .poll(
          async () => {
            const rows = (await (await request.get(`${URL}/api/vms?context=lab`)).json()) as {
              name: string;
              status: string;
            }[];
            return rows.find((r) => r.name === name)?.status;
          },
          { timeout: 60_000 },
        )
        .toBe('Running');
      const errors = await open(page);
      const row = cluster(page, 'lab').locator(`[data-move-vm="${NS}/${name}"]`);
      await expect(row).toBeVisible();
      // The default cluster's rows folded away, so the row and the drop target are both in view without scrolling
      // (a tree pane that scrolls in the middle of a drag loses it).
      await page.getByRole('button', { name: `Collapse cluster ${HOME}` }).click();
      await row.dragTo(cluster(page, HOME).getByTestId('tree-cluster-head'));

      const dialog = page.getByRole('dialog', { name: `Move ${name} to another cluster` });
      await expect(dialog).toBeVisible();
      await expect(dialog.getByLabel('Destination cluster')).toHaveValue(HOME);
      await expect(dialog.getByTestId('move-ok')).toContainText(`Ready to move to ${HOME}: ${NS}/${name}`);
      await expect(dialog.getByTestId('move-warnings')).toContainText('MAC addresses change');
      await expect(dialog.getByTestId('move-warnings')).toContainText('the VM is running: it is stopped for the move');
      const move = dialog.getByRole('button', { name: 'Move', exact: true });
      await expect(move).toBeEnabled();

      // A namespace the destination lacks: refused, with the remedy, and Move is off until it is fixed.
      await dialog.getByLabel('Namespace').fill('nowhere');
      await expect(dialog.getByTestId('move-refusals')).toContainText(
        `namespace nowhere does not exist in context ${HOME}`,
      );
      await expect(dialog.getByTestId('move-refusals')).toContainText('create namespace nowhere');
      await expect(move).toBeDisabled();
      await page.screenshot({ path: `${SCREENSHOT_DIR}/move-refused.png` });
      await dialog.getByLabel('Namespace').fill(NS);
      await expect(dialog.getByTestId('move-ok')).toBeVisible();
      await expect(move).toBeEnabled();

      await move.click();
      const progress = dialog.getByTestId('move-progress');
      await expect(progress).toBeVisible();
      const openMoved = dialog.getByTestId('move-open');
      await expect(openMoved).toBeVisible({ timeout: 90_000 });
      await expect(progress).toContainText(`moved kubevirt/lab/${NS}/${name} to kubevirt/${HOME}/${NS}/${name}`);
      await page.screenshot({ path: `${SCREENSHOT_DIR}/move-done.png` });
      const tasks = (await (await request.get(`${URL}/api/tasks`)).json()) as {
        action: string;
        target: string;
        log: string;
      }[];
      const log = tasks.find((t) => t.action === 'move' && t.target === `${NS}/${name}`)?.log ?? '';
      expect(log).toMatch(new RegExp(`disk \\S+: \\d+ bytes uploaded into ${name}-disk`));
      expect(log).toMatch(/verified: 1 DataVolume Succeeded/);
      await openMoved.click();
      await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${name}\\?tab=summary$`));
      await expect(page.getByRole('heading', { name, exact: false }).first()).toBeVisible();
      // In the tree: now under the default cluster (unfolded again), and still (stopped) in lab.
      await page.getByRole('button', { name: `Expand cluster ${HOME}` }).click();
      await expect(cluster(page, 'lab').locator(`[data-move-vm="${NS}/${name}"]`)).toBeVisible();
      await expect(cluster(page, HOME).locator(`[data-move-vm="${NS}/${name}"]`)).toBeVisible();
      expect(errors).toEqual([]);
    } finally {
      await request.delete(`${URL}/api/vms/${NS}/${name}`, { headers }).catch(() => undefined);
      await request.delete(`${URL}/api/vms/${NS}/${name}?context=lab`, { headers }).catch(() => undefined);
    }
  });

  test('a running move is cancelled from its dialog (and offers Cancel in the task log): nothing moves', async ({
    page,
    browser,
    request,
  }) => {
    const name = uniqueName('cancel');
    const ref = `kubevirt/${HOME}/${NS}/${name}`;
    const made = await request.post(`${URL}/api/vms`, {
      headers,
      data: { name, namespace: NS, import: IMAGE_URL, disk: '2G', cpu: 1, mem: '512Mi' },
    });
    expect(made.status(), await made.text()).toBe(201);
    // lab's upload proxy takes the disk and never answers: the move stays in its copy until cancelled.
    const hang = await request.post(`${LAB_SIM}/_sim/faults`, {
      data: { unresponsive: 'hang', pathPrefix: '/v1beta1/upload' },
    });
    expect(hang.status()).toBe(200);
    try {
      await expect
        .poll(
          async () => {
            const r = await request.post(`${URL}/api/move/preflight`, {
              headers,
              data: { ref, toBackend: 'kubevirt', toContext: 'lab' },
            });
            return ((await r.json()) as { ok?: boolean }).ok;
          },
          { timeout: 60_000 },
        )
        .toBe(true);
      const errors = await open(page, `/vms/${NS}/${name}`);
      await page.getByRole('button', { name: 'More ▾' }).click();
      await page.getByRole('menuitem', { name: /Move to another cluster/ }).click();
      const dialog = page.getByRole('dialog', { name: `Move ${name} to another cluster` });
      await expect(dialog.getByTestId('move-ok')).toContainText(`Ready to move to lab: ${NS}/${name}`);
      await dialog.getByRole('button', { name: 'Move', exact: true }).click();
      const progress = dialog.getByTestId('move-progress');
      const cancel = progress.getByTestId('task-cancel');
      await expect(cancel).toBeEnabled();
      await expect(progress).toContainText(`DataVolume ${NS}/${name}-disk created in lab`, { timeout: 30_000 });
      await page.screenshot({ path: `${SCREENSHOT_DIR}/move-cancel.png` });

      // The same running task from the Tasks panel: its log offers Cancel too (its pictures at both widths and in
      // both themes only when refreshing them: each look is a page of its own).
      for (const theme of REFRESHING_SCREENSHOTS ? (['dark', 'light'] as const) : (['dark'] as const))
        for (const [viewport, prefix] of [
          [{ width: 1440, height: 900 }, ''],
          ...(REFRESHING_SCREENSHOTS ? ([[{ width: 390, height: 844 }, 'phone-']] as const) : []),
        ] as const) {
          const context = await browser.newContext({ viewport });
          const other = await context.newPage();
          await other.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
          const seen = await open(other, '/', prefix !== '');
          await other.getByRole('row', { name: `Task move ${NS}/${name}: running. Open log` }).click();
          const log = other.getByRole('dialog', { name: `Task: move ${NS}/${name}` });
          await expect(log.getByTestId('task-cancel')).toBeEnabled();
          await expect(log.getByTestId('task-log')).toContainText('shows in lab');
          await other.screenshot({
            path: `${SCREENSHOT_DIR}/${prefix}task-cancel${theme === 'light' ? '-light' : ''}.png`,
          });
          expect(seen).toEqual([]);
          await context.close();
        }

      await cancel.click();
      await expect(progress).toContainText('Cancelled by local', { timeout: 30_000 });
      await expect(progress).toContainText('cancelled');
      await page.screenshot({ path: `${SCREENSHOT_DIR}/move-cancelled.png` });
      const tasks = (await (await request.get(`${URL}/api/tasks`)).json()) as {
        action: string;
        target: string;
        error: string;
        log: string;
        cancelledBy?: string;
      }[];
      const task = tasks.find((t) => t.action === 'move' && t.target === `${NS}/${name}`);
      expect(task?.error).toBe('cancelled by local');
      expect(task?.log).toMatch(new RegExp(`deleted DataVolume ${NS}/${name}-disk in lab`));
      expect(tasks.find((t) => t.action === 'move-in' && t.target === `${NS}/${name}`)?.error).toBe(
        'cancelled by local',
      );
      // The export the move read stopped with it: it ends in error saying so, and was not cancelled itself.
      const exported = tasks.find((t) => t.action === 'export' && t.target === `${NS}/${name}`);
      expect([exported?.error, exported?.cancelledBy]).toEqual([
        'stopped: the task using this export was cancelled by local',
        undefined,
      ]);
      const labVms = (await (await request.get(`${URL}/api/vms?context=lab`)).json()) as { name: string }[];
      expect(labVms.map((v) => v.name)).not.toContain(name);
      expect(errors).toEqual([]);
    } finally {
      await request.delete(`${LAB_SIM}/_sim/faults`).catch(() => undefined);
      await request.delete(`${URL}/api/vms/${NS}/${name}`, { headers }).catch(() => undefined);
    }
  });

  // The dialog from a VM's More menu: the default cluster's vm-00001 towards lab, where a VM of that name exists.
  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`screenshots, ${theme}`, { tag: '@screenshots' }, async ({ browser }) => {
      for (const [viewport, prefix] of [
        [{ width: 1440, height: 900 }, ''],
        [{ width: 390, height: 844 }, 'phone-'],
      ] as const) {
        const context = await browser.newContext({ viewport });
        const page = await context.newPage();
        await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
        const errors = await open(page, '/vms/fleet-00/vm-00001', prefix !== '');
        await page.getByRole('button', { name: 'More ▾' }).click();
        await page.getByRole('menuitem', { name: /Move to another cluster/ }).click();
        const dialog = page.getByRole('dialog', { name: 'Move vm-00001 to another cluster' });
        await expect(dialog.getByTestId('move-refusals')).toContainText('a VM fleet-00/vm-00001 already exists');
        await page.screenshot({ path: `${SCREENSHOT_DIR}/${prefix}move-dialog${suffix}.png` });
        expect(errors).toEqual([]);
        await context.close();
      }
    });
  }
});

// A CT moves the same way (docs/move.md "Containers"): its tree row drags onto the other cluster, the dialog names it
// a CT and runs the same live preflight, and the move lands it (running, as it ran) in the default cluster.
test.describe('move a CT to another cluster', () => {
  test.skip(!!EXTERNAL_URL, 'uses the two-cluster Corral beside the embedded clusters');
  test.describe.configure({ timeout: 120_000 });
  test.beforeAll(async ({ twoClusters }) => void twoClusters);
  const cluster = (page: Page, context: string) =>
    page.locator(`[data-testid="tree-cluster"][data-context="${context}"]`);

  async function ctIn(request: APIRequestContext, name: string, context: string): Promise<void> {
    const made = await request.post(`${URL}/api/cts`, {
      headers,
      data: { name, namespace: NS, image: 'docker.io/library/debian:bookworm', disk: '1Gi', context },
    });
    expect(made.status(), await made.text()).toBe(201);
    await expect
      .poll(async () => {
        const rows = (await (await request.get(`${URL}/api/cts?context=${context}`)).json()) as CtPhase[];
        return rows.find((r) => r.name === name)?.phase;
      })
      .toBe('Running');
  }
  interface CtPhase {
    name: string;
    phase: string;
  }

  test('drag a CT onto the other cluster, read the preflight, move it, open it there', async ({ page, request }) => {
    const name = uniqueName('ctmover');
    await ctIn(request, name, 'lab');
    try {
      const errors: string[] = [];
      page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(URL + '/');
      await waitLive(page);
      const row = cluster(page, 'lab').locator(`[data-move-ct="${NS}/${name}"]`);
      await expect(row).toBeVisible();
      await page.getByRole('button', { name: `Collapse cluster ${HOME}` }).click();
      await row.dragTo(cluster(page, HOME).getByTestId('tree-cluster-head'));
      const dialog = page.getByRole('dialog', { name: `Move CT ${name} to another cluster` });
      await expect(dialog.getByLabel('Destination cluster')).toHaveValue(HOME);
      await expect(dialog.getByTestId('move-ok')).toContainText(`Ready to move to ${HOME}: ${NS}/${name}`);
      await expect(dialog.getByTestId('move-warnings')).toContainText('the CT is running: it is stopped for the move');
      await dialog.getByRole('button', { name: 'Move', exact: true }).click();
      const openMoved = dialog.getByTestId('move-open');
      await expect(openMoved).toBeVisible({ timeout: 60_000 });
      await expect(dialog.getByTestId('move-progress')).toContainText(
        `moved CT kubevirt/lab/${NS}/${name} to kubevirt/${HOME}/${NS}/${name}`,
      );
      await openMoved.click();
      await expect(page).toHaveURL(new RegExp(`/cts/${NS}/${name}\\?tab=summary$`));
      await expect
        .poll(async () => {
          const rows = (await (await request.get(`${URL}/api/cts`)).json()) as CtPhase[];
          return rows.find((r) => r.name === name)?.phase;
        })
        .toBe('Running');
      expect(errors).toEqual([]);
    } finally {
      await request.delete(`${URL}/api/cts/${NS}/${name}`, { headers }).catch(() => undefined);
      await request.delete(`${URL}/api/cts/${NS}/${name}?context=lab`, { headers }).catch(() => undefined);
    }
  });

  // The dialog from a CT's page: lab's CT towards the default cluster, where a CT of that name exists.
  test('screenshots of the CT move dialog, both themes', { tag: '@screenshots' }, async ({ browser, request }) => {
    const name = uniqueName('ctshot');
    await Promise.all([ctIn(request, name, 'lab'), ctIn(request, name, HOME)]);
    try {
      for (const theme of ['dark', 'light'] as const)
        for (const [viewport, prefix] of [
          [{ width: 1440, height: 900 }, ''],
          [{ width: 390, height: 844 }, 'phone-'],
        ] as const) {
          const context = await browser.newContext({ viewport });
          const page = await context.newPage();
          const errors: string[] = [];
          page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
          page.on('pageerror', (e) => errors.push(e.message));
          await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
          await page.goto(`${URL}/cts/${NS}/${name}?context=lab`);
          await page.getByRole('button', { name: 'Move to another cluster…' }).click();
          const dialog = page.getByRole('dialog', { name: `Move CT ${name} to another cluster` });
          await expect(dialog.getByTestId('move-refusals')).toContainText(`a CT ${NS}/${name} already exists`);
          await page.screenshot({
            path: `${SCREENSHOT_DIR}/${prefix}move-ct-dialog${theme === 'light' ? '-light' : ''}.png`,
          });
          expect(errors).toEqual([]);
          await context.close();
        }
    } finally {
      for (const q of ['', '?context=lab'])
        await request.delete(`${URL}/api/cts/${NS}/${name}${q}`, { headers }).catch(() => undefined);
    }
  });
});
