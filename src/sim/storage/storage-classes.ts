/** StorageClass and VolumeSnapshotClass lookups as CSI provisioners, CDI and KubeVirt resolve them. */
import type { KObject } from '../store/types.js';
import { S } from './keys.js';
import type { StoreView } from './runtime.js';
import { rec, str } from './util.js';

const DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
const DEFAULT_VIRT_CLASS = 'storageclass.kubevirt.io/is-default-virt-class';
const DEFAULT_SNAPSHOT_CLASS = 'snapshot.storage.kubernetes.io/is-default-class';

/** The cluster default StorageClass; CDI (`forVirt`) prefers the KubeVirt default class when one is marked. */
export function defaultStorageClass(rt: StoreView, forVirt = false): KObject | undefined {
  const classes = rt.list(S.storageClasses);
  if (forVirt) {
    const virt = classes.find((c) => c.metadata.annotations?.[DEFAULT_VIRT_CLASS] === 'true');
    if (virt) return virt;
  }
  return classes.find((c) => c.metadata.annotations?.[DEFAULT_CLASS] === 'true');
}

export function storageClass(rt: StoreView, name: string | undefined): KObject | undefined {
  return name ? rt.get(S.storageClasses, undefined, name) : undefined;
}

export function isWaitForFirstConsumer(sc: KObject): boolean {
  return sc.volumeBindingMode === 'WaitForFirstConsumer';
}

export function allowsExpansion(sc: KObject | undefined): boolean {
  return sc?.allowVolumeExpansion === true;
}

export function provisioner(sc: KObject | undefined): string {
  return str(sc?.provisioner) ?? 'kubernetes.io/no-provisioner';
}

/**
 * The VolumeSnapshotClass KubeVirt would use for a PVC: one whose `driver` equals the PVC's StorageClass
 * provisioner, the annotated default first [src: KubeVirt pkg/storage/snapshot/snapshot.go].
 */
export function snapshotClassForPvc(rt: StoreView, pvc: KObject): KObject | undefined {
  const sc = storageClass(rt, str(rec(pvc.spec).storageClassName));
  if (!sc) return undefined;
  const driver = provisioner(sc);
  const matching = rt.list(S.volumeSnapshotClasses).filter((c) => c.driver === driver);
  return matching.find((c) => c.metadata.annotations?.[DEFAULT_SNAPSHOT_CLASS] === 'true') ?? matching[0];
}
