/** Store keys (`<group>/<plural>`) of every kind the KubeVirt, kubelet and fleet modules read or write. */
import { resourceKey } from '../store/types.js';

export const K = {
  namespaces: resourceKey('', 'namespaces'),
  nodes: resourceKey('', 'nodes'),
  pods: resourceKey('', 'pods'),
  pvcs: resourceKey('', 'persistentvolumeclaims'),
  events: resourceKey('', 'events'),
  storageClasses: resourceKey('storage.k8s.io', 'storageclasses'),
  volumeSnapshotClasses: resourceKey('snapshot.storage.k8s.io', 'volumesnapshotclasses'),
  nads: resourceKey('k8s.cni.cncf.io', 'network-attachment-definitions'),
  vms: resourceKey('kubevirt.io', 'virtualmachines'),
  vmis: resourceKey('kubevirt.io', 'virtualmachineinstances'),
  vmims: resourceKey('kubevirt.io', 'virtualmachineinstancemigrations'),
  kubevirts: resourceKey('kubevirt.io', 'kubevirts'),
  dataVolumes: resourceKey('cdi.kubevirt.io', 'datavolumes'),
  cdis: resourceKey('cdi.kubevirt.io', 'cdis'),
  clusterInstancetypes: resourceKey('instancetype.kubevirt.io', 'virtualmachineclusterinstancetypes'),
  clusterPreferences: resourceKey('instancetype.kubevirt.io', 'virtualmachineclusterpreferences'),
  instancetypes: resourceKey('instancetype.kubevirt.io', 'virtualmachineinstancetypes'),
  preferences: resourceKey('instancetype.kubevirt.io', 'virtualmachinepreferences'),
} as const;

export const VM_FINALIZER = 'kubevirt.io/virtualMachineControllerFinalize';
export const VMI_FINALIZER = 'kubevirt.io/foregroundDeleteVirtualMachine';
export const VMIM_FINALIZER = 'kubevirt.io/migrationJobFinalize';

export const KUBEVIRT_VERSION = 'v1.6.0';
export const LAUNCHER_IMAGE = `quay.io/kubevirt/virt-launcher:${KUBEVIRT_VERSION}`;
export const CPU_VENDOR_LABEL_PREFIX = 'cpu-vendor.node.kubevirt.io/';
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
/**
 * Pods whose phase another controller drives (CDI importers, exporters, Jobs — see src/sim/storage/pods.ts);
 * the simulated kubelet leaves them alone.
 */
export const PHASE_DRIVEN_BY_ANNOTATION = 'sim.corral.dev/phase-driven-by';
