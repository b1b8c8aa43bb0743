// The Images page (issue 11): add a custom source (a bad URL is refused next to its field), create a VM from it in
// the wizard; import a disk image and watch the DataVolume's progress bar move to Succeeded, then find it in the
// wizard's "Existing PVC" picker; upload a small ISO with the progress bar. Screenshots of the page at desktop and phone width in both themes.
import { expect, test, type Page } from '@playwright/test';
import { READONLY_URL } from './env';
import { apiDelete, NS, origin, uniqueName, waitLive } from './helpers';

const DIR = 'docs/screenshots';
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

test('import a disk image: the progress bar moves to Succeeded; the wizard offers the disk', async ({
  page,
  request,
  baseURL,
}) => {
  const name = uniqueName('img');
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
          const bar = row.getByTestId('dv-progress');
          if (await bar.count()) seen.add(Number(await bar.getAttribute('aria-valuenow')));
          return row.getAttribute('data-phase');
        },
        { timeout: 60_000, intervals: [200] },
      )
      .toBe('Succeeded');
    expect(
      [...seen].some((p) => p > 0 && p < 100),
      `progress values seen: ${[...seen].join(', ')}`,
    ).toBe(true);
    await expect(row.getByTestId('dv-progress')).toHaveCount(0);

    await page.goto('/create');
    await page.getByRole('radio', { name: 'Existing PVC' }).click();
    await page.locator(`[data-imported="${name}"]`).click();
    await expect(page.locator('#source')).toHaveValue(name);
  } finally {
    await request.delete(`/api/datavolumes/${NS}/${name}`, { headers: origin(baseURL) });
  }
});

test('upload a small ISO: the progress bar shows, then the row is Succeeded', async ({ page, request, baseURL }) => {
  const name = uniqueName('iso');
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
  } finally {
    await request.delete(`/api/datavolumes/${NS}/${name}`, { headers: origin(baseURL) });
  }
});

test.describe('Images page screenshots', () => {
  const SOURCE = 'my-fedora';
  const IMAGE = 'noble-golden';
  test.beforeAll(async ({ request, baseURL }) => {
    await request.post('/api/sources', {
      headers: origin(baseURL),
      data: { name: SOURCE, kind: 'containerDisk', uri: 'quay.io/containerdisks/fedora:42', description: 'Ours' },
    });
    await request.post('/api/datavolumes', {
      headers: origin(baseURL),
      data: { name: IMAGE, url: IMAGE_URL, size: '4Gi' },
    });
  });
  test.afterAll(async ({ request, baseURL }) => {
    await request.delete(`/api/sources/${SOURCE}`, { headers: origin(baseURL) });
    await request.delete(`/api/datavolumes/${NS}/${IMAGE}`, { headers: origin(baseURL) });
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
      if (theme === 'dark') {
        await page.goto('/create');
        await page.getByRole('radio', { name: 'Existing PVC' }).click();
        await expect(page.locator(`[data-imported="${IMAGE}"]`)).toBeVisible();
        await page.screenshot({ path: `${DIR}/create-imported-disk.png` });
      }
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
