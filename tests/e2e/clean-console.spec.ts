// Every page of the UI loads without a single page error or console error — hydration mismatches (React #418),
// Content-Security-Policy violations, failed requests — in both themes, at desktop and phone width; and the HTML
// and asset responses carry the security headers (src/server/http/security-headers.ts).
import { expect, test, type Page } from '@playwright/test';
import { NS, apiCreate, apiDelete, uniqueName, vmRow, waitForStatus } from './helpers';

const THEMES = ['dark', 'light'] as const;
const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

let vm = '';
let node = '';

interface Route {
  name: string;
  path: () => string;
  /** Waits until the page shows what it is for (the live data arrived, the console is connected, …). */
  ready: (page: Page) => Promise<void>;
  /** Console errors this route must produce (the 404 page's own status) — removed once each, nothing more. */
  expected?: RegExp[];
}

const ROUTES: Route[] = [
  {
    name: 'datacenter',
    path: () => '/',
    ready: async (page) => {
      await expect(vmRow(page, vm)).toBeAttached();
      await expect(page.getByTestId('top-cpu').locator('[data-top]').first()).toBeAttached(); // metrics.top answered
    },
  },
  {
    name: 'node',
    path: () => `/nodes/${node}`,
    ready: async (page) => {
      await expect(page.getByRole('heading', { level: 1 })).toContainText(node);
    },
  },
  {
    name: 'VM summary',
    path: () => `/vms/${NS}/${vm}?tab=summary`,
    ready: async (page) => {
      await expect(page.getByTestId('vm-status')).toContainText('Running');
      await expect(page.getByTestId('chart-cpu').or(page.getByTestId('chart-cpu-empty'))).toBeAttached();
    },
  },
  {
    name: 'VM YAML',
    path: () => `/vms/${NS}/${vm}?tab=yaml`,
    ready: async (page) => {
      await expect(page.getByTestId('vm-yaml')).toContainText('kind: VirtualMachine');
    },
  },
  {
    name: 'VM hardware',
    path: () => `/vms/${NS}/${vm}?tab=hardware`,
    ready: async (page) => {
      await expect(page.getByTestId('hw-cpu')).toContainText('vCPU');
    },
  },
  {
    name: 'VM options',
    path: () => `/vms/${NS}/${vm}?tab=options`,
    ready: async (page) => {
      await expect(page.getByTestId('opt-firmware')).toBeVisible();
    },
  },
  {
    name: 'VM snapshots',
    path: () => `/vms/${NS}/${vm}?tab=snapshots`,
    ready: async (page) => {
      await expect(page.getByTestId('snapshot-table')).toContainText('NOW');
    },
  },
  {
    name: 'VM events',
    path: () => `/vms/${NS}/${vm}?tab=events`,
    ready: async (page) => {
      await expect(page.getByTestId('events-table')).toBeVisible();
      await expect(page.getByTestId('events-live')).toHaveText('live');
    },
  },
  {
    name: 'VM console (noVNC)',
    path: () => `/vms/${NS}/${vm}?tab=console`,
    ready: async (page) => {
      await expect(page.locator('[data-testid="vnc-screen"] canvas')).toBeAttached();
      await expect(page.getByTestId('console-holder')).toContainText('Held by');
    },
  },
  {
    name: 'VM terminal (xterm.js)',
    path: () => `/vms/${NS}/${vm}?tab=terminal`,
    ready: async (page) => {
      await expect(page.getByTestId('terminal-screen').locator('.xterm-rows')).toBeAttached();
      await expect(page.getByTestId('console-holder')).toContainText('Held by');
    },
  },
  {
    name: 'create wizard',
    path: () => '/create',
    ready: async (page) => {
      // The Image library tab (dataVolumes.list) first, then back to the catalog.
      await page.getByRole('radio', { name: 'Image library' }).click();
      await expect(page.getByTestId('library')).toBeVisible();
      await page.getByRole('radio', { name: 'Catalog' }).click();
      await page.locator('[data-testid="catalog"] [data-image]').first().click();
      await page.getByTestId('wizard-next').click();
      await expect(page.getByTestId('create-submit')).toBeVisible();
    },
  },
  {
    name: 'images',
    path: () => '/images',
    ready: async (page) => {
      await expect(page.getByTestId('images-catalog').locator('[data-image]').first()).toBeVisible();
      await expect(page.getByTestId('datavolumes-table')).toBeVisible();
      await expect(page.getByTestId('sources-table')).toBeVisible();
    },
  },
  {
    name: 'tasks (log dialog)',
    path: () => '/',
    ready: async (page) => {
      const row = page.locator('.tasks-table tbody tr').first();
      await row.scrollIntoViewIfNeeded();
      await row.click();
      await expect(page.getByTestId('task-log')).toBeVisible();
    },
  },
  {
    name: 'multiview',
    path: () => '/multiview',
    ready: async (page) => {
      await expect(page.getByTestId('multiview-tile').first()).toBeAttached();
      await expect(page.getByTestId('multiview-tile').first().locator('canvas')).toBeAttached();
    },
  },
  {
    name: 'Proxmox API',
    path: () => '/proxmox',
    ready: async (page) => {
      await expect(page.getByTestId('gaps-table').or(page.getByTestId('gaps-empty'))).toBeAttached();
    },
  },
  {
    name: 'not found',
    path: () => '/no-such-page',
    ready: async (page) => {
      await expect(page.getByText(/404|could not be found/i).first()).toBeVisible();
    },
    expected: [/Failed to load resource: the server responded with a status of 404/],
  },
];

/** Collects page errors, console errors and CSP violations (reported to the console by an init script). */
async function watchErrors(page: Page): Promise<string[]> {
  const errors: string[] = [];
  page.on('pageerror', (err) => errors.push(`pageerror: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') errors.push(`console.error: ${msg.text()} (${msg.location().url})`);
  });
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP violation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'}`),
    );
  });
  return errors;
}

/** The headers every UI response must carry; the CSP must allow scripts by nonce only. */
function expectSecurityHeaders(res: { headers(): Record<string, string> } | null, what: string): string {
  expect(res, what).not.toBeNull();
  const h = res!.headers();
  const csp = h['content-security-policy'] ?? '';
  expect(csp, `${what}: Content-Security-Policy`).toMatch(/script-src [^;]*'nonce-[A-Za-z0-9+/=]+'/);
  const scriptSrc = /script-src ([^;]*)/.exec(csp)?.[1] ?? '';
  expect(scriptSrc, what).not.toContain("'unsafe-eval'");
  expect(scriptSrc, what).not.toContain("'unsafe-inline'");
  expect(csp, what).toContain("frame-ancestors 'none'");
  expect(csp, what).toContain("object-src 'none'");
  expect(h['x-frame-options'], what).toBe('DENY');
  expect(h['x-content-type-options'], what).toBe('nosniff');
  expect(h['referrer-policy'], what).toMatch(/^(no-referrer|same-origin)$/);
  expect(h['permissions-policy'], what).toContain('camera=()');
  return csp;
}

test.beforeAll(async ({ request, baseURL }) => {
  vm = uniqueName('clean');
  await apiCreate(request, baseURL, vm);
  await waitForStatus(request, vm, 'Running');
  const rows = (await (await request.get('/api/vms', { params: { namespace: NS } })).json()) as {
    name: string;
    node?: string;
  }[];
  node = rows.find((r) => r.name === vm)?.node ?? '';
  expect(node, 'the running VM is placed on a node').not.toBe('');
});

test.afterAll(async ({ request, baseURL }) => {
  await apiDelete(request, baseURL, vm);
});

// Every screen in the dark theme at desktop width; the light theme and phone width again only where a script
// depends on them, so the suite's time stays in budget (the theme toggle test below and the screenshots cover the
// rest). The only theme-dependent script is the root layout's nonced pre-paint script, the same on every page, so
// the light theme runs on the pages that draw with the theme's CSS variables (the charts on the Datacenter, node
// and VM summary) and the Images page's forms. At phone width: the tree drawer, the charts (ResizeObserver),
// noVNC's scaling, xterm's fit, and the wizard's and the Images page's responsive forms; the rest differ from
// desktop in CSS alone.
const PHONE_ROUTES = new Set([
  'datacenter',
  'VM summary',
  'VM console (noVNC)',
  'VM terminal (xterm.js)',
  'create wizard',
  'images',
]);
const LIGHT_ROUTES = new Set(['datacenter', 'node', 'VM summary', 'images']);
for (const name of [...PHONE_ROUTES, ...LIGHT_ROUTES])
  if (!ROUTES.some((r) => r.name === name)) throw new Error(`PHONE_ROUTES or LIGHT_ROUTES names no route: ${name}`);
for (const [size, viewport] of Object.entries(VIEWPORTS)) {
  for (const theme of size === 'phone' ? (['dark'] as const) : THEMES) {
    test.describe(`${size}, ${theme} theme`, () => {
      test.use({ viewport });

      const only = size === 'phone' ? PHONE_ROUTES : theme === 'light' ? LIGHT_ROUTES : undefined;
      for (const route of only ? ROUTES.filter((r) => only.has(r.name)) : ROUTES) {
        test(`${route.name}: no page or console errors`, async ({ page }) => {
          const errors = await watchErrors(page);
          await page.addInitScript((t) => localStorage.setItem('corral-theme', t), theme);
          const res = await page.goto(route.path());
          expectSecurityHeaders(res, `${route.path()} (HTML)`);
          await route.ready(page);
          // The inline theme script ran (it needs the nonce): the stored theme is applied.
          await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
          // The live stream is up (the badge is hidden on phones, but rendered).
          await expect(page.locator('.badge-live')).toBeAttached();
          await page.waitForTimeout(300); // late errors: effects after hydration, first stream events
          const unexpected = [...errors];
          for (const re of route.expected ?? []) {
            const i = unexpected.findIndex((e) => re.test(e));
            expect(i, `expected console error ${re}`).toBeGreaterThanOrEqual(0);
            unexpected.splice(i, 1);
          }
          expect(unexpected, `errors on ${route.path()}`).toEqual([]);
        });
      }
    });
  }
}

test('the theme toggle switches both ways without errors', async ({ page }) => {
  const errors = await watchErrors(page);
  await page.goto('/');
  await expect(page.locator('.badge-live')).toBeAttached();
  const html = page.locator('html');
  const start = await html.getAttribute('data-theme');
  const other = start === 'light' ? 'dark' : 'light';
  await page.getByTestId('theme-toggle').click();
  await expect(html).toHaveAttribute('data-theme', other);
  await page.reload();
  await expect(html).toHaveAttribute('data-theme', other);
  await page.getByTestId('theme-toggle').click();
  await expect(html).toHaveAttribute('data-theme', start ?? 'dark');
  expect(errors).toEqual([]);
});

test('security headers on pages, assets and errors; every script in the HTML carries the nonce', async ({
  request,
}) => {
  for (const path of ['/', '/create', `/nodes/${node}`, `/vms/${NS}/${vm}?tab=summary`, '/multiview']) {
    const res = await request.get(path);
    expect(res.status(), path).toBe(200);
    const csp = expectSecurityHeaders(res, path);
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    const html = await res.text();
    const scripts = html.match(/<script\b[^>]*>/g) ?? [];
    expect(scripts.length, path).toBeGreaterThan(2);
    for (const tag of scripts) expect(tag, `${path}: ${tag}`).toContain(`nonce="${nonce}"`);
    // A fresh nonce per response: a prerendered page would repeat it.
    const again = expectSecurityHeaders(await request.get(path), path);
    expect(again, path).not.toBe(csp);
    if (path === '/') {
      const asset = /<script[^>]*src="(\/_next\/static\/[^"]+\.js)"/.exec(html)?.[1];
      expect(asset, 'a /_next/static script').toBeTruthy();
      const assetRes = await request.get(asset!);
      expect(assetRes.status()).toBe(200);
      expectSecurityHeaders(assetRes, asset!);
    }
  }
  const missing = await request.get('/no-such-page');
  expect(missing.status()).toBe(404);
  expectSecurityHeaders(missing, '404 page');
  // A client cannot choose the nonce by sending its own policy.
  const chosen = await request.get('/', { headers: { 'Content-Security-Policy': "script-src 'nonce-chosen'" } });
  expect(chosen.headers()['content-security-policy']).not.toContain('chosen');
  expect(await chosen.text()).not.toContain('nonce="chosen"');
});

test('the API reference runs its one inline script under its own CSP, without errors', async ({ page }) => {
  const errors = await watchErrors(page);
  const res = await page.goto('/api/docs');
  const h = res!.headers();
  expect(h['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'(;|$)/);
  expect(h['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(h['x-frame-options']).toBe('DENY');
  // The operations are rendered by the inline script, so it ran.
  await expect(page.locator('#ops details').first()).toBeAttached();
  await page.waitForTimeout(300);
  expect(errors).toEqual([]);
});
