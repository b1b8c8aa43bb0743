// The Datacenter's filter box shows a keystroke in the frame after it, and the table follows only once that frame
// is painted (lib/after-paint.ts): the key's frame carries the box's change and not the table's new rows, whose
// layout and paint would make it late at 50,000 VMs (docs/scale.md, "The key's frame first").
import { expect, test } from '@playwright/test';
import { waitLive } from './helpers';

test('a keystroke is in the next frame before the table follows it, then the table shows its rows', async ({
  page,
}) => {
  await page.goto('/');
  await waitLive(page);
  const table = page.locator('[data-filtered]');
  await expect(table).toHaveAttribute('data-filtered', '');
  const first = await page.locator('.vm-body-row .vm-name a').first().textContent();
  // Typed as React sees a keystroke (one input event), then read at the next frame's start and after it.
  const seen = (await page.evaluate(`(async (value) => {
    const box = document.querySelector('[data-testid="vm-filter"]');
    const shows = () => document.querySelector('[data-filtered]').getAttribute('data-filtered');
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(box, value);
    box.dispatchEvent(new Event('input', { bubbles: true }));
    return new Promise((resolve) =>
      requestAnimationFrame(() => resolve({ box: box.value, table: shows() })),
    );
  })(${JSON.stringify(first)})`)) as { box: string; table: string };
  expect(seen).toEqual({ box: first, table: '' });
  await expect(table).toHaveAttribute('data-filtered', first!);
  await expect(page.getByTestId('shown-count')).toContainText('1 of');
  await expect(page.locator('.vm-body-row .vm-name a')).toHaveText([first!]);
});
