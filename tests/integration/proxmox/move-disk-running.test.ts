/**
 * Storage moves of a RUNNING VM: `POST …/move_disk` and `POST /api/vms/{ns}/{name}/disks/{disk}/move` create a blank
 * DataVolume on the target class and set the VM's `updateVolumesStrategy: Migration` with the volume switched to it;
 * the embedded cluster's KubeVirt migrates the volume (a `kubevirt-workload-update-…` migration) while the same VMI
 * keeps running, and the content the old claim held ends up on the new one. A failed migration leaves the VM on its
 * old disk; with the feature gates off the move is refused before anything is created.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
const CONTENT = 'sim.corral.dev/disk-content';
const NS = 'tailvm';

const kube = (path: string) => `${h.sim.url}${path}`;
const claimUrl = (name: string) => kube(`/api/v1/namespaces/${NS}/persistentvolumeclaims/${name}`);
type Obj = {
  metadata: { uid: string; name: string; annotations?: Record<string, string> };
  spec: Record<string, unknown> & {
    storageClassName?: string;
    volumes?: Vol[];
    template?: { spec: { volumes: Vol[] } };
    vmiName?: string;
  };
  status?: Record<string, unknown> & { phase?: string };
};
type Vol = { name: string; dataVolume?: { name: string }; persistentVolumeClaim?: { claimName: string } };
async function get(url: string): Promise<{ status: number; body: Obj }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Obj };
}
const vmi = (name: string) => get(kube(`/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachineinstances/${name}`));
const vm = (name: string) => get(kube(`/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines/${name}`));
async function migrations(): Promise<Obj[]> {
  const res = await fetch(kube(`/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachineinstancemigrations`));
  return ((await res.json()) as { items: Obj[] }).items;
}
const claimOf = (v: Vol | undefined) => v?.dataVolume?.name ?? v?.persistentVolumeClaim?.claimName ?? '';
async function until(probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}
async function setDisabledGates(gates: string[]): Promise<void> {
  const res = await fetch(kube('/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt'), {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({ spec: { configuration: { developerConfiguration: { disabledFeatureGates: gates } } } }),
  });
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  for (const [vmid, name] of [
    [920, 'live-mover'],
    [921, 'live-abort'],
  ] as const) {
    const created = await api.post('/nodes/corral-1/qemu', { vmid, name, memory: 512, scsi0: 'local-lvm:1' });
    expect((await waitTask(api, created.body.data as string, 60_000)).exitstatus).toBe('OK');
    await until(async () => (await get(claimUrl(`${name}-scsi0`))).body.status?.phase === 'Bound');
    const res = await fetch(claimUrl(`${name}-scsi0`), {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { [CONTENT]: `written by the test into ${name}` } } }),
    });
    expect(res.status).toBe(200);
    // Keep the guest on the Intel nodes (corral-1/2): a migration needs a second node of the same CPU vendor.
    const pin = await fetch(kube(`/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines/${name}`), {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({
        spec: { template: { spec: { nodeSelector: { 'cpu-vendor.node.kubevirt.io/Intel': 'true' } } } },
      }),
    });
    expect(pin.status).toBe(200);
    const start = await api.post(`/nodes/corral-1/qemu/${vmid}/status/start`);
    expect((await waitTask(api, start.body.data as string, 60_000)).exitstatus).toBe('OK');
    await until(async () => (await vmi(name)).body.status?.phase === 'Running');
  }
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe('move_disk of a running VM', () => {
  it('migrates the volume to the new storage while the same VMI keeps running, and deletes the old one with delete=1', async () => {
    const running = (await vmi('live-mover')).body;
    // Watch the VMI through the whole move: it must never leave Running nor be replaced.
    let watching = true;
    const seen = new Set<string>();
    const watcher = (async () => {
      while (watching) {
        const now = await vmi('live-mover');
        seen.add(now.status === 200 ? `${now.body.metadata.uid}:${now.body.status?.phase}` : `gone:${now.status}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    })();
    const r = await api.post('/nodes/corral-1/qemu/920/move_disk', { disk: 'scsi0', storage: 'nfs', delete: 1 });
    expect(r.status, r.reason).toBe(200);
    const upid = r.body.data as string;
    expect(upid).toMatch(/:qmmove:920:root@pam!ci:$/);
    const task = await waitTask(api, upid, 60_000);
    watching = false;
    await watcher;
    expect(task.exitstatus).toBe('OK');
    expect([...seen]).toEqual([`${running.metadata.uid}:Running`]);

    const vmNow = (await vm('live-mover')).body;
    expect(vmNow.spec.updateVolumesStrategy).toBe('Migration');
    const copy = claimOf(vmNow.spec.template?.spec.volumes.find((v) => v.name === 'scsi0'));
    expect(copy).toMatch(/^live-mover-scsi0-mv[0-9a-z]+$/);
    const state = (vmNow.status?.volumeUpdateState as { volumeMigrationState: { migratedVolumes: unknown[] } })
      .volumeMigrationState;
    expect(state.migratedVolumes).toEqual([
      {
        volumeName: 'scsi0',
        sourcePVCInfo: { claimName: 'live-mover-scsi0', volumeMode: 'Filesystem' },
        destinationPVCInfo: { claimName: copy, volumeMode: 'Filesystem' },
      },
    ]);

    const after = (await vmi('live-mover')).body;
    expect(after.metadata.uid).toBe(running.metadata.uid);
    expect(claimOf(after.spec.volumes?.find((v) => v.name === 'scsi0'))).toBe(copy);
    expect(after.status?.migratedVolumes).toBeUndefined();
    const conditions = after.status?.conditions as { type: string }[];
    expect(conditions.map((c) => c.type)).not.toContain('VolumesChange');
    const volumeStatus = after.status?.volumeStatus as {
      name: string;
      persistentVolumeClaimInfo?: { claimName: string };
    }[];
    expect(volumeStatus.find((v) => v.name === 'scsi0')?.persistentVolumeClaimInfo?.claimName).toBe(copy);

    const update = (await migrations()).find((m) => m.spec.vmiName === 'live-mover');
    expect(update?.metadata.name).toMatch(/^kubevirt-workload-update-/);
    expect(update?.metadata.annotations).toHaveProperty('kubevirt.io/workloadUpdateMigration');
    expect(update?.status?.phase).toBe('Succeeded');

    const moved = (await get(claimUrl(copy))).body;
    expect(moved.spec.storageClassName).toBe('nfs');
    expect(moved.metadata.annotations?.[CONTENT]).toBe('written by the test into live-mover');
    await until(async () => (await get(claimUrl('live-mover-scsi0'))).status === 404);

    const config = (await api.get('/nodes/corral-1/qemu/920/config')).body.data as Record<string, string>;
    expect(config.scsi0).toMatch(new RegExp(`^nfs:${copy},`));
    const log = (await api.get(`/nodes/corral-1/tasks/${encodeURIComponent(upid)}/log`)).body.data as { t: string }[];
    expect(log.map((l) => l.t).join('\n')).toMatch(
      /by a volume migration[\s\S]*KubeVirt migrates scsi0[\s\S]*Succeeded[\s\S]*deleted the old volume[\s\S]*TASK OK/,
    );
  });

  it('a failed volume migration leaves the VM on its old disk and removes the copy (Corral REST)', async () => {
    const running = (await vmi('live-abort')).body;
    const before = new Set((await migrations()).map((m) => m.metadata.uid));
    const res = await fetch(`${h.corral.url}/api/vms/${NS}/live-abort/disks/scsi0/move`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ storageClass: 'nfs' }),
    });
    const body = (await res.json()) as { task: string };
    expect(res.status, JSON.stringify(body)).toBe(202);
    // Abort KubeVirt's migration as soon as it exists: deleting a migration in flight fails it.
    let update: Obj | undefined;
    await until(async () => {
      update = (await migrations()).find((m) => m.spec.vmiName === 'live-abort' && !before.has(m.metadata.uid));
      return update !== undefined;
    });
    const copy = claimOf((await vmi('live-abort')).body.spec.volumes?.find((v) => v.name === 'scsi0'));
    expect(copy).toMatch(/^live-abort-scsi0-mv/);
    const del = await fetch(
      kube(`/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachineinstancemigrations/${update!.metadata.name}`),
      { method: 'DELETE' },
    );
    expect(del.status).toBe(200);

    let task: { status: string; error?: string } = { status: 'running' };
    await until(async () => {
      task = (await (await fetch(`${h.corral.url}/api/tasks/${body.task}`)).json()) as typeof task;
      return task.status !== 'running';
    }, 60_000);
    expect(task.status).toBe('error');
    expect(task.error).toMatch(/volume migration kubevirt-workload-update-\w+ failed/);

    await until(
      async () =>
        claimOf((await vmi('live-abort')).body.spec.volumes?.find((v) => v.name === 'scsi0')) === 'live-abort-scsi0',
    );
    const after = (await vmi('live-abort')).body;
    expect(after.metadata.uid).toBe(running.metadata.uid);
    expect(after.status?.phase).toBe('Running');
    expect(after.status?.migratedVolumes).toBeUndefined();
    expect(claimOf((await vm('live-abort')).body.spec.template?.spec.volumes.find((v) => v.name === 'scsi0'))).toBe(
      'live-abort-scsi0',
    );
    await until(async () => (await get(claimUrl(copy))).status === 404);
    expect((await get(claimUrl('live-abort-scsi0'))).body.metadata.annotations?.[CONTENT]).toBe(
      'written by the test into live-abort',
    );
  });

  it('a hot-plugged disk of a running VM is refused: the volume migration moves the disks the VM started with', async () => {
    const added = await fetch(`${h.corral.url}/api/vms/${NS}/live-abort/volumes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ size: '1Gi' }),
    });
    const body = (await added.json()) as { task: string; disk?: string };
    expect(added.status, JSON.stringify(body)).toBe(202);
    let task: { status: string } = { status: 'running' };
    await until(async () => {
      task = (await (await fetch(`${h.corral.url}/api/tasks/${body.task}`)).json()) as typeof task;
      return task.status !== 'running';
    }, 60_000);
    expect(task.status).toBe('done');
    const hot = (await vm('live-abort')).body.spec.template?.spec.volumes.find(
      (v) => (v.dataVolume as { hotpluggable?: boolean } | undefined)?.hotpluggable,
    );
    expect(hot).toBeDefined();
    const res = await fetch(`${h.corral.url}/api/vms/${NS}/live-abort/disks/${hot!.name}/move`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ storageClass: 'nfs' }),
    });
    expect(res.status).toBe(409);
    expect(await res.text()).toContain(`disk ${hot!.name} is hot-plugged`);
  });

  it('with the VolumeMigration gate off the move is refused with the reason, before anything is created', async () => {
    await setDisabledGates(['VolumeMigration']);
    try {
      await until(async () => {
        const r = await api.post('/nodes/corral-1/qemu/921/move_disk', { disk: 'scsi0', storage: 'nfs' });
        return r.status === 500 && /VolumeMigration feature gate, which is off/.test(r.reason ?? '');
      }, 10_000);
      const rest = await fetch(`${h.corral.url}/api/vms/${NS}/live-abort/disks/scsi0/move`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ storageClass: 'nfs' }),
      });
      expect(rest.status).toBe(409);
      expect(await rest.text()).toMatch(/needs KubeVirt's VolumeMigration feature gate, which is off: enable it/);
      const res = await fetch(kube(`/apis/cdi.kubevirt.io/v1beta1/namespaces/${NS}/datavolumes`));
      const names = ((await res.json()) as { items: Obj[] }).items.map((d) => d.metadata.name);
      expect(names.filter((n) => n.startsWith('live-abort-scsi0-mv'))).toEqual([]);
    } finally {
      await setDisabledGates([]);
    }
  });
});
