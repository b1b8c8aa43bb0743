// Cloud-Init tab (issue 16): add a drive to a stopped VM, set user, password, DNS, a key and a static address
// through the Edit dialogs (the password never comes back), then on the running VM a change is pending until
// "Regenerate image". A VM created in the wizard with an SSH key gets editable settings (not hand-written user data).
// Screenshots of the tab at desktop and phone width in both themes.
import { expect, test, type Page } from '@playwright/test';
import { SCREENSHOT_DIR } from './env';
import { apiAction, apiCreate, apiDelete, NS, origin, uniqueName, waitForStatus, waitLive } from './helpers';

const KEY = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBd7m1s0yq3Qw0cXkqf5JtY0m2QmYq1m0Xz8Y2y3fW4u ops@laptop';

async function edit(page: Page, row: string, fill: (dialog: ReturnType<Page['getByRole']>) => Promise<void>) {
  await page.getByTestId(row).getByRole('button', { name: 'Edit' }).click();
  const dialog = page.getByRole('dialog');
  await fill(dialog);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
}

test('set cloud-init from the tab; a running VM’s change is pending until Regenerate image', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('ci');
  const errors: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await apiCreate(request, baseURL, name, false);
    await page.goto(`/vms/${NS}/${name}?tab=cloudinit`);
    await waitLive(page);
    await expect(page.getByTestId('ci-drive')).toContainText('none');
    await expect(page.getByTestId('ci-regenerate')).toBeDisabled();
    await expect(page.getByTestId('ci-regenerate')).toHaveAttribute('title', /no cloud-init drive/);
    await page.getByRole('button', { name: 'Add drive' }).click();
    await expect(page.getByTestId('ci-drive')).toContainText('cloudinitdisk');

    await edit(page, 'ci-ciuser', (d) => d.getByTestId('ci-user-input').fill('ops'));
    await expect(page.getByTestId('ci-ciuser')).toContainText('ops');
    await edit(page, 'ci-cipassword', (d) => d.getByTestId('ci-password-input').fill('Correct-Horse-42'));
    await expect(page.getByTestId('ci-cipassword')).toContainText('**********');
    await edit(page, 'ci-sshkeys', (d) => d.getByTestId('ci-keys-input').fill(KEY));
    await expect(page.getByTestId('ci-sshkeys')).toContainText('ops@laptop');
    await edit(page, 'ci-nameserver', async (d) => {
      await d.getByLabel(/DNS domain/).fill('example.internal');
      await d.getByLabel(/DNS servers/).fill('1.1.1.1 9.9.9.9');
    });
    await expect(page.getByTestId('ci-nameserver')).toContainText('1.1.1.1 9.9.9.9');
    // A bad address is refused by the server, naming the field, and the dialog stays open.
    await page.getByTestId('ci-ipconfig0').getByRole('button', { name: 'Edit' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Static').first().check();
    await dialog.getByTestId('ci-ip-input').fill('10.0.0.300/24');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toContainText('ipConfigs (nic 0)');
    await dialog.getByTestId('ci-ip-input').fill('10.0.0.5/24');
    await dialog.getByLabel('Gateway').first().fill('10.0.0.1');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await expect(dialog).toBeHidden();
    await expect(page.getByTestId('ci-ipconfig0')).toContainText('ip=10.0.0.5/24,gw=10.0.0.1');
    // Stopped: the image was remade with each change, nothing is pending.
    await expect(page.getByTestId('ci-summary')).toContainText('up to date');
    const got = await (await request.get(`/api/vms/${NS}/${name}/cloudinit`)).text();
    expect(got).not.toContain('Correct-Horse-42');

    await apiAction(request, baseURL, name, 'start');
    await waitForStatus(request, name, 'Running');
    await page.reload();
    await edit(page, 'ci-ciuser', (d) => d.getByTestId('ci-user-input').fill('admin'));
    await expect(page.getByTestId('ci-ciuser')).toContainText('pending: admin');
    await expect(page.getByTestId('ci-summary')).toContainText('Regenerate image');
    await page.getByTestId('ci-regenerate').click();
    await expect(page.getByTestId('ci-ciuser')).not.toContainText('pending');
    await expect(page.getByTestId('ci-summary')).toContainText('up to date');
    // The one deliberate refusal (the bad address) is the only thing the browser logged.
    expect(errors).toEqual(['Failed to load resource: the server responded with a status of 400 (Bad Request)']);
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test('a VM created in the wizard with an SSH key has editable cloud-init settings', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('ciwiz');
  const errors: string[] = [];
  page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
  page.on('pageerror', (e) => errors.push(e.message));
  try {
    await page.goto('/create');
    await waitLive(page);
    await page.locator('[data-image="cirros"]').click();
    await page.getByTestId('wizard-next').click();
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Small' }).click();
    await page.locator('#sshKey').fill(KEY);
    await page.getByTestId('create-submit').click();
    await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${name}\\?tab=summary$`));
    await page.goto(`/vms/${NS}/${name}?tab=cloudinit`);
    // Settings from the cloud-init domain (the image's default user and the key), not hand-written user data.
    await expect(page.getByTestId('ci-sshkeys')).toContainText('ops@laptop');
    await expect(page.getByTestId('ci-ciuser')).toContainText('cirros');
    await expect(page.getByTestId('ci-handwritten')).toHaveCount(0);
    await edit(page, 'ci-ciuser', (d) => d.getByTestId('ci-user-input').fill('ops'));
    await expect(page.getByTestId('ci-ciuser')).toContainText('ops');
    expect(errors).toEqual([]);
  } finally {
    await apiDelete(request, baseURL, name);
  }
});

test.describe('Cloud-Init tab screenshots', { tag: '@screenshots' }, () => {
  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`screenshots, ${theme}`, async ({ browser, baseURL, request }) => {
      const name = uniqueName('cishot');
      try {
        await apiCreate(request, baseURL, name, false);
        const set = await request.put(`/api/vms/${NS}/${name}/cloudinit`, {
          headers: origin(baseURL),
          data: {
            drive: 'add',
            user: 'ops',
            password: 'Correct-Horse-42',
            sshKeys: [KEY],
            ipConfigs: [{ nic: 0, ip: '10.0.0.5/24', gw: '10.0.0.1' }],
            nameservers: ['1.1.1.1', '9.9.9.9'],
            searchDomains: ['example.internal'],
          },
        });
        expect(set.ok(), await set.text()).toBe(true);
        await apiAction(request, baseURL, name, 'start');
        await waitForStatus(request, name, 'Running');
        const pending = await request.put(`/api/vms/${NS}/${name}/cloudinit`, {
          headers: origin(baseURL),
          data: { user: 'admin' },
        });
        expect(pending.ok(), await pending.text()).toBe(true);
        for (const [viewport, prefix] of [
          [{ width: 1440, height: 900 }, ''],
          [{ width: 390, height: 844 }, 'phone-'],
        ] as const) {
          const context = await browser.newContext({ viewport, baseURL });
          const page = await context.newPage();
          const errors: string[] = [];
          page.on('console', (m) => void (m.type() === 'error' && errors.push(m.text())));
          page.on('pageerror', (e) => errors.push(e.message));
          await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
          await page.goto(`/vms/${NS}/${name}?tab=cloudinit`);
          await expect(page.getByTestId('ci-ciuser')).toContainText('pending: admin');
          await page.screenshot({ path: `${SCREENSHOT_DIR}/${prefix}vm-cloudinit${suffix}.png`, fullPage: true });
          await page.getByTestId('ci-ipconfig0').getByRole('button', { name: 'Edit' }).click();
          await expect(page.getByRole('dialog')).toBeVisible();
          await page.screenshot({ path: `${SCREENSHOT_DIR}/${prefix}vm-cloudinit-ip${suffix}.png` });
          expect(errors).toEqual([]);
          await context.close();
        }
      } finally {
        await apiDelete(request, baseURL, name);
      }
    });
  }
});
