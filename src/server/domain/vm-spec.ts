/**
 * Builders for the objects a VM create writes: the VirtualMachine, its DataVolumes, the cloud-init Secret and the
 * bootc build Job. Pure functions, so the exact manifests are pinned by table tests without a cluster.
 */
import type { KObject } from './cluster-port';
import { ANNOTATION_SOURCE, LABEL_MANAGED_BY, LABEL_VM } from './labels';
import { BOOTC_BUILDER_SA } from './extensions-catalog';

export interface VmShape {
  name: string;
  namespace: string;
  cpu?: number; // omitted with an instancetype
  mem?: string;
  node?: string;
  instancetype?: string;
  preference?: string;
  cloudInitSecret?: string;
  /** How the root disk is backed. */
  root: { containerDisk: string } | { dataVolume: string } | { pvc: string };
  /** An installer ISO DataVolume attached as a cdrom that boots first. */
  isoDataVolume?: string;
  /** An installer ISO already in the library (its claim), attached read-only as a cdrom that boots first. */
  isoClaim?: string;
  /** `{source: value}` recorded on the VM so the UI can show where it came from. */
  source: Record<string, string>;
  runStrategy: 'Always' | 'Halted';
}

export function ownedLabels(vm: string): Record<string, string> {
  return { [LABEL_VM]: vm, [LABEL_MANAGED_BY]: 'corral' };
}

export function buildVirtualMachine(s: VmShape): KObject {
  const disks: Record<string, unknown>[] = [
    { name: 'rootdisk', disk: { bus: 'virtio' }, bootOrder: s.isoDataVolume || s.isoClaim ? 2 : 1 },
  ];
  const volumes: Record<string, unknown>[] = [];
  if ('containerDisk' in s.root) volumes.push({ name: 'rootdisk', containerDisk: { image: s.root.containerDisk } });
  else if ('dataVolume' in s.root) volumes.push({ name: 'rootdisk', dataVolume: { name: s.root.dataVolume } });
  else volumes.push({ name: 'rootdisk', persistentVolumeClaim: { claimName: s.root.pvc } });
  if (s.isoDataVolume) {
    disks.push({ name: 'installer', cdrom: { bus: 'sata' }, bootOrder: 1 });
    volumes.push({ name: 'installer', dataVolume: { name: s.isoDataVolume } });
  } else if (s.isoClaim) {
    // The library's claim itself, shared by every VM installing from it: read-only, and never deleted with a VM.
    disks.push({ name: 'installer', cdrom: { bus: 'sata' }, bootOrder: 1 });
    volumes.push({ name: 'installer', persistentVolumeClaim: { claimName: s.isoClaim, readOnly: true } });
  }
  if (s.cloudInitSecret) {
    disks.push({ name: 'cloudinitdisk', disk: { bus: 'virtio' } });
    volumes.push({ name: 'cloudinitdisk', cloudInitNoCloud: { secretRef: { name: s.cloudInitSecret } } });
  }
  const domain: Record<string, unknown> = {
    devices: { disks, interfaces: [{ name: 'default', masquerade: {} }], rng: {} },
  };
  if (s.cpu !== undefined) domain.cpu = { sockets: s.cpu, cores: 1, threads: 1 };
  if (s.mem !== undefined) domain.memory = { guest: s.mem };
  const spec: Record<string, unknown> = {
    runStrategy: s.runStrategy,
    template: {
      metadata: { labels: { 'kubevirt.io/domain': s.name, [LABEL_VM]: s.name } },
      spec: {
        domain,
        networks: [{ name: 'default', pod: {} }],
        volumes,
        ...(s.node ? { nodeSelector: { 'kubernetes.io/hostname': s.node } } : {}),
      },
    },
  };
  if (s.instancetype) spec.instancetype = { kind: 'VirtualMachineClusterInstancetype', name: s.instancetype };
  if (s.preference) spec.preference = { kind: 'VirtualMachineClusterPreference', name: s.preference };
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: s.name,
      namespace: s.namespace,
      labels: ownedLabels(s.name),
      annotations: { [ANNOTATION_SOURCE]: JSON.stringify(s.source) },
    },
    spec,
  };
}

export type DataVolumeSource =
  | { http: { url: string } }
  | { blank: Record<string, never> }
  | { pvc: { namespace: string; name: string } }
  | { registry: { url: string } };

export function buildDataVolume(
  vm: string,
  namespace: string,
  name: string,
  size: string,
  source: DataVolumeSource,
  contentType: 'kubevirt' | 'archive' = 'kubevirt',
): KObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: { name, namespace, labels: ownedLabels(vm) },
    spec: {
      source,
      ...(contentType === 'kubevirt' ? {} : { contentType }),
      storage: { resources: { requests: { storage: size } } },
    },
  };
}

/** cloud-init user data in a Secret (key `userdata`) so no credential sits in the VM spec. */
export function buildCloudInitSecret(vm: string, namespace: string, userData: string): KObject {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${vm}-cloudinit`, namespace, labels: ownedLabels(vm) },
    type: 'Opaque',
    // `data` (base64) rather than stringData: the stored object is the same on every apiserver.
    data: { userdata: Buffer.from(userData, 'utf8').toString('base64') },
  };
}

/** The user data Corral writes: the caller's own, with the SSH key merged in when both are given. */
export function composeUserData(
  cloudInit: string | undefined,
  sshKey: string | undefined,
  defaultUser: string | undefined,
): string | undefined {
  if (cloudInit === undefined && sshKey === undefined) return undefined;
  if (sshKey === undefined) return cloudInit;
  const base = cloudInit?.trim() ? cloudInit.trimEnd() : '#cloud-config';
  if (/^\s*ssh_authorized_keys\s*:/m.test(base)) return `${base}\n`; // the caller manages keys; do not guess YAML
  const user = defaultUser ? `\nuser: ${defaultUser}` : '';
  return `${base}${base.includes('\nuser:') ? '' : user}\nssh_authorized_keys:\n  - ${JSON.stringify(sshKey.trim())}\n`;
}

export const BOOTC_BUILDER_IMAGE = 'quay.io/centos-bootc/bootc-image-builder:latest';

/** The bootc disk build: bootc-image-builder writes a raw disk from the image into PVC `<vm>-disk`. */
export function buildBootcJob(
  vm: string,
  namespace: string,
  image: string,
  diskClaim: string,
  sshKey?: string,
): KObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `${vm}-bootc-build`, namespace, labels: { ...ownedLabels(vm), 'corral.dev/bootc': 'build' } },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: 3600,
      template: {
        metadata: { labels: { ...ownedLabels(vm), 'corral.dev/bootc': 'build' } },
        spec: {
          restartPolicy: 'Never',
          serviceAccountName: BOOTC_BUILDER_SA,
          containers: [
            {
              name: 'builder',
              image: BOOTC_BUILDER_IMAGE,
              args: ['--type', 'raw', '--rootfs', 'xfs', '--output', '/output', image],
              env: sshKey ? [{ name: 'BOOTC_SSH_KEY', value: sshKey }] : [],
              securityContext: { privileged: true },
              volumeMounts: [{ name: 'output', mountPath: '/output' }],
            },
          ],
          volumes: [{ name: 'output', persistentVolumeClaim: { claimName: diskClaim } }],
        },
      },
    },
  };
}
