/** VirtualMachine manifests as Corral creates them (tags as `corral.dev/tag.<tag>=true` labels, §spec README). */
import type { NewObject } from '../store/types.js';
import type { Json } from '../kubevirt/objects.js';

export interface VmShape {
  name: string;
  namespace: string;
  runStrategy: 'Always' | 'Halted' | 'Manual' | 'RerunOnFailure';
  tags?: string[];
  template?: boolean;
  /** Root disk source: a containerDisk image, an existing DataVolume, or a PVC. */
  containerDisk?: string;
  dataVolume?: string;
  pvc?: string;
  /** Extra data disk (PVC) after the root disk. */
  dataPvc?: string;
  /** An installer ISO as a SATA CD-ROM (a DataVolume). */
  isoDataVolume?: string;
  instancetype?: string;
  preference?: string;
  sockets?: number;
  memory?: string;
  /** Corral's `node` field. */
  node?: string;
  /** A second NIC bridged onto this NetworkAttachmentDefinition. */
  bridgeNetwork?: string;
  dataVolumeTemplates?: Json[];
}

export function vmManifest(shape: VmShape): NewObject {
  const labels: Record<string, string> = {};
  for (const tag of shape.tags ?? []) labels[`corral.dev/tag.${tag}`] = 'true';
  if (shape.template) labels['corral.dev/template'] = 'true';
  const disks: Json[] = [{ name: 'rootdisk', disk: { bus: 'virtio' }, bootOrder: shape.isoDataVolume ? 2 : 1 }];
  const volumes: Json[] = [];
  if (shape.containerDisk) volumes.push({ name: 'rootdisk', containerDisk: { image: shape.containerDisk } });
  else if (shape.dataVolume) volumes.push({ name: 'rootdisk', dataVolume: { name: shape.dataVolume } });
  else if (shape.pvc) volumes.push({ name: 'rootdisk', persistentVolumeClaim: { claimName: shape.pvc } });
  if (shape.isoDataVolume) {
    disks.push({ name: 'iso', cdrom: { bus: 'sata' }, bootOrder: 1 });
    volumes.push({ name: 'iso', dataVolume: { name: shape.isoDataVolume } });
  }
  if (shape.dataPvc) {
    disks.push({ name: 'data', disk: { bus: 'virtio' } });
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: shape.dataPvc } });
  }
  disks.push({ name: 'cloudinitdisk', disk: { bus: 'virtio' } });
  volumes.push({
    name: 'cloudinitdisk',
    cloudInitNoCloud: {
      userData: `#cloud-config\nhostname: ${shape.name}\nssh_pwauth: false\npackage_update: false\n`,
    },
  });
  const interfaces: Json[] = [{ name: 'default', masquerade: {} }];
  const networks: Json[] = [{ name: 'default', pod: {} }];
  if (shape.bridgeNetwork) {
    interfaces.push({ name: shape.bridgeNetwork, bridge: {} });
    networks.push({ name: shape.bridgeNetwork, multus: { networkName: shape.bridgeNetwork } });
  }
  const domain: Json = { devices: { disks, interfaces, rng: {} }, machine: { type: 'q35' } };
  if (!shape.instancetype) {
    domain.cpu = { sockets: shape.sockets ?? 1, cores: 1, threads: 1 };
    domain.memory = { guest: shape.memory ?? '2Gi' };
  }
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: shape.name,
      namespace: shape.namespace,
      labels,
      annotations: { 'kubevirt.io/latest-observed-api-version': 'v1' },
    },
    spec: {
      runStrategy: shape.runStrategy,
      ...(shape.instancetype
        ? { instancetype: { kind: 'VirtualMachineClusterInstancetype', name: shape.instancetype } }
        : {}),
      ...(shape.preference ? { preference: { kind: 'VirtualMachineClusterPreference', name: shape.preference } } : {}),
      ...(shape.dataVolumeTemplates ? { dataVolumeTemplates: shape.dataVolumeTemplates } : {}),
      template: {
        metadata: { labels: { 'kubevirt.io/domain': shape.name } },
        spec: {
          domain,
          networks,
          volumes,
          terminationGracePeriodSeconds: 180,
          evictionStrategy: 'LiveMigrate',
          ...(shape.node ? { nodeSelector: { 'kubernetes.io/hostname': shape.node } } : {}),
        },
      },
    },
  };
}
