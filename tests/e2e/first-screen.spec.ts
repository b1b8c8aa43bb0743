// The Datacenter's first rows come in its HTML (docs/scale.md, "First rows from the HTML"): the server renders the
// first page of guests and the whole list's counts, so they show before any script has run; the page then
// hydrates exactly that markup (no React #418, no console error), asks for no separate first page, and the whole
// list follows as before.
import { expect, test, type Page } from '@playwright/test';
import { waitLive } from './helpers';

interface Named {
  name: string;
  namespace: string;
  template?: boolean;
}

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * The fleet as the REST lists have it: VM keys, how many VMs the Datacenter counts (templates are listed apart), and
 * the name of the guest (VM or CT) its table lists first.
 */
async function fleet(page: Page) {
  const vms = ((await (await page.request.get('/api/vms')).json()) as Named[]).filter((v) => !v.template);
  const cts = (await (await page.request.get('/api/cts')).json()) as Named[];
  const first = [...vms, ...cts].sort(
    (a, b) => collator.compare(a.name, b.name) || collator.compare(a.namespace, b.namespace),
  )[0];
  return { vms: new Set(vms.map((v) => `${v.namespace}/${v.name}`)), count: vms.length, first: first?.name };
}

test('without JavaScript the Datacenter already shows its first guests and how many VMs there are', async ({
  browser,
  baseURL,
}) => {
  const context = await browser.newContext({ javaScriptEnabled: false, baseURL });
  const page = await context.newPage();
  try {
    const { vms, count, first } = await fleet(page);
    expect(count).toBeGreaterThan(0);
    await page.goto('/');
    const rows = page.locator('[data-vm]');
    await expect(rows.first()).toBeVisible();
    for (const key of await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-vm') ?? '')))
      expect(vms.has(key), key).toBe(true);
    await expect(page.locator('.vm-body-row[aria-rowindex="2"] .vm-name a')).toHaveText(first!);
    await expect(page.getByTestId('card-vms')).toHaveText(String(count));
    // Other pages carry no first screen.
    expect(await (await page.request.get('/health')).text()).not.toContain('data-vm=');
  } finally {
    await context.close();
  }
});

test('the page hydrates the server-rendered rows without an error and asks for no separate first page', async ({
  page,
}) => {
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  const asked: string[] = [];
  page.on('request', (r) => asked.push(new URL(r.url()).pathname + new URL(r.url()).search));
  const { count, first } = await fleet(page);
  await page.goto('/');
  await expect(page.locator('.vm-body-row[aria-rowindex="2"] .vm-name a')).toHaveText(first!);
  await waitLive(page);
  await expect(page.getByTestId('card-vms')).toHaveText(String(count));
  // Hydrated: the table's sort button works.
  const table = page.getByTestId('vm-table');
  await table.getByRole('button', { name: /^Name( |$)/ }).click();
  await expect(table.getByRole('columnheader', { name: /^Name( |$)/ })).toHaveAttribute('aria-sort', 'descending');
  expect(asked.filter((p) => p.startsWith('/api/vms?'))).toEqual([]);
  expect(asked).toContain('/api/vms');
  expect(problems).toEqual([]);
});

test('what is typed into the filter boxes before the page has hydrated is kept and filters', async ({ page }) => {
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));
  page.on('pageerror', (e) => problems.push(e.message));
  const { first } = await fleet(page);
  // The app's scripts arrive late, as on a slow link: the server-rendered rows and boxes are up before hydration.
  let release: () => void = () => undefined;
  const held = new Promise<void>((r) => (release = r));
  // Scripts only: the stylesheets (also under chunks/) block the first paint, as they should.
  await page.route(/\/_next\/static\/chunks\/.*\.js(\?|$)/, async (route) => {
    await held;
    await route.continue();
  });
  await page.goto('/', { waitUntil: 'commit' });
  await expect(page.locator('.vm-body-row[aria-rowindex="2"] .vm-name a')).toHaveText(first!);
  const box = page.getByTestId('vm-filter');
  await box.pressSequentially(first!);
  await page.getByLabel('Filter the resource tree').pressSequentially(first!);
  release();
  await waitLive(page);
  await expect(box).toHaveValue(first!);
  await expect(page.getByLabel('Filter the resource tree')).toHaveValue(first!);
  await expect(page.locator('[data-filtered]')).toHaveAttribute('data-filtered', first!);
  await expect(page).toHaveURL(new RegExp(`[?&]q=${first!}`));
  expect(problems).toEqual([]);
});
