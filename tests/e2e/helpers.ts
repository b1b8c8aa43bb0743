// Shared steps for the UI tests: unique names, REST setup calls (same-origin, as the server's CSRF guard
// requires), and waiting for a VM to reach a status through the REST API.
import { expect, type APIRequestContext, type Page } from '@playwright/test';

export const NS = 'tailvm';

export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}

export function origin(baseURL: string | undefined): Record<string, string> {
  return { Origin: new URL(baseURL ?? 'http://localhost').origin, 'Content-Type': 'application/json' };
}

/** Creates a small catalog VM, powered on unless `start` is false (the server's own default is stopped). */
export async function apiCreate(request: APIRequestContext, baseURL: string | undefined, name: string, start = true) {
  const res = await request.post('/api/vms', {
    headers: origin(baseURL),
    data: { name, namespace: NS, image: 'cirros', cpu: 1, mem: '512Mi', start },
  });
  expect(res.status(), await res.text()).toBe(201);
}

export async function apiAction(request: APIRequestContext, baseURL: string | undefined, name: string, action: string) {
  const res = await request.post(`/api/vms/${NS}/${name}/${action}`, { headers: origin(baseURL), data: {} });
  expect(res.ok(), await res.text()).toBe(true);
}

export async function apiDelete(request: APIRequestContext, baseURL: string | undefined, name: string) {
  await request.delete(`/api/vms/${NS}/${name}`, { headers: origin(baseURL) });
}

export async function waitForStatus(request: APIRequestContext, name: string, status: string, timeout = 60_000) {
  await expect
    .poll(
      async () => {
        const res = await request.get('/api/vms', { params: { namespace: NS } });
        const rows = (await res.json()) as { name: string; status: string }[];
        return rows.find((r) => r.name === name)?.status;
      },
      { timeout, intervals: [250, 500, 1000] },
    )
    .toBe(status);
}

/** The live stream has delivered its first snapshot (the header says "live"). */
export async function waitLive(page: Page) {
  await expect(page.getByText('● live')).toBeVisible();
}

export function vmRow(page: Page, name: string) {
  return page.locator(`[data-vm="${NS}/${name}"]`);
}
