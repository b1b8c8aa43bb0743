/**
 * Clone into another namespace through /api on the embedded cluster (api.md "Clone & template"): each disk is a
 * CDI DataVolume in the target namespace cloning the source PVC across namespaces, the VM spec is copied under new
 * names, the task reports progress, the copy's disk content is the source's (the embedded cluster's volumes carry
 * it in `sim.corral.dev/disk-content`) and the two are independent afterwards; refusals are 4xx that say why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { taskEnd as endOfTask, eventually, startHarness, type Harness } from './harness';

const PVCS = '/persistentvolumeclaims';
const NAMESPACES = '/namespaces';
const SECRETS = '/secrets';
const VMS = 'kubevirt.io/virtualmachines';
const DVS = 'cdi.kubevirt.io/datavolumes';
const CONTENT = 'sim.corral.dev/disk-content';
const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  h.sim.store.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
});
afterAll(async () => {
  await h?.close();
});

const taskEnd = (id: string) => endOfTask(h, id, 60_000);

interface VmDoc {
  metadata: { labels?: Record<string, string> };
  spec: {
    runStrategy?: string;
    dataVolumeTemplates?: unknown[];
    template: {
      spec: {
        volumes: {
          name: string;
          dataVolume?: { name: string };
          persistentVolumeClaim?: { claimName: string };
          cloudInitNoCloud?: { secretRef?: { name: string } };
        }[];
        domain: { devices: { interfaces?: { name: string; macAddress?: string }[] } };
      };
    };
  };
}
const vmDoc = (ns: string, vm: string) => h.sim.store.get(VMS, ns, vm) as unknown as VmDoc | undefined;
/** The claim behind the VM's first disk volume, read from the cluster. */
const rootClaim = (ns: string, vm: string): string => {
  const v = vmDoc(ns, vm)?.spec.template.spec.volumes.find((x) => x.dataVolume || x.persistentVolumeClaim);
  return v?.dataVolume?.name ?? v?.persistentVolumeClaim?.claimName ?? '';
};
const writeContent = (ns: string, vm: string, content: string) =>
  h.sim.store.mutate(PVCS, ns, rootClaim(ns, vm), (pvc) => {
    pvc.metadata.annotations = { ...(pvc.metadata.annotations ?? {}), [CONTENT]: content };
  });
const readContent = (ns: string, vm: string) =>
  h.sim.store.get(PVCS, ns, rootClaim(ns, vm))?.metadata.annotations?.[CONTENT];
const phaseOf = (o: unknown) => (o as { status?: { phase?: string } } | undefined)?.status?.phase;
const status = async (ns: string, vm: string) =>
  ((await h.get(`/api/vms/${ns}/${vm}/row`)).body as { status: string }).status;

async function createVm(name: string): Promise<void> {
  const body = { name, import: IMAGE_URL, disk: '1G', mem: '1G', cpu: 1, sshKey: 'ssh-ed25519 AAAAC3Nz test@corral' };
  expect((await h.post('/api/vms', body)).status).toBe(201);
  await eventually(
    () =>
      phaseOf(h.sim.store.get(PVCS, 'tailvm', rootClaim('tailvm', name))) === 'Bound' &&
      phaseOf(h.sim.store.get(DVS, 'tailvm', rootClaim('tailvm', name))) === 'Succeeded',
    30_000,
    `${name}'s disk imported`,
  );
}

describe('clone into another namespace', () => {
  it('copies every disk with a cross-namespace DataVolume and the VM spec under new names; the copy is independent', async () => {
    await createVm('xsrc');
    writeContent('tailvm', 'xsrc', 'source bytes');
    const r = await h.post('/api/vms/tailvm/xsrc/clone', { target: 'xcopy', namespace: 'other', start: true });
    expect(r).toMatchObject({ status: 202, body: { target: 'xcopy', namespace: 'other', task: expect.any(String) } });
    const t = await taskEnd((r.body as { task: string }).task);
    expect(t).toMatchObject({ status: 'done', progress: 100 });
    expect(t.log).toMatch(/DataVolume other\/xcopy-\S+ ← PVC tailvm\/xsrc-\S+/);
    expect(t.log).toMatch(/CloneInProgress/);

    // The disk is a CDI clone across namespaces, owned by the new VM; the content is the source's.
    const claim = rootClaim('other', 'xcopy');
    expect(claim).toBe(rootClaim('tailvm', 'xsrc').replace(/^xsrc/, 'xcopy'));
    const dv = h.sim.store.get(DVS, 'other', claim) as unknown as {
      metadata: { ownerReferences: { kind: string; name: string }[] };
      spec: { source: { pvc: { namespace: string; name: string } } };
    };
    expect(dv.spec.source.pvc).toEqual({ namespace: 'tailvm', name: rootClaim('tailvm', 'xsrc') });
    expect(dv.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'VirtualMachine', name: 'xcopy' })]);
    expect(readContent('other', 'xcopy')).toBe('source bytes');

    // The spec is a copy under new names: cloud-init Secret copied, new MACs, no identity labels of the source.
    const src = vmDoc('tailvm', 'xsrc');
    const copy = vmDoc('other', 'xcopy');
    expect(copy?.metadata.labels?.['corral.dev/vm']).toBe('xcopy');
    expect(copy?.spec.dataVolumeTemplates).toBeUndefined();
    const secretOf = (d: VmDoc | undefined) =>
      d?.spec.template.spec.volumes.find((v) => v.cloudInitNoCloud)?.cloudInitNoCloud?.secretRef?.name ?? '';
    expect(secretOf(copy)).toBe(secretOf(src).replace(/^xsrc/, 'xcopy'));
    expect(h.sim.store.get(SECRETS, 'other', secretOf(copy))?.data).toEqual(
      h.sim.store.get(SECRETS, 'tailvm', secretOf(src))?.data,
    );
    const macs = (d: VmDoc | undefined) =>
      (d?.spec.template.spec.domain.devices.interfaces ?? []).map((i) => i.macAddress);
    for (const mac of macs(copy)) if (mac) expect(macs(src)).not.toContain(mac);
    await eventually(async () => (await status('other', 'xcopy')) === 'Running', 30_000, 'the clone started');
    expect(await status('tailvm', 'xsrc')).toBe('Stopped');

    // Independent both ways, and deleting the copy leaves the source whole.
    writeContent('other', 'xcopy', 'changed in the clone');
    expect(readContent('tailvm', 'xsrc')).toBe('source bytes');
    writeContent('tailvm', 'xsrc', 'changed in the source');
    expect(readContent('other', 'xcopy')).toBe('changed in the clone');
    expect((await h.del('/api/vms/other/xcopy')).status).toBeLessThan(300);
    await eventually(() => !h.sim.store.get(PVCS, 'other', claim), 30_000, 'the copy disk deleted');
    expect(readContent('tailvm', 'xsrc')).toBe('changed in the source');
    expect(phaseOf(h.sim.store.get(PVCS, 'tailvm', rootClaim('tailvm', 'xsrc')))).toBe('Bound');
    expect(h.sim.store.get(SECRETS, 'tailvm', secretOf(src))).toBeDefined();
  }, 120_000);

  it('refuses a missing target namespace, a taken name and a running source, creating nothing', async () => {
    await eventually(() => !h.sim.store.get(VMS, 'other', 'xcopy'), 30_000, 'xcopy gone');
    const missing = await h.post('/api/vms/tailvm/xsrc/clone', { target: 'xcopy', namespace: 'nowhere' });
    expect(missing.status).toBe(400);
    expect((missing.body as { error: string }).error).toMatch(/namespace: .*'nowhere'/);

    h.sim.store.create(VMS, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'taken', namespace: 'other' },
      spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
    });
    await eventually(async () => (await h.get('/api/vms/other/taken/row')).status === 200, 10_000, 'taken cached');
    const taken = await h.post('/api/vms/tailvm/xsrc/clone', { target: 'taken', namespace: 'other' });
    expect(taken.status).toBe(409);
    expect((taken.body as { error: string }).error).toMatch(/other\/taken already exists/);

    expect((await h.post('/api/vms/tailvm/xsrc/start')).status).toBe(200);
    await eventually(async () => (await status('tailvm', 'xsrc')) === 'Running', 30_000, 'source running');
    const running = await h.post('/api/vms/tailvm/xsrc/clone', { target: 'hot', namespace: 'other' });
    expect(running.status).toBe(409);
    expect((running.body as { error: string }).error).toMatch(/stop it first/);
    expect(h.sim.store.get(VMS, 'other', 'hot')).toBeUndefined();
    expect(h.sim.store.list(DVS, 'other').filter((d) => d.metadata.name?.startsWith('hot'))).toEqual([]);
    expect((await h.post('/api/vms/tailvm/xsrc/stop')).status).toBe(200);
  }, 90_000);

  it('fails the task and removes the partial copy when a disk copy goes away mid-clone', async () => {
    await eventually(async () => (await status('tailvm', 'xsrc')) === 'Stopped', 30_000, 'source stopped');
    const r = await h.post('/api/vms/tailvm/xsrc/clone', { target: 'broken', namespace: 'other' });
    expect(r.status).toBe(202);
    const disk = rootClaim('other', 'broken');
    expect(disk).toMatch(/^broken/);
    h.sim.store.delete(DVS, 'other', disk);
    const t = await taskEnd((r.body as { task: string }).task);
    expect(t).toMatchObject({ status: 'error', error: expect.stringMatching(/was deleted while it was copying/) });
    expect(t.log).toMatch(/removed the partial clone other\/broken/);
    await eventually(() => !h.sim.store.get(VMS, 'other', 'broken'), 30_000, 'partial clone removed');
    // The name is free again: a second clone succeeds.
    const again = await h.post('/api/vms/tailvm/xsrc/clone', { target: 'broken', namespace: 'other' });
    expect(again.status).toBe(202);
    expect(await taskEnd((again.body as { task: string }).task)).toMatchObject({ status: 'done' });
    expect(readContent('other', 'broken')).toBe('changed in the source');
  }, 90_000);
});
