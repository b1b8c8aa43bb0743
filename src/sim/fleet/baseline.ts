/**
 * What every fleet starts from: the namespaces KubeVirt, CDI and Corral use, three nodes (one control plane, two
 * Intel and one AMD, labelled like KubeVirt's node-labeller does), the KubeVirt and CDI install CRs, storage
 * classes (an expandable RWO default and an RWX class for live-migratable disks), a VolumeSnapshotClass, and the
 * common instancetypes and preferences.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { BaselineOptions } from '../module.js';
import type { ObjectStore } from '../store/object-store.js';
import type { NewObject } from '../store/types.js';
import { CPU_VENDOR_LABEL_PREFIX, K, KUBEVIRT_VERSION } from '../kubevirt/keys.js';
import { serves } from '../kubevirt/objects.js';

export const BASELINE_NAMESPACES = ['default', 'kube-system', 'kubevirt', 'cdi', 'tailvm'];

export interface NodeShape {
  name: string;
  vendor: 'Intel' | 'AMD';
  cpus: number;
  memoryGi: number;
  controlPlane?: boolean;
}

export const BASELINE_NODES: NodeShape[] = [
  { name: 'corral-1', vendor: 'Intel', cpus: 16, memoryGi: 64, controlPlane: true },
  { name: 'corral-2', vendor: 'Intel', cpus: 16, memoryGi: 64 },
  { name: 'corral-3', vendor: 'AMD', cpus: 32, memoryGi: 128 },
];

const CPU_MODELS = { Intel: ['Skylake-Client-IBRS', 'Cascadelake-Server-noTSX'], AMD: ['EPYC-Rome', 'EPYC'] } as const;
const KUBELET_VERSION = 'v1.32.4+k3s1';

/** Create unless it exists: seeding must not trip over objects the apiserver bootstrap already made. */
export function ensure(store: ObjectStore, key: string, obj: NewObject): void {
  if (store.get(key, obj.metadata.namespace, obj.metadata.name!)) return;
  store.create(key, obj);
}

export function namespace(name: string): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
    spec: { finalizers: ['kubernetes'] },
    status: { phase: 'Active' },
  };
}

export function node(shape: NodeShape, index: number): NewObject {
  const kib = shape.memoryGi * 1024 * 1024;
  const labels: Record<string, string> = {
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/os': 'linux',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': shape.name,
    'kubernetes.io/os': 'linux',
    'node.kubernetes.io/instance-type': 'k3s',
    'kubevirt.io/schedulable': 'true',
    [`${CPU_VENDOR_LABEL_PREFIX}${shape.vendor}`]: 'true',
    'cpu-feature.node.kubevirt.io/vmx': shape.vendor === 'Intel' ? 'true' : 'false',
    'cpu-feature.node.kubevirt.io/svm': shape.vendor === 'AMD' ? 'true' : 'false',
    'cpu-timer.node.kubevirt.io/tsc-scalable': 'true',
    'kubevirt.io/ksm-enabled': 'false',
    'scheduling.node.kubevirt.io/tsc-frequency-2995200000': 'true',
  };
  for (const model of CPU_MODELS[shape.vendor]) labels[`cpu-model.node.kubevirt.io/${model}`] = 'true';
  labels[`host-model-cpu.node.kubevirt.io/${CPU_MODELS[shape.vendor][0]}`] = 'true';
  if (shape.controlPlane) {
    labels['node-role.kubernetes.io/control-plane'] = 'true';
    labels['node-role.kubernetes.io/master'] = 'true';
    labels['node-role.kubernetes.io/etcd'] = 'true';
  }
  const transition = '2026-11-01T08:00:00Z';
  const condition = (type: string, st: string, reason: string, message: string) => ({
    type,
    status: st,
    reason,
    message,
    lastHeartbeatTime: transition,
    lastTransitionTime: transition,
  });
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: shape.name,
      labels,
      annotations: {
        'k3s.io/node-args': '["server"]',
        'kubevirt.io/heartbeat': transition,
        'node.alpha.kubernetes.io/ttl': '0',
        'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
      },
    },
    spec: { podCIDR: `10.42.${index}.0/24`, podCIDRs: [`10.42.${index}.0/24`], providerID: `k3s://${shape.name}` },
    status: {
      capacity: {
        cpu: String(shape.cpus),
        memory: `${kib}Ki`,
        pods: '110',
        'ephemeral-storage': '479668528Ki',
        'devices.kubevirt.io/kvm': '1k',
        'devices.kubevirt.io/tun': '1k',
        'devices.kubevirt.io/vhost-net': '1k',
      },
      allocatable: {
        cpu: String(shape.cpus),
        memory: `${kib - 102400}Ki`,
        pods: '110',
        'ephemeral-storage': '466626214838',
        'devices.kubevirt.io/kvm': '1k',
        'devices.kubevirt.io/tun': '1k',
        'devices.kubevirt.io/vhost-net': '1k',
      },
      conditions: [
        condition('MemoryPressure', 'False', 'KubeletHasSufficientMemory', 'kubelet has sufficient memory available'),
        condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
        condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
        condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
      ],
      addresses: [
        { type: 'InternalIP', address: `10.0.${Math.floor((index + 10) / 250)}.${((index + 10) % 250) + 1}` },
        { type: 'Hostname', address: shape.name },
      ],
      daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
      nodeInfo: {
        architecture: 'amd64',
        bootID: `b00710${String(index).padStart(2, '0')}-1d2c-4e1a-9a43-5d6f4c1e0a${String(index).padStart(2, '0')}`,
        containerRuntimeVersion: 'containerd://1.7.23-k3s2',
        kernelVersion: '6.1.0-28-amd64',
        kubeProxyVersion: KUBELET_VERSION,
        kubeletVersion: KUBELET_VERSION,
        machineID: `6f1c0a${String(index).padStart(2, '0')}e2d4b54c3a9f8e7d6c5b4a3921`,
        operatingSystem: 'linux',
        osImage: 'Debian GNU/Linux 12 (bookworm)',
        systemUUID: `4c4c4544-0042-3510-8052-${String(index).padStart(12, '0')}`,
      },
    },
  };
}

export const DEFAULT_FEATURE_GATES = ['Snapshot', 'HotplugVolumes', 'ExpandDisks', 'VMExport', 'LiveMigration'];

function kubevirtCr(featureGates: string[]): NewObject {
  const now = '2026-11-01T08:05:00Z';
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'KubeVirt',
    metadata: { name: 'kubevirt', namespace: 'kubevirt', finalizers: ['foregroundDeleteKubeVirt'] },
    spec: {
      certificateRotateStrategy: {},
      configuration: {
        developerConfiguration: { featureGates: [...featureGates] },
        vmRolloutStrategy: 'LiveUpdate',
        liveUpdateConfiguration: { maxHotplugRatio: 4 },
        migrations: {
          bandwidthPerMigration: '0',
          completionTimeoutPerGiB: 150,
          parallelMigrationsPerCluster: 5,
          parallelOutboundMigrationsPerNode: 2,
          progressTimeout: 150,
        },
      },
      customizeComponents: {},
      imagePullPolicy: 'IfNotPresent',
      workloadUpdateStrategy: {
        workloadUpdateMethods: ['LiveMigrate'],
        batchEvictionSize: 10,
        batchEvictionInterval: '1m0s',
      },
    },
    status: {
      phase: 'Deployed',
      observedKubeVirtVersion: KUBEVIRT_VERSION,
      observedKubeVirtRegistry: 'quay.io/kubevirt',
      targetKubeVirtVersion: KUBEVIRT_VERSION,
      targetKubeVirtRegistry: 'quay.io/kubevirt',
      operatorVersion: KUBEVIRT_VERSION,
      defaultArchitecture: 'amd64',
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'AllResourcesCreated',
          message: 'All components are ready.',
          lastProbeTime: now,
          lastTransitionTime: now,
        },
        {
          type: 'Progressing',
          status: 'False',
          reason: 'AllResourcesCreated',
          message: 'All resources have been created.',
          lastProbeTime: now,
          lastTransitionTime: now,
        },
        {
          type: 'Degraded',
          status: 'False',
          reason: 'AllComponentsReady',
          message: 'All components are ready.',
          lastProbeTime: now,
          lastTransitionTime: now,
        },
      ],
    },
  };
}

function cdiCr(): NewObject {
  const now = '2026-11-01T08:05:00Z';
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'CDI',
    metadata: { name: 'cdi', finalizers: ['operator.cdi.kubevirt.io'] },
    spec: {
      config: { featureGates: ['HonorWaitForFirstConsumer'] },
      imagePullPolicy: 'IfNotPresent',
      infra: {},
      workload: {},
      uninstallStrategy: 'BlockUninstallIfWorkloadsExist',
    },
    status: {
      phase: 'Deployed',
      observedVersion: 'v1.61.0',
      operatorVersion: 'v1.61.0',
      targetVersion: 'v1.61.0',
      conditions: [
        {
          type: 'Available',
          status: 'True',
          reason: 'DeployCompleted',
          message: 'Deployment Completed',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
        {
          type: 'Progressing',
          status: 'False',
          reason: 'DeployCompleted',
          message: '',
          lastHeartbeatTime: now,
          lastTransitionTime: now,
        },
        { type: 'Degraded', status: 'False', reason: '', message: '', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
    },
  };
}

const STORAGE_CLASSES: NewObject[] = [
  {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'longhorn', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: 'driver.longhorn.io',
    allowVolumeExpansion: true,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    parameters: { numberOfReplicas: '3', staleReplicaTimeout: '30', fsType: 'ext4' },
  },
  {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'nfs' },
    provisioner: 'nfs.csi.k8s.io',
    allowVolumeExpansion: true,
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    parameters: { server: 'nas.corral.lan', share: '/export/k8s' },
    mountOptions: ['nfsvers=4.1'],
  },
];

const SNAPSHOT_CLASS: NewObject = {
  apiVersion: 'snapshot.storage.k8s.io/v1',
  kind: 'VolumeSnapshotClass',
  metadata: { name: 'longhorn-snapshot', annotations: { 'snapshot.storage.kubernetes.io/is-default-class': 'true' } },
  driver: 'driver.longhorn.io',
  deletionPolicy: 'Delete',
  parameters: { type: 'snap' },
};

const DATA_DIR = fileURLToPath(new URL('./data/', import.meta.url));
let commonInstancetypes: NewObject[] | undefined;

/** The common instancetypes and preferences (parsed once per process: every test cluster seeds them). */
export function commonInstancetypeObjects(): NewObject[] {
  if (!commonInstancetypes) {
    commonInstancetypes = [];
    for (const file of ['virtualmachineclusterinstancetypes.yaml', 'virtualmachineclusterpreferences.yaml']) {
      for (const doc of parseAllDocuments(readFileSync(`${DATA_DIR}${file}`, 'utf8'))) {
        if (doc.errors.length) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        const obj = doc.toJSON() as NewObject | null;
        if (obj?.kind) commonInstancetypes.push(obj);
      }
    }
  }
  return commonInstancetypes;
}

export function seedBaseline(
  store: ObjectStore,
  nodes: NodeShape[] = BASELINE_NODES,
  options: BaselineOptions = {},
): void {
  for (const name of BASELINE_NAMESPACES) ensure(store, K.namespaces, namespace(name));
  nodes.forEach((shape, i) => ensure(store, K.nodes, node(shape, i)));
  ensure(store, K.kubevirts, kubevirtCr(options.featureGates ?? DEFAULT_FEATURE_GATES));
  if (serves(store, K.cdis)) ensure(store, K.cdis, cdiCr());
  for (const sc of STORAGE_CLASSES) ensure(store, K.storageClasses, sc);
  if (options.snapshotClass !== false) ensure(store, K.volumeSnapshotClasses, SNAPSHOT_CLASS);
  for (const obj of commonInstancetypeObjects()) {
    const key = obj.kind === 'VirtualMachineClusterInstancetype' ? K.clusterInstancetypes : K.clusterPreferences;
    ensure(store, key, obj);
  }
}
