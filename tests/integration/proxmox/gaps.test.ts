/**
 * The gap log as a product feature: PVE endpoints an authenticated client asked for that Corral does not serve are
 * counted, with the last caller, and served at `GET /api/proxmox/gaps` (and by tRPC `proxmox.gaps`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from '@/server/routers/_app';
import { createCorralClient } from '@/server/sdk';
import { createCallerFactory, createContextInner } from '@/server/trpc';
import { ADMIN_SECRET, VIEWER_SECRET, px, startProxmoxHarness, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
});
afterAll(async () => {
  await h?.close();
});

interface Report {
  gaps: { method: string; path: string; example: string; count: number; lastCaller: string; lastSeen: string }[];
  dropped: number;
  capacity: number;
}
const report = async (): Promise<Report> => {
  const res = await fetch(`${h.corral.url}/api/proxmox/gaps`);
  const body = (await res.json()) as Report;
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
};

describe('GET /api/proxmox/gaps', () => {
  it('lists unserved endpoints by shape with counts and the last caller; anonymous requests are not counted', async () => {
    expect((await report()).gaps).toEqual([]);
    const admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const viewer = px(h.url, { token: `monitor@pve!ro=${VIEWER_SECRET}` });
    expect((await admin.get('/nodes/corral-1/ceph/status')).status).toBe(501);
    expect((await admin.get('/nodes/corral-2/ceph/status')).status).toBe(501);
    expect((await viewer.get('/nodes/corral-3/ceph/status')).status).toBe(501);
    expect((await admin.post('/nodes/corral-1/qemu/100/sendkey', { key: 'ctrl-alt-delete' })).status).toBe(501);
    expect((await px(h.url).get('/nodes/corral-1/ceph/status')).status).toBe(401);
    // A served endpoint is no gap.
    expect((await admin.get('/version')).status).toBe(200);

    const { gaps, dropped, capacity } = await report();
    expect({ dropped, capacity }).toEqual({ dropped: 0, capacity: 500 });
    expect(gaps).toEqual([
      expect.objectContaining({
        method: 'GET',
        path: '/nodes/{node}/ceph/status',
        example: '/nodes/corral-1/ceph/status',
        count: 3,
        lastCaller: 'monitor@pve!ro',
      }),
      expect.objectContaining({
        method: 'POST',
        path: '/nodes/{node}/qemu/{id}/sendkey',
        count: 1,
        lastCaller: 'root@pam!ci',
      }),
    ]);
    expect(Date.parse(gaps[0]!.lastSeen)).toBeLessThanOrEqual(Date.now());
    // The server log still gets one line per shape.
    expect(h.gaps).toEqual([
      '[proxmox-gap] GET /nodes/corral-1/ceph/status',
      '[proxmox-gap] POST /nodes/corral-1/qemu/100/sendkey',
    ]);
  });

  it('is for admins: tRPC proxmox.gaps answers an admin and refuses a read-only login', async () => {
    const caller = (admin: boolean) =>
      createCallerFactory(appRouter)(
        createContextInner({
          services: h.corral.services,
          identity: { login: admin ? 'ada' : 'bob', name: 'x', admin, enforced: true },
        }),
      );
    expect((await caller(true).proxmox.gaps()).gaps.length).toBeGreaterThan(0);
    // The same procedure through the typed SDK.
    expect((await createCorralClient(h.corral.url).proxmox.gaps.query()).gaps.map((g) => g.path)).toContain(
      '/nodes/{node}/ceph/status',
    );
    await expect(caller(false).proxmox.gaps()).rejects.toThrow(/bob may not read the Proxmox gap log/);
  });

  it('refuses unknown query parameters', async () => {
    const res = await fetch(`${h.corral.url}/api/proxmox/gaps?colour=red`);
    expect(res.status).toBe(400);
  });
});
