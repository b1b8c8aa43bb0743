// Consoles in the browser: the Console tab (noVNC) draws the VM's screen and reacts to typing, the Terminal tab
// (xterm.js) logs in on the serial console and runs a command, and Take over moves a console between two pages.
import { expect, test, type Page } from '@playwright/test';
import { NS, apiCreate, apiDelete, uniqueName, waitForStatus } from './helpers';

/** A cheap fingerprint of the noVNC canvas: how many distinct colours it has, and a hash of its pixels. */
async function canvasStats(page: Page): Promise<{ colours: number; hash: number; width: number }> {
  return page.locator('[data-testid="vnc-screen"] canvas').evaluate((canvas: HTMLCanvasElement) => {
    const ctx = canvas.getContext('2d');
    if (!ctx || canvas.width === 0) return { colours: 0, hash: 0, width: 0 };
    const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    const colours = new Set<number>();
    let hash = 0;
    for (let i = 0; i < data.length; i += 4) {
      const px = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
      if (colours.size < 64) colours.add(px);
      hash = (Math.imul(hash, 31) + px) | 0;
    }
    return { colours: colours.size, hash, width: canvas.width };
  });
}

function consoleUrl(name: string, tab: 'console' | 'terminal') {
  return `/vms/${NS}/${name}?tab=${tab}`;
}

test.describe('consoles', () => {
  let name = '';

  test.beforeAll(async ({ request, baseURL }) => {
    name = uniqueName('con');
    await apiCreate(request, baseURL, name);
    await waitForStatus(request, name, 'Running');
  });

  test.afterAll(async ({ request, baseURL }) => {
    await apiDelete(request, baseURL, name);
  });

  test('Console tab shows a non-blank screen whose pixels change after typing', async ({ page }) => {
    await page.goto(consoleUrl(name, 'console'));
    const canvas = page.locator('[data-testid="vnc-screen"] canvas');
    await expect(canvas).toBeVisible();
    await expect.poll(async () => (await canvasStats(page)).colours, { timeout: 30_000 }).toBeGreaterThan(1);
    await expect(page.getByTestId('console-holder')).toContainText('Held by');
    const before = await canvasStats(page);
    await canvas.click();
    await page.keyboard.type('hello corral');
    await expect.poll(async () => (await canvasStats(page)).hash, { timeout: 15_000 }).not.toBe(before.hash);
  });

  test('Terminal tab logs in on the serial console and runs a command', async ({ page }) => {
    await page.goto(consoleUrl(name, 'terminal'));
    const screen = page.getByTestId('terminal-screen');
    const rows = screen.locator('.xterm-rows');
    await expect(rows).toBeVisible();
    await screen.click();
    // Enter redraws the login prompt (the boot log may already have scrolled past it).
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('login:', { timeout: 30_000 });
    await page.keyboard.type('fedora');
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('Password:');
    await page.keyboard.type('secret');
    await page.keyboard.press('Enter');
    await expect(rows).toContainText('$');
    await page.keyboard.type('hostname');
    await page.keyboard.press('Enter');
    // The command's output is the VM name on a line of its own.
    await expect
      .poll(
        async () =>
          (await rows.innerText())
            .split('\n')
            .map((l) => l.trim())
            .includes(name),
        { timeout: 15_000 },
      )
      .toBe(true);
    // The retained log is downloadable.
    const download = page.waitForEvent('download');
    await page.getByTestId('serial-download').click();
    const file = await download;
    expect(file.suggestedFilename()).toBe(`${NS}-${name}-serial.log`);
  });

  test('Take over moves the console between two pages, and each is told', async ({ browser }) => {
    const first = await browser.newPage();
    const second = await browser.newPage();
    try {
      await first.goto(consoleUrl(name, 'console'));
      await expect.poll(async () => (await canvasStats(first)).colours, { timeout: 30_000 }).toBeGreaterThan(1);

      // The same caller opening the console elsewhere takes it; the first page says so and offers it back.
      await second.goto(consoleUrl(name, 'console'));
      await expect.poll(async () => (await canvasStats(second)).colours, { timeout: 30_000 }).toBeGreaterThan(1);
      const firstNotice = first.getByTestId('console-notice');
      await expect(firstNotice).toHaveAttribute('data-verdict', 'taken-over');
      await expect(firstNotice).toContainText('Console taken over by');

      await first.getByTestId('console-takeover').click();
      await expect(second.getByTestId('console-notice')).toHaveAttribute('data-verdict', 'taken-over');
      await expect(first.getByTestId('console-notice')).toHaveCount(0);
      await expect.poll(async () => (await canvasStats(first)).colours, { timeout: 30_000 }).toBeGreaterThan(1);
    } finally {
      await first.close();
      await second.close();
    }
  });
});
