import { describe, expect, it } from 'vitest';
import { buildComposedVm, bytesQuantity, plannedClaim, type VmBlueprint } from './vm-hardware';
import { snapshotObjectName } from './vm-snapshots';

const G = 1024 ** 3;

const blueprint: VmBlueprint = {
  name: 'web',
  namespace: 'tailvm',
  sockets: 2,
  cores: 4,
  memoryBytes: 3 * G,
  disks: [
    {
      name: 'scsi0',
      bus: 'scsi',
      cdrom: false,
      bootOrder: 1,
      backing: { blank: { sizeBytes: 32 * G, storageClass: 'longhorn' } },
    },
    { name: 'ide2', bus: 'sata', cdrom: true, bootOrder: 2, backing: { claim: 'debian-12-iso' } },
  ],
  nics: [
    { name: 'net0', model: 'virtio', mac: 'BC:24:11:00:00:01', network: 'pod' },
    { name: 'net1', model: 'e1000', mac: 'BC:24:11:00:00:02', network: 'lan' },
  ],
  labels: { 'corral.io/proxmox-vmid': '100' },
  annotations: { note: 'x' },
  start: false,
};

describe('buildComposedVm', () => {
  const vm = buildComposedVm(blueprint);
  const tspec = (vm.spec as { template: { spec: Record<string, unknown> } }).template.spec;

  it('writes CPU topology, memory and run strategy', () => {
    expect(vm.metadata).toMatchObject({
      name: 'web',
      namespace: 'tailvm',
      labels: { 'corral.io/proxmox-vmid': '100', 'corral.dev/vm': 'web' },
      annotations: { note: 'x' },
    });
    expect((vm.spec as { runStrategy: string }).runStrategy).toBe('Halted');
    expect(tspec.domain).toMatchObject({ cpu: { sockets: 2, cores: 4, threads: 1 }, memory: { guest: '3Gi' } });
  });

  it('maps disks to DataVolumes or existing claims, CD-ROMs read-only, with boot order', () => {
    expect((tspec.domain as { devices: { disks: unknown[] } }).devices.disks).toEqual([
      { name: 'scsi0', disk: { bus: 'scsi' }, bootOrder: 1 },
      { name: 'ide2', cdrom: { bus: 'sata', readonly: true }, bootOrder: 2 },
    ]);
    expect(tspec.volumes).toEqual([
      { name: 'scsi0', dataVolume: { name: 'web-scsi0' } },
      { name: 'ide2', persistentVolumeClaim: { claimName: 'debian-12-iso', readOnly: true } },
    ]);
    expect(plannedClaim('web', blueprint.disks[0]!)).toBe('web-scsi0');
  });

  it('puts the first NIC on the pod network and others on Multus, with their MACs', () => {
    expect((tspec.domain as { devices: { interfaces: unknown[] } }).devices.interfaces).toEqual([
      { name: 'net0', model: 'virtio', macAddress: 'BC:24:11:00:00:01', masquerade: {} },
      { name: 'net1', model: 'e1000', macAddress: 'BC:24:11:00:00:02', bridge: {} },
    ]);
    expect(tspec.networks).toEqual([
      { name: 'net0', pod: {} },
      { name: 'net1', multus: { networkName: 'lan' } },
    ]);
  });

  it('writes sizes as exact quantities', () => {
    expect(bytesQuantity(4 * G)).toBe('4Gi');
    expect(bytesQuantity(1536 * 1024 * 1024)).toBe('1536Mi');
    expect(bytesQuantity(1000)).toBe('1000');
  });
});

describe('snapshotObjectName', () => {
  it('keeps DNS-safe names and disambiguates the rest', () => {
    expect(snapshotObjectName('web', 'before-upgrade')).toBe('web-before-upgrade');
    const a = snapshotObjectName('web', 'Before_Upgrade');
    expect(a).toMatch(/^web-before-upgrade-[0-9a-f]{6}$/);
    expect(a).not.toBe(snapshotObjectName('web', 'before_upgrade'));
  });
});
