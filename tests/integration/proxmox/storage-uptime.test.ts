/**
 * Storage sizes and node uptime over the Proxmox API: a StorageClass storage's `used` is the sum of its Bound PVCs'
 * capacities, total/avail the node-disk estimate (the embedded cluster publishes no CSIStorageCapacity), and node
 * `uptime` counts from the Node's Ready transition — in `/nodes`, `/nodes/{n}/status` and `/cluster/resources`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantityToNumber } from '@/server/domain/quantity';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

interface K8sList {
  items: {
    metadata: { name: string; namespace?: string; creationTimestamp?: string };
    spec?: { storageClassName?: string };
    status?: {
      phase?: string;
      capacity?: Record<string, string>;
      conditions?: { type: string; status: string; lastTransitionTime?: string }[];
    };
  }[];
}

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
});
afterAll(async () => {
  await h?.close();
});

const kube = async (path: string): Promise<K8sList> => (await fetch(`${h.sim.url}${path}`)).json() as Promise<K8sList>;

/** Bound claim bytes per class, read from the cluster itself (a claim without a class is longhorn, the default). */
async function boundBytes(): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const p of (await kube('/api/v1/persistentvolumeclaims')).items) {
    if (p.status?.phase !== 'Bound') continue;
    const cls = p.spec?.storageClassName || 'longhorn';
    out.set(cls, (out.get(cls) ?? 0) + quantityToNumber(p.status.capacity?.storage));
  }
  return out;
}

interface StorageStatus {
  storage: string;
  total: number;
  used: number;
  avail: number;
  active: number;
  enabled: number;
  shared: number;
  content: string;
  type: string;
  used_fraction?: number;
}

describe('storage sizes', () => {
  it('reports used = the Bound PVCs of the class, total/avail from the nodes’ disks, as integers', async () => {
    const created = await api.post('/nodes/corral-1/qemu', { vmid: 710, name: 'disky', memory: 512, scsi0: 'nfs:3' });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const created2 = await api.post('/nodes/corral-1/qemu', { vmid: 711, name: 'disky2', memory: 512, scsi0: 'nfs:2' });
    expect((await waitTask(api, created2.body.data as string)).exitstatus).toBe('OK');
    const nfsClaim = async () => (await boundBytes()).get('nfs') ?? 0;
    await expect.poll(nfsClaim, { timeout: 20_000 }).toBe(5 * 1024 ** 3);

    const bound = await boundBytes();
    const nodes = (await kube('/api/v1/nodes')).items;
    const disks = nodes.reduce((sum, n) => sum + quantityToNumber(n.status?.capacity?.['ephemeral-storage']), 0);
    const allClaimed = [...bound.values()].reduce((a, b) => a + b, 0);
    expect(disks).toBeGreaterThan(0);

    const list = (await api.get('/nodes/corral-1/storage')).body.data as StorageStatus[];
    const byId = new Map(list.map((s) => [s.storage, s]));
    const nfs = byId.get('nfs');
    expect(nfs).toMatchObject({
      used: 5 * 1024 ** 3,
      total: disks,
      avail: disks - allClaimed,
      active: 1,
      enabled: 1,
      shared: 1,
      type: 'lvmthin',
      content: 'images,rootdir',
    });
    expect(nfs?.used_fraction).toBeCloseTo((5 * 1024 ** 3) / disks, 12);
    // local-lvm is the default class's alias: the same figures as longhorn.
    const { storage: _a, ...longhorn } = byId.get('longhorn') ?? ({} as StorageStatus);
    const { storage: _b, ...alias } = byId.get('local-lvm') ?? ({} as StorageStatus);
    expect(alias).toEqual(longhorn);
    expect(longhorn.used).toBe(bound.get('longhorn') ?? 0);
    for (const s of list)
      for (const k of ['total', 'used', 'avail'] as const) expect(Number.isInteger(s[k])).toBe(true);

    // The single-storage status and the cluster's storage rows carry the same numbers.
    const status = (await api.get('/nodes/corral-1/storage/nfs/status')).body.data as StorageStatus;
    expect(status).toMatchObject({ used: nfs?.used, total: nfs?.total, avail: nfs?.avail, active: 1, enabled: 1 });
    const rows = (await api.get('/cluster/resources', { type: 'storage' })).body.data as Record<string, unknown>[];
    const nfsRows = rows.filter((r) => r.storage === 'nfs');
    expect(nfsRows.length).toBe(nodes.length);
    for (const r of nfsRows) expect(r).toMatchObject({ disk: nfs?.used, maxdisk: nfs?.total });

    // Growing the cluster's claims moves `used` by exactly that much.
    const grown = await api.post('/nodes/corral-1/qemu', { vmid: 712, name: 'disky3', memory: 512, scsi0: 'nfs:4' });
    expect((await waitTask(api, grown.body.data as string)).exitstatus).toBe('OK');
    await expect.poll(nfsClaim, { timeout: 20_000 }).toBe(9 * 1024 ** 3);
    const after = (await api.get('/nodes/corral-1/storage/nfs/status')).body.data as StorageStatus;
    expect(after.used).toBe(9 * 1024 ** 3);
    expect(after.avail).toBe((nfs?.avail ?? 0) - 4 * 1024 ** 3);
  }, 60_000);
});

describe('node uptime', () => {
  it('counts from the Ready condition’s transition in /nodes, /nodes/{n}/status and /cluster/resources', async () => {
    const nodes = (await kube('/api/v1/nodes')).items;
    const expected = (name: string) => {
      const ready = nodes.find((n) => n.metadata.name === name)?.status?.conditions?.find((c) => c.type === 'Ready');
      return Math.floor((Date.now() - Date.parse(ready?.lastTransitionTime ?? '')) / 1000);
    };
    const listed = (await api.get('/nodes')).body.data as { node: string; uptime: number }[];
    expect(listed.length).toBe(nodes.length);
    for (const n of listed) {
      expect(Number.isInteger(n.uptime)).toBe(true);
      expect(Math.abs(n.uptime - expected(n.node))).toBeLessThanOrEqual(2);
      expect(n.uptime).toBeGreaterThan(0);
    }
    const status = (await api.get('/nodes/corral-1/status')).body.data as { uptime: number };
    expect(Math.abs(status.uptime - expected('corral-1'))).toBeLessThanOrEqual(2);
    const rows = (await api.get('/cluster/resources', { type: 'node' })).body.data as {
      node: string;
      uptime: number;
    }[];
    for (const r of rows) expect(Math.abs(r.uptime - expected(r.node))).toBeLessThanOrEqual(2);
  });
});
