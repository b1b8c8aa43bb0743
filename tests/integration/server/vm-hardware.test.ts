/**
 * Hardware and options through /api on the embedded cluster (api.md "Hardware operations", `GET /api/nads`):
 * success shapes, the 400/404/409 cases, live vs cold scale, hot-plugged disks and NICs that are still there after
 * a restart, expansion refused by a StorageClass, options that wait for a restart shown as pending.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCorralClient } from '@/server/sdk';
import { eventually, startHarness, taskDone as doneTask, type Harness } from './harness';

const VMS = 'kubevirt.io/virtualmachines';
const VMIS = 'kubevirt.io/virtualmachineinstances';
const PVCS = '/persistentvolumeclaims';
const NADS = 'k8s.cni.cncf.io/network-attachment-definitions';
const SCS = 'storage.k8s.io/storageclasses';
const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  const nad = (namespace: string, name: string, config: Record<string, unknown>) =>
    h.sim.store.create(NADS, {
      apiVersion: 'k8s.cni.cncf.io/v1',
      kind: 'NetworkAttachmentDefinition',
      metadata: { name, namespace },
      spec: { config: JSON.stringify({ cniVersion: '0.3.1', name, ...config }) },
    });
  nad('tailvm', 'lan', { type: 'bridge', bridge: 'br0', vlan: 5, ipam: {} });
  nad('other', 'dmz', { plugins: [{ type: 'macvlan', master: 'eth1' }] });
  h.sim.store.create(SCS, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'fixed' },
    provisioner: 'fixed.csi.example',
    allowVolumeExpansion: false,
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

const taskDone = (id: string) => doneTask(h, id);
const errorOf = (r: { body: unknown }) => (r.body as { error: string }).error;
type Dict = Record<string, unknown>;
const vmSpec = (name: string) => (h.sim.store.get(VMS, 'tailvm', name) as unknown as { spec: Dict }).spec;
const vmi = (name: string) =>
  h.sim.store.get(VMIS, 'tailvm', name) as unknown as
    { metadata: { uid: string }; spec: Dict; status: Dict } | undefined;
const templateDomain = (name: string) =>
  ((vmSpec(name).template as Dict).spec as Dict).domain as {
    cpu?: Dict;
    memory?: Dict;
    devices: { disks: Dict[]; interfaces?: Dict[] };
    firmware?: Dict;
  };
const status = async (vm: string) => ((await h.get(`/api/vms/tailvm/${vm}/row`)).body as { status: string }).status;
const running = (vm: string) => eventually(async () => (await status(vm)) === 'Running', 30_000, `${vm} running`);

async function createVm(name: string, source: Dict, start = true): Promise<void> {
  const body = { name, cpu: 1, mem: '1G', disk: '1G', start, ...source };
  const created = await h.post('/api/vms', body);
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  if (start) await running(name);
}

interface Hardware {
  running: boolean;
  cpu: { vcpus: number; sockets: number; maxSockets: number };
  memory: { size: string; bootSize: string };
  disks: {
    name: string;
    claim: string;
    size: string;
    storageClass: string;
    hotplugged: boolean;
    canExpand: boolean;
    expand: Dict;
    detach: Dict;
  }[];
  nics: { name: string; network: string; mac: string; model: string }[];
  options: { runStrategy: string; firmware: string; secureBoot: boolean; description: string; bootOrder: string[] };
  pending: { field: string; current: string; pending: string }[];
  controls: Record<string, { allowed: boolean; reason: string }>;
}
const hardware = async (vm: string) => {
  const r = await h.get(`/api/vms/tailvm/${vm}/hardware`);
  expect(r.status).toBe(200);
  return r.body as Hardware;
};

describe('GET /api/nads', () => {
  it('lists NetworkAttachmentDefinitions with type, bridge and VLAN; filters by namespace', async () => {
    const all = await h.get('/api/nads');
    expect(all.status).toBe(200);
    expect(all.body).toEqual([
      { name: 'dmz', namespace: 'other', type: 'macvlan', bridge: 'eth1' },
      { name: 'lan', namespace: 'tailvm', type: 'bridge', bridge: 'br0', vlan: 5 },
    ]);
    expect((await h.get('/api/nads?namespace=tailvm')).body).toEqual([
      { name: 'lan', namespace: 'tailvm', type: 'bridge', bridge: 'br0', vlan: 5 },
    ]);
    expect((await h.get('/api/nads?namespace=Bad_NS')).status).toBe(400);
    expect((await h.get('/api/nads?colour=red')).status).toBe(400);
    // The typed SDK reaches the same procedures.
    const sdk = createCorralClient(h.url);
    expect(await sdk.nads.list.query({ namespace: 'other' })).toEqual([
      { name: 'dmz', namespace: 'other', type: 'macvlan', bridge: 'eth1' },
    ]);
    await expect(sdk.hardware.get.query({ namespace: 'tailvm', name: 'nope' })).rejects.toThrow(/not found/);
  });
});

describe('volumes, NICs and expand on a running VM', () => {
  it('hot-plugs disks and adds a NIC that are all still there after a restart; detach, delete, expand', async () => {
    await createVm('hw1', { containerDisk: 'quay.io/containerdisks/fedora:42' });
    const before = await hardware('hw1');
    expect(before).toMatchObject({ running: true, cpu: { vcpus: 1 }, memory: { size: '1Gi' }, pending: [] });
    expect(before.options.runStrategy).toBe('Always');

    // Bad input: 400 naming the field; unknown VM 404; a sata disk cannot be hot-plugged (409).
    for (const [body, field] of [
      [{ size: '10' }, /^size: /],
      [{ size: '512Mi' }, /^size: must be between 1Gi and 64Ti/],
      [{ size: '2Gi', bus: 'ide' }, /^bus: /],
      [{ size: '2Gi', storageClass: 'Not_A_Name' }, /^storageClass: /],
      [{ size: '2Gi', colour: 'red' }, /colour/],
      [{}, /^size: /],
    ] as const) {
      const r = await h.post('/api/vms/tailvm/hw1/volumes', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(r)).toMatch(field);
    }
    const noClass = await h.post('/api/vms/tailvm/hw1/volumes', { size: '2Gi', storageClass: 'nope' });
    expect(noClass.status).toBe(400);
    expect(errorOf(noClass)).toContain("no StorageClass 'nope'");
    expect((await h.post('/api/vms/tailvm/missing/volumes', { size: '2Gi' })).status).toBe(404);
    const sata = await h.post('/api/vms/tailvm/hw1/volumes', { size: '2Gi', bus: 'sata' });
    expect(sata.status).toBe(409);
    expect(errorOf(sata)).toMatch(/running.*sata/);
    expect(h.sim.store.get(PVCS, 'tailvm', 'hw1-disk-1')).toBeUndefined();

    // Two hot-plugged disks, attached live.
    const d1 = await h.post('/api/vms/tailvm/hw1/volumes', { size: '2Gi' });
    expect(d1).toMatchObject({ status: 202, body: { pvc: 'hw1-disk-1', disk: 'disk-1', task: expect.any(String) } });
    await taskDone((d1.body as { task: string }).task);
    const d2 = await h.post('/api/vms/tailvm/hw1/volumes', { size: '1Gi', storageClass: 'nfs', bus: 'virtio' });
    expect(d2).toMatchObject({ status: 202, body: { pvc: 'hw1-disk-2' } });
    await taskDone((d2.body as { task: string }).task);
    const d3 = await h.post('/api/vms/tailvm/hw1/volumes', { size: '1Gi', storageClass: 'fixed' });
    expect(d3).toMatchObject({ status: 202, body: { pvc: 'hw1-disk-3' } });
    await taskDone((d3.body as { task: string }).task);
    const attached = (vmi('hw1')?.status.volumeStatus as Dict[]).filter((s) => String(s.name).startsWith('disk-'));
    expect(attached.map((s) => [s.name, s.phase])).toEqual([
      ['disk-1', 'Ready'],
      ['disk-2', 'Ready'],
      ['disk-3', 'Ready'],
    ]);
    const hw = await hardware('hw1');
    expect(hw.disks.find((d) => d.claim === 'hw1-disk-2')).toMatchObject({
      name: 'disk-2',
      size: '1Gi',
      storageClass: 'nfs',
      hotplugged: true,
      canExpand: true,
      detach: { allowed: true },
    });
    expect(hw.disks.find((d) => d.claim === 'hw1-disk-3')).toMatchObject({
      canExpand: false,
      expand: { allowed: false, reason: 'storage class fixed cannot expand' },
    });
    expect(hw.disks.find((d) => d.name === 'rootdisk')?.detach).toMatchObject({
      allowed: false,
      reason: expect.stringMatching(/^stop the VM first/),
    });

    // Expand: grows; a shrink is a 400; a class without allowVolumeExpansion is a 409 naming it.
    const grown = await h.post('/api/vms/tailvm/hw1/expand', { pvc: 'hw1-disk-1', size: '3Gi' });
    expect(grown).toMatchObject({ status: 202, body: { status: 'ok', size: '3Gi', task: expect.any(String) } });
    await taskDone((grown.body as { task: string }).task);
    expect((await hardware('hw1')).disks.find((d) => d.claim === 'hw1-disk-1')?.size).toBe('3Gi');
    const shrink = await h.post('/api/vms/tailvm/hw1/expand', { pvc: 'hw1-disk-1', size: '2Gi' });
    expect(shrink.status).toBe(400);
    expect(errorOf(shrink)).toMatch(/^size: 2Gi is smaller than hw1-disk-1's 3Gi/);
    const fixed = await h.post('/api/vms/tailvm/hw1/expand', { pvc: 'hw1-disk-3', size: '5Gi' });
    expect(fixed.status).toBe(409);
    expect(errorOf(fixed)).toContain('storage class fixed cannot expand');
    expect((await h.post('/api/vms/tailvm/hw1/expand', { pvc: 'nope', size: '5Gi' })).status).toBe(404);
    expect((await h.post('/api/vms/tailvm/hw1/expand', { pvc: 'hw1-disk-1' })).status).toBe(400);
    expect((await h.post('/api/vms/tailvm/hw1/expand', { pvc: 'hw1-disk-1', size: 5 })).status).toBe(400);

    // A NIC on the lan NAD: saved in the spec, pending until the restart.
    for (const body of [{ nad: 'Bad_Name' }, { nad: 'lan', model: 'ne2000' }, { nad: 'lan', iface: 'eth 1' }, {}]) {
      expect((await h.post('/api/vms/tailvm/hw1/nics', body)).status, JSON.stringify(body)).toBe(400);
    }
    const missing = await h.post('/api/vms/tailvm/hw1/nics', { nad: 'wan' });
    expect(missing.status).toBe(400);
    expect(errorOf(missing)).toContain("no NetworkAttachmentDefinition 'wan' in namespace tailvm");
    const nic = await h.post('/api/vms/tailvm/hw1/nics', { nad: 'lan', model: 'e1000' });
    expect(nic).toMatchObject({
      status: 200,
      body: { status: 'ok', iface: 'net1', mac: expect.stringMatching(/^02(:[0-9a-f]{2}){5}$/), pending: true },
    });
    await taskDone((nic.body as { task: string }).task);
    expect((await h.post('/api/vms/tailvm/hw1/nics', { nad: 'lan', iface: 'net1' })).status).toBe(409);
    expect((await h.post('/api/vms/tailvm/missing/nics', { nad: 'lan' })).status).toBe(404);
    const pending = await hardware('hw1');
    expect(pending.pending).toContainEqual({ field: 'nic net1', current: 'absent', pending: 'added' });
    expect(pending.nics.find((n) => n.name === 'net1')).toMatchObject({ network: 'lan', model: 'e1000' });

    // Restart: the hot-plugged disks and the NIC are in the new instance.
    const uid = vmi('hw1')?.metadata.uid;
    expect((await h.post('/api/vms/tailvm/hw1/restart')).status).toBe(200);
    await eventually(() => vmi('hw1')?.metadata.uid !== uid && vmi('hw1'), 30_000, 'new instance');
    await running('hw1');
    const fresh = vmi('hw1');
    const vols = (fresh?.spec.volumes as Dict[]).map((v) => v.name);
    expect(vols).toEqual(expect.arrayContaining(['disk-1', 'disk-2', 'disk-3']));
    const ifaces = (((fresh?.spec.domain as Dict).devices as Dict).interfaces as Dict[]).map((i) => i.name);
    expect(ifaces).toContain('net1');
    expect((await hardware('hw1')).pending).toEqual([]);

    // Remove the NIC; detach one disk keeping its PVC, another deleting it.
    expect((await h.del('/api/vms/tailvm/hw1/nics/nope')).status).toBe(404);
    const gone = await h.del('/api/vms/tailvm/hw1/nics/net1');
    expect(gone).toMatchObject({ status: 200, body: { status: 'removed', pending: true } });
    expect(templateDomain('hw1').devices.interfaces?.map((i) => i.name)).not.toContain('net1');
    expect((await h.del('/api/vms/tailvm/hw1/volumes/hw1-disk-2?delete=maybe')).status).toBe(400);
    expect((await h.del('/api/vms/tailvm/hw1/volumes/nope')).status).toBe(404);
    const notHot = await h.del('/api/vms/tailvm/hw1/volumes/rootdisk');
    expect(notHot.status).toBe(409);
    expect(errorOf(notHot)).toContain('stop the VM first');
    const kept = await h.del('/api/vms/tailvm/hw1/volumes/hw1-disk-1');
    expect(kept).toMatchObject({ status: 200, body: { status: 'removed', disk: 'disk-1' } });
    await taskDone((kept.body as { task: string }).task);
    const purged = await h.del('/api/vms/tailvm/hw1/volumes/hw1-disk-2?delete=true');
    expect(purged.status).toBe(200);
    await taskDone((purged.body as { task: string }).task);
    expect(templateDomain('hw1').devices.disks.map((d) => d.name)).not.toContain('disk-1');
    expect(h.sim.store.get(PVCS, 'tailvm', 'hw1-disk-1')).toBeDefined();
    await eventually(() => !h.sim.store.get(PVCS, 'tailvm', 'hw1-disk-2'), 15_000, 'hw1-disk-2 deleted');
    await eventually(
      () => !(vmi('hw1')?.status.volumeStatus as Dict[]).some((s) => s.name === 'disk-1'),
      15_000,
      'disk-1 unplugged',
    );
  }, 120_000);
});

describe('scale', () => {
  it('hot-plugs a live-migratable VM, refuses the floor and capacity, validates input', async () => {
    await createVm('sc1', { containerDisk: 'quay.io/containerdisks/fedora:42' });
    const live = await h.post('/api/vms/tailvm/sc1/scale', { cpu: 2, mem: '2G' });
    expect(live).toMatchObject({ status: 202, body: { status: 'ok', mode: 'live', cpu: 2, mem: '2Gi' } });
    await taskDone((live.body as { task: string }).task);
    expect((vmi('sc1')?.status.currentCPUTopology as Dict).sockets).toBe(2);
    expect((vmi('sc1')?.status.memory as Dict).guestCurrent).toBe('2Gi');
    expect(templateDomain('sc1')).toMatchObject({ cpu: { sockets: 2 }, memory: { guest: '2Gi' } });
    const hw = await hardware('sc1');
    expect(hw).toMatchObject({
      cpu: { vcpus: 2, maxSockets: 4 },
      memory: { size: '2Gi', bootSize: '1Gi' },
      pending: [],
    });
    expect(hw.controls.liveScale).toMatchObject({ allowed: true });

    const floorMem = await h.post('/api/vms/tailvm/sc1/scale', { mem: '512Mi' });
    expect(floorMem.status).toBe(409);
    expect(errorOf(floorMem)).toMatch(/running: 512Mi is below its hot-plug floor of 1Gi/);
    const floorCpu = await h.post('/api/vms/tailvm/sc1/scale', { cpu: 1 });
    expect(floorCpu.status).toBe(409);
    expect(errorOf(floorCpu)).toMatch(/below its hot-plug floor of 2/);
    const tooMany = await h.post('/api/vms/tailvm/sc1/scale', { cpu: 64 });
    expect(tooMany.status).toBe(409);
    expect(errorOf(tooMany)).toMatch(/64 vCPUs exceed the largest node's capacity of 32/);
    const tooBig = await h.post('/api/vms/tailvm/sc1/scale', { mem: '1Ti' });
    expect(tooBig.status).toBe(409);
    expect(errorOf(tooBig)).toMatch(/1Ti of memory exceeds .*capacity/);
    expect(templateDomain('sc1')).toMatchObject({ cpu: { sockets: 2 }, memory: { guest: '2Gi' } });

    // A change already waiting for a restart (a new NIC) does not stop a later live scale.
    expect((await h.post('/api/vms/tailvm/sc1/nics', { nad: 'lan' })).body).toMatchObject({ pending: true });
    await eventually(async () => (await hardware('sc1')).pending.length > 0, 10_000, 'the NIC pending');
    const again = await h.post('/api/vms/tailvm/sc1/scale', { cpu: 3 });
    expect(again).toMatchObject({ status: 202, body: { mode: 'live', cpu: 3 } });
    await taskDone((again.body as { task: string }).task);
    expect((vmi('sc1')?.status.currentCPUTopology as Dict).sockets).toBe(3);
    expect((await hardware('sc1')).pending).toEqual([{ field: 'nic net1', current: 'absent', pending: 'added' }]);

    for (const [body, field] of [
      [{}, /give cpu, mem or both/],
      [{ cpu: 0 }, /^cpu: must be at least 1/],
      [{ cpu: 1.5 }, /^cpu: /],
      [{ cpu: '2' }, /^cpu: /],
      [{ mem: '10' }, /^mem: /],
      [{ mem: '8Ti' }, /^mem: must be between/],
      [{ cpu: 2, colour: 1 }, /colour/],
    ] as const) {
      const r = await h.post('/api/vms/tailvm/sc1/scale', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(r)).toMatch(field);
    }
    expect((await h.post('/api/vms/tailvm/missing/scale', { cpu: 2 })).status).toBe(404);
  }, 90_000);

  it('restarts a VM that cannot hot-plug, and saves the size of a stopped one for its next start', async () => {
    await createVm('sc2', { import: IMAGE_URL });
    const uid = vmi('sc2')?.metadata.uid;
    const cold = await h.post('/api/vms/tailvm/sc2/scale', { cpu: 3, mem: '1536Mi' });
    expect(cold).toMatchObject({ status: 202, body: { mode: 'restart', cpu: 3, mem: '1536Mi' } });
    expect((cold.body as { reason: string }).reason).toMatch(/not live-migratable/);
    const t = await taskDone((cold.body as { task: string }).task);
    expect(t.log).toMatch(/stop[\s\S]*saved 3 vCPU\(s\), 1536Mi[\s\S]*start/);
    expect(await status('sc2')).toBe('Running');
    expect(vmi('sc2')?.metadata.uid).not.toBe(uid);
    expect(((vmi('sc2')?.spec.domain as Dict).cpu as Dict).sockets).toBe(3);

    await createVm('sc3', { containerDisk: 'quay.io/containerdisks/fedora:42' }, false);
    const offline = await h.post('/api/vms/tailvm/sc3/scale', { cpu: 2 });
    expect(offline).toMatchObject({ status: 202, body: { mode: 'offline', cpu: 2, mem: '1Gi' } });
    await taskDone((offline.body as { task: string }).task);
    expect(templateDomain('sc3').cpu).toMatchObject({ sockets: 2 });
    expect(await status('sc3')).toBe('Stopped');
    const same = await h.post('/api/vms/tailvm/sc3/scale', { cpu: 2 });
    expect(same).toMatchObject({ status: 202, body: { mode: 'unchanged' } });
  }, 90_000);
});

describe('options', () => {
  it('applies run strategy and description, keeps firmware and boot order pending on a running VM', async () => {
    await createVm('op1', { containerDisk: 'quay.io/containerdisks/fedora:42' });
    for (const [body, field] of [
      [{}, /nothing to change/],
      [{ firmware: 'efi' }, /^firmware: must be bios or uefi/],
      [{ runStrategy: 'Sometimes' }, /^runStrategy: /],
      [{ secureBoot: 'yes' }, /^secureBoot: /],
      [{ secureBoot: true, firmware: 'bios' }, /^secureBoot: needs firmware uefi/],
      [{ bootOrder: ['rootdisk', 'rootdisk'] }, /^bootOrder: must not name a device twice/],
      [{ bootOrder: ['rootdisk', 'nope'] }, /^bootOrder: .*no disk or NIC named nope/],
      [{ description: 'x'.repeat(9000) }, /^description: must be at most 8192 bytes/],
      [{ onboot: true }, /onboot/],
    ] as const) {
      const r = await h.post('/api/vms/tailvm/op1/options', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(errorOf(r)).toMatch(field);
    }
    const halt = await h.post('/api/vms/tailvm/op1/options', { runStrategy: 'Halted' });
    expect(halt.status).toBe(409);
    expect(errorOf(halt)).toMatch(/is Running: runStrategy Halted would stop it now/);
    expect((await h.post('/api/vms/tailvm/missing/options', { description: 'x' })).status).toBe(404);

    const set = await h.post('/api/vms/tailvm/op1/options', {
      runStrategy: 'Manual',
      description: 'web frontend',
      firmware: 'uefi',
      secureBoot: true,
      bootOrder: [],
    });
    expect(set).toMatchObject({
      status: 200,
      body: { status: 'ok', applied: ['runStrategy', 'description'], pending: ['firmware', 'bootOrder'] },
    });
    expect(vmSpec('op1').runStrategy).toBe('Manual');
    expect(templateDomain('op1').firmware).toEqual({ bootloader: { efi: { secureBoot: true } } });
    const hw = await hardware('op1');
    expect(hw.options).toMatchObject({
      runStrategy: 'Manual',
      firmware: 'uefi',
      secureBoot: true,
      description: 'web frontend',
      bootOrder: [],
    });
    expect(hw.pending.map((p) => p.field)).toEqual(expect.arrayContaining(['firmware', 'bootOrder']));
    expect(hw.pending.find((p) => p.field === 'firmware')).toEqual({
      field: 'firmware',
      current: 'bios',
      pending: 'uefi (secure boot)',
    });
    expect(await status('op1')).toBe('Running');

    // A stopped VM: a starting run strategy is a power action (409); firmware applies at once.
    expect((await h.post('/api/vms/tailvm/op1/stop')).status).toBe(200);
    await eventually(async () => (await status('op1')) === 'Stopped', 30_000, 'op1 stopped');
    const start = await h.post('/api/vms/tailvm/op1/options', { runStrategy: 'Always' });
    expect(start.status).toBe(409);
    expect(errorOf(start)).toMatch(/is Stopped: runStrategy Always would start it now/);
    const bios = await h.post('/api/vms/tailvm/op1/options', { firmware: 'bios', description: '' });
    expect(bios).toMatchObject({ status: 200, body: { applied: ['firmware', 'description'], pending: [] } });
    expect((await hardware('op1')).options).toMatchObject({ firmware: 'bios', secureBoot: false, description: '' });
  }, 90_000);
});

describe('the demo fleet', () => {
  let demo: Harness;
  beforeAll(async () => {
    demo = await startHarness({ fleet: 'demo', speed: 50 });
  }, 60_000);
  afterAll(async () => {
    await demo?.close();
  });

  it("ships a usable 'lan' bridge network for a second NIC", async () => {
    const nads = await demo.get('/api/nads?namespace=tailvm');
    expect(nads.body).toContainEqual({ name: 'lan', namespace: 'tailvm', type: 'bridge', bridge: 'br0' });
    const hw = (await demo.get('/api/vms/tailvm/web/hardware')).body as Hardware;
    expect(hw.nics.map((n) => n.network)).toContain('lan');
    const added = await demo.post('/api/vms/tailvm/files/nics', { nad: 'lan' });
    expect(added).toMatchObject({ status: 200, body: { iface: expect.stringMatching(/^net\d+$/) } });
  }, 60_000);
});
