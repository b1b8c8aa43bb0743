// Screenshots of the main screens for docs/screenshots (README and docs/ui.md link them). Each shot waits for
// the screen's real content first, so a broken screen fails here instead of producing a blank picture.
import { expect, test, type Page } from '@playwright/test';
import { waitLive } from './helpers';

const DIR = 'docs/screenshots';

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
