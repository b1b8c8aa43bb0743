// The resource tree's filter (answered in slices after the keystroke, ResourceTree.tsx): it narrows the tree to the
// matching guests, follows a live change while set, and shows everything again once cleared.
import { expect, test } from '@playwright/test';
import { apiCreate, apiDelete, uniqueName, waitLive } from './helpers';

test('the tree filter narrows to the matching VMs, follows a new VM while set, and clears', async ({
  page,
  request,
  baseURL,
}) => {
  const first = uniqueName('treef');
  const second = `${first}-b`;
  const tree = page.locator('#resource-tree');
  const treeVm = (name: string) => tree.locator('.tree-item .label', { hasText: new RegExp(`^${name}$`) });
  try {
    await apiCreate(request, baseURL, first, false);
    await page.goto('/');
    await waitLive(page);
    await expect(treeVm(first)).toBeVisible();
    const box = page.getByLabel('Filter the resource tree');
    await box.fill(first);
    await expect(tree).not.toHaveAttribute('aria-busy', 'true');
    await expect(treeVm(first)).toBeVisible();
    // Every guest in the tree is titled "namespace/name — status" (CTs "CT namespace/name — phase").
    const guests = tree.locator('.tree-item[title*=" — "]');
    await expect(guests).toHaveCount(1);
    // A VM created while the filter is set and matching it joins the answer.
    await apiCreate(request, baseURL, second, false);
    await expect(treeVm(second)).toBeVisible({ timeout: 30_000 });
    await expect(guests).toHaveCount(2);
    await box.fill(`${first} zzz-none`);
    await expect(guests).toHaveCount(0);
    await box.fill('');
    await expect(tree).not.toHaveAttribute('aria-busy', 'true');
    await expect(treeVm(second)).toBeVisible();
    expect(await guests.count()).toBeGreaterThan(2);
  } finally {
    await apiDelete(request, baseURL, second);
    await apiDelete(request, baseURL, first);
  }
});
