/** One descriptor per kind (Headlamp's lib/k8s idea) and one URL builder: the only place API paths are spelled. */
import type { Kind } from '../domain/cluster-port';

export interface ResourceDescriptor {
  kind: Kind;
  group: string; // '' for the core group
  version: string;
  plural: string;
  namespaced: boolean;
}

const d = (kind: Kind, group: string, version: string, plural: string, namespaced = true): ResourceDescriptor => ({
  kind,
  group,
  version,
  plural,
  namespaced,
});

export const RESOURCES: Record<Kind, ResourceDescriptor> = {
  VirtualMachine: d('VirtualMachine', 'kubevirt.io', 'v1', 'virtualmachines'),
  VirtualMachineInstance: d('VirtualMachineInstance', 'kubevirt.io', 'v1', 'virtualmachineinstances'),
  VirtualMachineInstanceMigration: d(
    'VirtualMachineInstanceMigration',
    'kubevirt.io',
    'v1',
    'virtualmachineinstancemigrations',
  ),
  Pod: d('Pod', '', 'v1', 'pods'),
  Node: d('Node', '', 'v1', 'nodes', false),
  PersistentVolumeClaim: d('PersistentVolumeClaim', '', 'v1', 'persistentvolumeclaims'),
  Namespace: d('Namespace', '', 'v1', 'namespaces', false),
  Event: d('Event', '', 'v1', 'events'),
  Secret: d('Secret', '', 'v1', 'secrets'),
  ConfigMap: d('ConfigMap', '', 'v1', 'configmaps'),
  Service: d('Service', '', 'v1', 'services'),
  Job: d('Job', 'batch', 'v1', 'jobs'),
  DataVolume: d('DataVolume', 'cdi.kubevirt.io', 'v1beta1', 'datavolumes'),
  CDIConfig: d('CDIConfig', 'cdi.kubevirt.io', 'v1beta1', 'cdiconfigs', false),
  UploadTokenRequest: d('UploadTokenRequest', 'upload.cdi.kubevirt.io', 'v1beta1', 'uploadtokenrequests'),
  StorageClass: d('StorageClass', 'storage.k8s.io', 'v1', 'storageclasses', false),
  CSIStorageCapacity: d('CSIStorageCapacity', 'storage.k8s.io', 'v1', 'csistoragecapacities'),
  VolumeSnapshotClass: d('VolumeSnapshotClass', 'snapshot.storage.k8s.io', 'v1', 'volumesnapshotclasses', false),
  VirtualMachineSnapshot: d('VirtualMachineSnapshot', 'snapshot.kubevirt.io', 'v1beta1', 'virtualmachinesnapshots'),
  VirtualMachineRestore: d('VirtualMachineRestore', 'snapshot.kubevirt.io', 'v1beta1', 'virtualmachinerestores'),
  VirtualMachineClone: d('VirtualMachineClone', 'clone.kubevirt.io', 'v1beta1', 'virtualmachineclones'),
  VirtualMachineExport: d('VirtualMachineExport', 'export.kubevirt.io', 'v1', 'virtualmachineexports'),
  VirtualMachineClusterInstancetype: d(
    'VirtualMachineClusterInstancetype',
    'instancetype.kubevirt.io',
    'v1beta1',
    'virtualmachineclusterinstancetypes',
    false,
  ),
  VirtualMachineClusterPreference: d(
    'VirtualMachineClusterPreference',
    'instancetype.kubevirt.io',
    'v1beta1',
    'virtualmachineclusterpreferences',
    false,
  ),
  KubeVirt: d('KubeVirt', 'kubevirt.io', 'v1', 'kubevirts'),
  CDI: d('CDI', 'cdi.kubevirt.io', 'v1beta1', 'cdis', false),
  ServiceAccount: d('ServiceAccount', '', 'v1', 'serviceaccounts'),
  Role: d('Role', 'rbac.authorization.k8s.io', 'v1', 'roles'),
  RoleBinding: d('RoleBinding', 'rbac.authorization.k8s.io', 'v1', 'rolebindings'),
  ClusterRole: d('ClusterRole', 'rbac.authorization.k8s.io', 'v1', 'clusterroles', false),
  ClusterRoleBinding: d('ClusterRoleBinding', 'rbac.authorization.k8s.io', 'v1', 'clusterrolebindings', false),
  CronJob: d('CronJob', 'batch', 'v1', 'cronjobs'),
  Lease: d('Lease', 'coordination.k8s.io', 'v1', 'leases'),
  NetworkAttachmentDefinition: d(
    'NetworkAttachmentDefinition',
    'k8s.cni.cncf.io',
    'v1',
    'network-attachment-definitions',
  ),
};

export function apiVersionOf(r: ResourceDescriptor): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/** `/api/v1/namespaces/ns/pods/name`, `/apis/kubevirt.io/v1/virtualmachines` (all namespaces) ... */
export function resourcePath(r: ResourceDescriptor, namespace?: string, name?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${r.plural}${name !== undefined ? `/${encodeURIComponent(name)}` : ''}`;
}

export function subresourcePath(target: string, namespace: string, name: string, verb: string): string {
  return `/apis/subresources.kubevirt.io/v1/namespaces/${encodeURIComponent(namespace)}/${target}/${encodeURIComponent(name)}/${verb}`;
}
