/**
 * Storage moves: `POST …/move_disk {disk, storage, delete}` (Ansible proxmox_disk `state: moved`, bpg on a changed
 * datastore) and Corral's `POST /api/vms/{ns}/{name}/disks/{disk}/move` — a CDI clone onto the target StorageClass
 * followed as a `qmmove` task, after which the VM uses the copy: the data the old claim held (the embedded cluster
 * records a disk's content on its claim) is on the new one, on the new class. A running VM's move is
 * move-disk-running.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
const CONTENT = 'sim.corral.dev/disk-content';

const claimUrl = (name: string) => `${h.sim.url}/api/v1/namespaces/tailvm/persistentvolumeclaims/${name}`;
interface Claim {
  metadata: { annotations: Record<string, string> };
  spec: { storageClassName: string; resources: { requests: { storage: string } } };
  status?: { phase?: string };
}
async function claim(name: string): Promise<{ status: number; body: Claim }> {
  const res = await fetch(claimUrl(name));
  return { status: res.status, body: (await res.json()) as Claim };
}
async function vmVolumes(name: string): Promise<{ name: string; dataVolume?: { name: string } }[]> {
  const res = await fetch(`${h.sim.url}/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/${name}`);
  return (
    (await res.json()) as {
      spec: { template: { spec: { volumes: { name: string; dataVolume?: { name: string } }[] } } };
    }
  ).spec.template.spec.volumes;
}
async function until(probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  for (const [vmid, name] of [
    [910, 'mover'],
    [911, 'mover-rest'],
  ] as const) {
    const created = await api.post('/nodes/corral-1/qemu', { vmid, name, memory: 512, scsi0: 'local-lvm:1' });
    expect((await waitTask(api, created.body.data as string, 60_000)).exitstatus).toBe('OK');
    await until(async () => (await claim(`${name}-scsi0`)).body.status?.phase === 'Bound');
    // "Data" on the disk: the embedded cluster keeps what a volume holds in this annotation and clones copy it.
    const res = await fetch(claimUrl(`${name}-scsi0`), {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { [CONTENT]: `written by the test into ${name}` } } }),
    });
    expect(res.status).toBe(200);
  }
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('move_disk', () => {
  it('clones the disk onto the new storage, switches the VM to it and deletes the old one with delete=1', async () => {
    const before = (await claim('mover-scsi0')).body;
    expect(before.spec.storageClassName).toBe('longhorn');
    const r = await api.post('/nodes/corral-1/qemu/910/move_disk', { disk: 'scsi0', storage: 'nfs', delete: 1 });
    expect(r.status, r.reason).toBe(200);
    const upid = r.body.data as string;
    expect(upid).toMatch(/:qmmove:910:root@pam!ci:$/);
    expect((await waitTask(api, upid, 60_000)).exitstatus).toBe('OK');

    const volume = (await vmVolumes('mover')).find((v) => v.name === 'scsi0');
    const copy = volume?.dataVolume?.name ?? '';
    expect(copy).toMatch(/^mover-scsi0-mv[0-9a-z]+$/);
    const moved = (await claim(copy)).body;
    expect(moved.spec.storageClassName).toBe('nfs');
    expect(moved.metadata.annotations[CONTENT]).toBe('written by the test into mover');
    expect(moved.spec.resources.requests.storage).toBe(before.spec.resources.requests.storage);
    await until(async () => (await claim('mover-scsi0')).status === 404);

    const config = (await api.get('/nodes/corral-1/qemu/910/config')).body.data as Record<string, string>;
    expect(config.scsi0).toMatch(new RegExp(`^nfs:${copy},`));
    const log = (await api.get(`/nodes/corral-1/tasks/${encodeURIComponent(upid)}/log`)).body.data as { t: string }[];
    expect(log.map((l) => l.t).join('\n')).toMatch(/cloning mover-scsi0[\s\S]*deleted the old volume[\s\S]*TASK OK/);
  });

  it("refuses what PVE refuses: the same storage, an unknown disk or storage, a cdrom's storage", async () => {
    const same = await api.post('/nodes/corral-1/qemu/910/move_disk', { disk: 'scsi0', storage: 'nfs' });
    expect([same.status, same.reason]).toEqual([500, "you can't move to the same storage with same format"]);
    const noDisk = await api.post('/nodes/corral-1/qemu/910/move_disk', { disk: 'scsi7', storage: 'longhorn' });
    expect(noDisk.body.errors).toEqual({ disk: "disk 'scsi7' does not exist" });
    const noStorage = await api.post('/nodes/corral-1/qemu/910/move_disk', { disk: 'scsi0', storage: 'ceph' });
    expect(noStorage.body.errors).toEqual({ storage: "storage 'ceph' does not exist" });
    const iso = await api.post('/nodes/corral-1/qemu/910/move_disk', { disk: 'scsi0', storage: 'local' });
    expect(iso.body.errors).toEqual({ storage: "storage 'local' does not support vm images" });
    const other = await api.post('/nodes/corral-1/qemu/910/move_disk', {
      disk: 'scsi0',
      storage: 'longhorn',
      'target-vmid': 911,
    });
    expect(Object.keys(other.body.errors ?? {})).toEqual(['target-vmid']);
  });

  it('Corral REST: POST /api/vms/{ns}/{name}/disks/{disk}/move keeps the old volume unless asked', async () => {
    const res = await fetch(`${h.corral.url}/api/vms/tailvm/mover-rest/disks/scsi0/move`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ storageClass: 'nfs' }),
    });
    const body = (await res.json()) as { task: string };
    expect(res.status, JSON.stringify(body)).toBe(202);
    let task: { status: string; progress: number } = { status: 'running', progress: 0 };
    await until(async () => {
      task = (await (await fetch(`${h.corral.url}/api/tasks/${body.task}`)).json()) as typeof task;
      return task.status !== 'running';
    }, 60_000);
    expect(task).toMatchObject({ status: 'done', progress: 100 });
    const copy = (await vmVolumes('mover-rest')).find((v) => v.name === 'scsi0')?.dataVolume?.name ?? '';
    expect((await claim(copy)).body.metadata.annotations[CONTENT]).toBe('written by the test into mover-rest');
    expect((await claim('mover-rest-scsi0')).status).toBe(200);

    const bad = await fetch(`${h.corral.url}/api/vms/tailvm/mover-rest/disks/scsi0/move`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ storageClass: 'nfs', colour: 'red' }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('colour');
    const unknown = await fetch(`${h.corral.url}/api/vms/tailvm/mover-rest/disks/scsi0/move`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ storageClass: 'ceph' }),
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.text()).toContain("no StorageClass named 'ceph'");
  });
});
