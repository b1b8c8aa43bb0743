// The Images page (issue 11): add a custom source (a bad URL is refused next to its field), create a VM from it in
// the wizard; import a disk image and watch the DataVolume's progress bar move to Succeeded, then create a VM that
// clones it from the wizard's Image library; upload a small ISO with the progress bar and create a VM that boots it
// as install media; Cancel an upload in flight (nothing half-imported turns Succeeded) and upload it again under
// the same name. Screenshots of the page and of the wizard's library at desktop and phone width in both themes.
import { expect, test, type Page } from '@playwright/test';
import { READONLY_URL, SCREENSHOT_DIR, SIM_URL } from './env';
import { apiDelete, NS, origin, uniqueName, waitLive } from './helpers';

const DIR = SCREENSHOT_DIR;
const IMAGE_URL = 'https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img';

async function addSource(page: Page, name: string, kind: string, uri: string) {
  await page.getByLabel('Name', { exact: true }).first().fill(name);
  await page.getByLabel('Kind').selectOption(kind);
  await page.locator('#source-uri').fill(uri);
  await page.getByRole('button', { name: 'Add source' }).click();
}

test('add a custom source on the Images page and create a VM from it', async ({ page, request, baseURL }) => {
  const source = uniqueName('src');
  const vm = uniqueName('fromsrc');
  try {
    await page.goto('/images');
    await waitLive(page);
    await addSource(page, source, 'url', 'file:///etc/passwd');
    await expect(page.getByTestId('error-source-uri')).toContainText('http');
    await page.getByLabel('Kind').selectOption('containerDisk');
    await page.locator('#source-uri').fill('quay.io/containerdisks/fedora:42');
    await page.getByRole('button', { name: 'Add source' }).click();
    await expect(page.locator(`[data-source="${source}"]`)).toContainText('quay.io/containerdisks/fedora:42');
    await expect(page.getByTestId('error-source-uri')).toHaveCount(0);

    await page.getByRole('link', { name: 'Create a VM' }).click();
    await expect(page).toHaveURL(/\/create$/);
    await page.locator(`[data-image="${source}"]`).click();
    await page.getByTestId('wizard-next').click();
    await page.getByLabel('Name', { exact: true }).fill(vm);
    await page.getByRole('button', { name: 'Small' }).click();
    await page.getByTestId('create-submit').click();
    await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${vm}\\?tab=summary$`));
    const manifest = await (await request.get(`/api/vms/${NS}/${vm}`)).text();
    expect(manifest).toContain('quay.io/containerdisks/fedora:42');

    await page.goto('/images');
    await page.getByRole('button', { name: `Remove source ${source}` }).click();
    await expect(page.locator(`[data-source="${source}"]`)).toHaveCount(0);
  } finally {
    await apiDelete(request, baseURL, vm);
    await request.delete(`/api/sources/${source}`, { headers: origin(baseURL) });
  }
});

/** Wizard: the Image library tab, pick `image`, next, name the VM, Small, create; lands on the VM's page. */
async function createFromLibrary(page: Page, image: string, vm: string) {
  await page.goto('/create');
  await page.getByRole('radio', { name: 'Image library' }).click();
  await page.locator(`[data-library="${image}"]`).click();
  await page.getByTestId('wizard-next').click();
  await page.getByLabel('Name', { exact: true }).fill(vm);
  await page.getByRole('button', { name: 'Small' }).click();
  await page.getByTestId('create-submit').click();
  await expect(page).toHaveURL(new RegExp(`/vms/${NS}/${vm}\\?tab=summary$`));
}

test('import a disk image: the progress bar moves to Succeeded; a VM created from the library clones it', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('img');
  const vm = uniqueName('fromimg');
  // The embedded cluster imports this 1 GiB image in about a simulated 10 s — one wall second at the tests' speed,
  // as long as the page's 1 s refresh while importing, so the bar could be missed. At 12 MiB/s it takes ~8 s.
  // (A real CDI importer is slower than that on its own.)
  if (SIM_URL) {
    const slow = await request.patch(`${SIM_URL}/_sim/settings`, { data: { importMiBps: 12 } });
    expect(slow.ok(), await slow.text()).toBe(true);
  }
  try {
    await page.goto('/images');
    await waitLive(page);
    await page.locator('#dv-name').fill(name);
    await page.locator('#dv-url').fill(IMAGE_URL);
    await page.locator('#dv-size').fill('2Gi');
    await page.getByRole('button', { name: 'Import' }).click();
    const row = page.locator(`[data-datavolume="${name}"]`);
    await expect(row).toBeVisible();
    const seen = new Set<number>();
    await expect
      .poll(
        async () => {
          // One read of the row: the bar can go between two reads (a locator read of a gone bar waits forever).
          const now = await row.evaluate((el) => ({
            phase: el.getAttribute('data-phase'),
            progress: el.querySelector('[data-testid="dv-progress"]')?.getAttribute('aria-valuenow'),
          }));
          if (now.progress != null) seen.add(Number(now.progress));
          return now.phase;
        },
        { timeout: 60_000, intervals: [200] },
      )
      .toBe('Succeeded');
    expect(
      [...seen].some((p) => p > 0 && p < 100),
      `progress values seen: ${[...seen].join(', ')}`,
    ).toBe(true);
    await expect(row.getByTestId('dv-progress')).toHaveCount(0);

    await createFromLibrary(page, name, vm);
    const manifest = (await (await request.get(`/api/vms/${NS}/${vm}`)).json()) as {
      metadata: { annotations: Record<string, string> };
    };
    expect(manifest.metadata.annotations['corral.dev/source']).toBe(JSON.stringify({ dataVolume: name }));
    const clone = await request.get(`/api/vms/${NS}/${vm}`);
    expect(JSON.stringify(await clone.json())).toContain(`"dataVolume":{"name":"${vm}-disk"}`);
  } finally {
    if (SIM_URL) await request.patch(`${SIM_URL}/_sim/settings`, { data: { importMiBps: null } });
    await apiDelete(request, baseURL, vm);
    await request.delete(`/api/datavolumes/${NS}/${name}`, { headers: origin(baseURL) });
  }
});

test('upload a small ISO: the progress bar shows, then the row is Succeeded; a VM boots it as install media', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('iso');
  const vm = uniqueName('fromiso');
  try {
    await page.goto('/images');
    await waitLive(page);
    // 24 MiB: Corral reads the body only once CDI's upload server is ready, so the bar shows part sent meanwhile.
    const iso = Buffer.alloc(24 * 1024 * 1024, 0x41);
    await page
      .locator('#up-file')
      .setInputFiles({ name: 'tiny-installer.iso', mimeType: 'application/x-iso9660-image', buffer: iso });
    await expect(page.locator('#up-size')).toHaveValue('1Gi');
    await expect(page.locator('#up-type')).toHaveValue('iso');
    await page.locator('#up-name').fill(name);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect(page.getByTestId('upload-progress')).toBeVisible();
    await page.screenshot({ path: `${DIR}/images-upload.png`, fullPage: true });
    await expect(page.getByTestId('upload-done')).toContainText(name, { timeout: 60_000 });
    const row = page.locator(`[data-datavolume="${name}"]`);
    await expect(row).toHaveAttribute('data-phase', 'Succeeded', { timeout: 30_000 });
    await expect(row).toContainText('ISO');
    await expect(row.getByTestId('dv-error')).toHaveCount(0);

    await createFromLibrary(page, name, vm);
    const manifest = JSON.stringify(await (await request.get(`/api/vms/${NS}/${vm}`)).json());
    expect(manifest).toContain(`"persistentVolumeClaim":{"claimName":"${name}","readOnly":true}`);
    expect(manifest).toContain('"cdrom":{"bus":"sata"},"bootOrder":1');
  } finally {
    await apiDelete(request, baseURL, vm);
    await request.delete(`/api/datavolumes/${NS}/${name}`, { headers: origin(baseURL) });
  }
});

test('Cancel an upload in flight: the image is not Succeeded and says why; Upload again finishes it', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('cut');
  try {
    await page.goto('/images');
    await waitLive(page);
    const iso = Buffer.alloc(8 * 1024 * 1024, 0x42);
    await page
      .locator('#up-file')
      .setInputFiles({ name: 'cut.iso', mimeType: 'application/octet-stream', buffer: iso });
    await page.locator('#up-name').fill(name);
    const posts: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'POST' && r.url().includes(`/${name}/upload`)) posts.push(r.url());
    });
    // A slow uplink (1 MiB/s: 8 s for the image), so the upload is surely still in flight when Cancel is clicked.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 1024 * 1024,
    });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect(page.getByTestId('upload-progress')).toBeVisible();
    await page.getByRole('button', { name: 'Cancel upload' }).click();
    await expect(page.getByTestId('upload-error')).toContainText('upload cancelled');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    // Cancel sends nothing: it once submitted the form again (the same <button> turned back into Upload).
    expect(posts).toHaveLength(1);
    const row = page.locator(`[data-datavolume="${name}"]`);
    await expect(row.getByTestId('dv-error')).toContainText(/client disconnected/, { timeout: 15_000 });
    await expect(row).not.toHaveAttribute('data-phase', 'Succeeded');
    // CDI's upload server waits for the bytes again; the wizard does not offer the image meanwhile.
    await expect(row).toHaveAttribute('data-phase', 'UploadReady', { timeout: 30_000 });
    await page.goto('/create');
    await page.getByRole('radio', { name: 'Image library' }).click();
    await expect(page.locator(`[data-library="${name}"]`)).toBeDisabled();
    const refused = await request.post('/api/vms', {
      headers: origin(baseURL),
      data: { name: uniqueName('never'), isoDataVolume: name },
    });
    expect(refused.status()).toBe(409);
    expect(((await refused.json()) as { error: string }).error).toMatch(/is UploadReady .*not Succeeded/);

    await page.goto('/images');
    await waitLive(page);
    await page
      .locator('#up-file')
      .setInputFiles({ name: 'cut.iso', mimeType: 'application/octet-stream', buffer: iso });
    await page.locator('#up-name').fill(name);
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await expect(page.getByTestId('upload-done')).toContainText(name, { timeout: 60_000 });
    await expect(row).toHaveAttribute('data-phase', 'Succeeded', { timeout: 30_000 });
    await expect(row.getByTestId('dv-error')).toHaveCount(0);
  } finally {
    await request.delete(`/api/datavolumes/${NS}/${name}`, { headers: origin(baseURL) });
  }
});

test.describe('Images page screenshots', { tag: '@screenshots' }, () => {
  const SOURCE = 'my-fedora';
  const IMAGE = 'noble-golden';
  const ISO = 'debian-netinst';
  test.beforeAll(async ({ request, baseURL }) => {
    await request.post('/api/sources', {
      headers: origin(baseURL),
      data: { name: SOURCE, kind: 'containerDisk', uri: 'quay.io/containerdisks/fedora:42', description: 'Ours' },
    });
    await request.post('/api/datavolumes', {
      headers: origin(baseURL),
      data: { name: IMAGE, url: IMAGE_URL, size: '4Gi' },
    });
    await request.post(`/api/datavolumes/${NS}/${ISO}/upload?size=1Gi&contentType=iso`, {
      headers: { ...origin(baseURL), 'content-type': 'application/octet-stream' },
      data: Buffer.alloc(1024 * 1024, 0x43),
    });
  });
  test.afterAll(async ({ request, baseURL }) => {
    await request.delete(`/api/sources/${SOURCE}`, { headers: origin(baseURL) });
    await request.delete(`/api/datavolumes/${NS}/${IMAGE}`, { headers: origin(baseURL) });
    await request.delete(`/api/datavolumes/${NS}/${ISO}`, { headers: origin(baseURL) });
  });
  for (const theme of ['dark', 'light'] as const) {
    const suffix = theme === 'light' ? '-light' : '';
    test(`desktop and phone, ${theme}`, async ({ page, browser, baseURL }) => {
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await page.goto('/images');
      await waitLive(page);
      await expect(page.locator(`[data-datavolume="${IMAGE}"]`)).toHaveAttribute('data-phase', 'Succeeded', {
        timeout: 60_000,
      });
      await page.screenshot({ path: `${DIR}/images${suffix}.png`, fullPage: true });
      await page
        .getByRole('form', { name: 'Upload an image' })
        .screenshot({ path: `${DIR}/images-upload-form${suffix}.png` });
      await page.goto('/create');
      await page.getByRole('radio', { name: 'Image library' }).click();
      await page.locator(`[data-library="${IMAGE}"]`).click();
      await expect(page.locator(`[data-library="${ISO}"]`)).toBeEnabled();
      await page.screenshot({ path: `${DIR}/create-library${suffix}.png`, fullPage: true });
      const context = await browser.newContext({
        viewport: { width: 390, height: 844 },
        isMobile: true,
        hasTouch: true,
        baseURL,
      });
      const phone = await context.newPage();
      await phone.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
      await phone.goto('/images');
      await expect(phone.locator(`[data-datavolume="${IMAGE}"]`)).toBeVisible();
      await phone.screenshot({ path: `${DIR}/phone-images${suffix}.png`, fullPage: true });
      const form = phone.getByRole('form', { name: 'Upload an image' });
      await form.scrollIntoViewIfNeeded();
      await phone.screenshot({ path: `${DIR}/phone-images-upload${suffix}.png` });
      await phone.goto('/create');
      await phone.getByRole('radio', { name: 'Image library' }).click();
      await phone.locator(`[data-library="${ISO}"]`).click();
      await expect(phone.locator(`[data-library="${ISO}"]`)).toHaveAttribute('aria-pressed', 'true');
      await phone.screenshot({ path: `${DIR}/phone-create-library${suffix}.png`, fullPage: true });
      await context.close();
    });
  }
});

test.describe('read-only caller', () => {
  test.use({ baseURL: READONLY_URL || undefined, extraHTTPHeaders: { 'Tailscale-User-Login': 'bob@example.com' } });
  test('sees the library but no add, import, remove or delete; the API refuses with 403', async ({
    page,
    request,
    baseURL,
  }) => {
    test.skip(!READONLY_URL, 'no read-only Corral to test against');
    await page.goto('/images');
    await expect(page.getByTestId('images-catalog').locator('[data-image]').first()).toBeVisible();
    await expect(page.getByTestId('sources-table')).toBeVisible();
    await expect(page.getByRole('button', { name: 'Add source' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Import' })).toHaveCount(0);
    await expect(page.getByRole('button', { name: 'Upload', exact: true })).toHaveCount(0);
    await expect(page.getByRole('button', { name: /^(Remove|Delete) / })).toHaveCount(0);
    const res = await request.post('/api/sources', {
      headers: origin(baseURL),
      data: { name: 'ro-src', kind: 'containerDisk', uri: 'quay.io/a/b:1' },
    });
    expect(res.status()).toBe(403);
  });
});
