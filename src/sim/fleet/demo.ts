/**
 * The demo fleet: namespace `tailvm` with nine VMs in the states a homelab shows (running on each node, paused,
 * stopped, installing from an ISO, unschedulable), a template, a bridged LAN NetworkAttachmentDefinition, data
 * volumes and two Corral containers. Same names every run.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { NewObject } from '../store/types.js';
import { K } from '../kubevirt/keys.js';
import { serves } from '../kubevirt/objects.js';
import { ensure } from './baseline.js';
import { SeedIps, seedVm } from './seed-vm.js';
import { vmManifest } from './vm-builder.js';

const NS = 'tailvm';
/** CDI's content-type annotation [src: CDI pkg/controller/common/util.go AnnContentType]. */
const CONTENT_TYPE = 'cdi.kubevirt.io/storage.contentType';

function pvc(
  name: string,
  size: string,
  storageClassName: string,
  accessModes: string[],
  labels: Record<string, string>,
  annotations: Record<string, string> = {},
): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS, labels, annotations },
    spec: { accessModes, resources: { requests: { storage: size } }, storageClassName, volumeMode: 'Filesystem' },
  };
}

/** A DataVolume CDI already finished importing (its PVC is created alongside and bound by the CSI driver). */
function importedDataVolume(
  store: ObjectStore,
  name: string,
  url: string,
  size: string,
  storageClassName: string,
  accessModes: string[],
  vm: string,
): void {
  if (!serves(store, K.dataVolumes)) return;
  const dv = store.create(K.dataVolumes, {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: {
      name,
      namespace: NS,
      labels: { 'corral.dev/vm': vm },
      annotations: { 'cdi.kubevirt.io/storage.usePopulator': 'true' },
    },
    spec: {
      source: { registry: { url } },
      storage: { accessModes, resources: { requests: { storage: size } }, storageClassName },
    },
    status: {
      phase: 'Succeeded',
      progress: '100.0%',
      claimName: name,
      conditions: [
        { type: 'Bound', status: 'True', reason: 'Bound', message: `PVC ${name} Bound` },
        { type: 'Ready', status: 'True', reason: 'Completed', message: '' },
        { type: 'Running', status: 'False', reason: 'Completed', message: 'Import Complete' },
      ],
    },
  });
  // CDI marks the claims it fills with their content type; a disk image exports as raw/gzip.
  const claim = pvc(
    name,
    size,
    storageClassName,
    accessModes,
    { 'corral.dev/vm': vm, 'app.kubernetes.io/managed-by': 'cdi-controller' },
    { [CONTENT_TYPE]: 'kubevirt' },
  );
  claim.metadata.ownerReferences = [
    {
      apiVersion: dv.apiVersion,
      kind: dv.kind,
      name,
      uid: dv.metadata.uid,
      controller: true,
      blockOwnerDeletion: true,
    },
  ];
  store.create(K.pvcs, claim);
}

const SEED_ROOTFS = [
  'set -e',
  '[ -e /data/rootfs/.corral-seeded ] && exit 0',
  'rm -rf /data/rootfs',
  'mkdir -p /data/rootfs',
  'tar -C / --one-file-system --exclude=./data --exclude=./proc --exclude=./sys --exclude=./dev -cf - . | tar -C /data/rootfs -xpf -',
  'mkdir -p /data/rootfs/proc /data/rootfs/sys /data/rootfs/dev /data/rootfs/data',
  'touch /data/rootfs/.corral-seeded',
].join('\n');

function container(
  store: ObjectStore,
  spec: { name: string; image: string; cpu: number; mem: string; disk: string; privileged: boolean },
): void {
  const labels = { 'corral.dev/ct': 'true', 'corral.dev/ct-name': spec.name };
  const recorded = {
    name: spec.name,
    namespace: NS,
    image: spec.image,
    cpu: spec.cpu,
    mem: spec.mem,
    disk: spec.disk,
    storageClass: 'longhorn',
    privileged: spec.privileged,
  };
  store.create(
    K.pvcs,
    pvc(`${spec.name}-data`, spec.disk, 'longhorn', ['ReadWriteOnce'], labels, {
      'corral.ct/spec': JSON.stringify(recorded),
    }),
  );
  store.create(K.pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: spec.name, namespace: NS, labels },
    spec: {
      hostname: spec.name,
      restartPolicy: 'Always',
      // What Corral creates (src/server/domain/ct-spec.ts): a privileged CT seeds the image root onto its volume once.
      ...(spec.privileged
        ? {
            initContainers: [
              {
                name: 'seed-rootfs',
                image: spec.image,
                command: ['/bin/sh', '-c', SEED_ROOTFS],
                securityContext: { privileged: true },
                volumeMounts: [{ name: 'data', mountPath: '/data' }],
              },
            ],
          }
        : {}),
      containers: [
        {
          name: 'main',
          image: spec.image,
          command: spec.privileged ? ['/bin/sh', '-c', 'exec chroot /data/rootfs /sbin/init'] : ['sleep', 'infinity'],
          resources: {
            requests: { cpu: String(spec.cpu), memory: spec.mem },
            limits: { cpu: String(spec.cpu), memory: spec.mem },
          },
          securityContext: { privileged: spec.privileged },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          stdin: true,
          tty: true,
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `${spec.name}-data` } }],
    },
    status: { phase: 'Pending' },
  });
}

export function seedDemo(store: ObjectStore): void {
  const ips = new SeedIps();
  ensure(store, K.nads, {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'lan', namespace: NS },
    spec: { config: JSON.stringify({ cniVersion: '0.3.1', name: 'lan', type: 'bridge', bridge: 'br0', ipam: {} }) },
  });

  importedDataVolume(
    store,
    'db-rootdisk',
    'docker://quay.io/containerdisks/ubuntu:24.04',
    '20Gi',
    'nfs',
    ['ReadWriteMany'],
    'db',
  );
  // A VM's data disk: a disk image, not a plain filesystem (without the mark KubeVirt would export it as files).
  store.create(
    K.pvcs,
    pvc(
      'files-data',
      '50Gi',
      'longhorn',
      ['ReadWriteOnce'],
      { 'corral.dev/vm': 'files' },
      { [CONTENT_TYPE]: 'kubevirt' },
    ),
  );

  seedVm(
    store,
    ips,
    vmManifest({
      name: 'web',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['prod', 'web'],
      containerDisk: 'quay.io/containerdisks/fedora:42',
      instancetype: 'u1.medium',
      preference: 'fedora',
      bridgeNetwork: 'lan',
    }),
    'Running',
    'corral-1',
    { events: true },
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'api',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['prod', 'web'],
      containerDisk: 'quay.io/containerdisks/ubuntu:24.04',
      instancetype: 'u1.small',
      preference: 'ubuntu',
    }),
    'Running',
    'corral-3',
    { events: true },
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'db',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['prod', 'db'],
      dataVolume: 'db-rootdisk',
      sockets: 2,
      memory: '4Gi',
      preference: 'ubuntu',
    }),
    'Running',
    'corral-2',
    { events: true },
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'files',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['prod'],
      containerDisk: 'quay.io/containerdisks/debian:12',
      dataPvc: 'files-data',
      sockets: 1,
      memory: '2Gi',
      node: 'corral-1',
    }),
    'Running',
    'corral-1',
    { events: true },
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'ci-runner',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['dev'],
      containerDisk: 'quay.io/containerdisks/centos-stream:9',
      sockets: 4,
      memory: '8Gi',
    }),
    'Paused',
    'corral-2',
    { events: true },
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'sandbox',
      namespace: NS,
      runStrategy: 'Halted',
      tags: ['dev'],
      containerDisk: 'quay.io/containerdisks/cirros:6.2',
      sockets: 1,
      memory: '512Mi',
    }),
    'Controlled',
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'installer',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['lab'],
      dataVolume: 'installer-rootdisk',
      isoDataVolume: 'installer-iso',
      sockets: 2,
      memory: '4Gi',
      dataVolumeTemplates: [
        {
          metadata: { name: 'installer-iso' },
          spec: {
            source: { http: { url: 'https://releases.ubuntu.com/24.04.2/ubuntu-24.04.2-live-server-amd64.iso' } },
            storage: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '4Gi' } },
              storageClassName: 'longhorn',
            },
          },
        },
        {
          metadata: { name: 'installer-rootdisk' },
          spec: {
            source: { blank: {} },
            storage: {
              accessModes: ['ReadWriteOnce'],
              resources: { requests: { storage: '30Gi' } },
              storageClassName: 'longhorn',
            },
          },
        },
      ],
    }),
    'Controlled',
  );
  // More memory than any node has: the scheduler reports it and the VM shows ErrorUnschedulable.
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'bigdata',
      namespace: NS,
      runStrategy: 'Always',
      tags: ['lab', 'db'],
      containerDisk: 'quay.io/containerdisks/fedora:42',
      sockets: 8,
      memory: '192Gi',
    }),
    'Controlled',
  );
  seedVm(
    store,
    ips,
    vmManifest({
      name: 'fedora-template',
      namespace: NS,
      runStrategy: 'Halted',
      template: true,
      containerDisk: 'quay.io/containerdisks/fedora:42',
      instancetype: 'u1.small',
      preference: 'fedora',
    }),
    'Controlled',
  );

  container(store, {
    name: 'devbox',
    image: 'docker.io/library/debian:bookworm',
    cpu: 2,
    mem: '2Gi',
    disk: '10Gi',
    privileged: true,
  });
  container(store, {
    name: 'pihole',
    image: 'docker.io/pihole/pihole:2025.03.0',
    cpu: 1,
    mem: '512Mi',
    disk: '2Gi',
    privileged: false,
  });
}
