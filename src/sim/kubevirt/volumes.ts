/**
 * How a VM's volumes look from KubeVirt: which PVC backs each, whether it is ready to boot from, whether it can
 * be live-migrated (ReadWriteMany) — and the VMI `volumeStatus` entries built from them.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { K } from './keys.js';
import type { Json } from './objects.js';
import { dig, digArray, digRecord, digString, serves } from './objects.js';

export function claimOf(volume: Json): string | undefined {
  return digString(volume, 'persistentVolumeClaim', 'claimName') ?? digString(volume, 'dataVolume', 'name');
}

function accessModesOf(store: ObjectStore, namespace: string | undefined, claim: string): string[] {
  const pvc = store.get(K.pvcs, namespace, claim);
  const fromPvc = (dig(pvc, 'status', 'accessModes') ?? dig(pvc, 'spec', 'accessModes')) as string[] | undefined;
  if (fromPvc?.length) return fromPvc;
  const dv = serves(store, K.dataVolumes) ? store.get(K.dataVolumes, namespace, claim) : undefined;
  const fromDv = (dig(dv, 'spec', 'storage', 'accessModes') ?? dig(dv, 'spec', 'pvc', 'accessModes')) as
    string[] | undefined;
  return fromDv ?? ['ReadWriteOnce'];
}

export interface Migratability {
  migratable: boolean;
  reason?: string;
  message?: string;
}

/**
 * KubeVirt's LiveMigratable condition: every PVC must be shared (RWX) — except the volumes a volume migration is
 * moving (`status.migratedVolumes`), which the migration copies to their new claims.
 */
export function migratability(store: ObjectStore, vmi: KObject): Migratability {
  const moving = new Set(digArray(vmi, 'status', 'migratedVolumes').map((m) => String(m.volumeName)));
  for (const volume of digArray(vmi, 'spec', 'volumes')) {
    const claim = claimOf(volume);
    if (!claim || moving.has(String(volume.name))) continue;
    if (!accessModesOf(store, vmi.metadata.namespace, claim).includes('ReadWriteMany')) {
      return {
        migratable: false,
        reason: 'DisksNotLiveMigratable',
        message: `cannot migrate VMI: PVC ${claim} is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)`,
      };
    }
  }
  return { migratable: true };
}

export function hasLocalDisks(vmi: KObject): boolean {
  return digArray(vmi, 'spec', 'volumes').some((v) => v.containerDisk !== undefined || v.emptyDisk !== undefined);
}

const TARGETS_VIRTIO = 'abcdefghijklmnopqrstuvwxyz';

/** volumeStatus for a running VMI's non-hotplug volumes, disk targets in device order (vda, vdb, sda …). */
export function bootVolumeStatus(store: ObjectStore, vmi: KObject): Json[] {
  const disks = digArray(vmi, 'spec', 'domain', 'devices', 'disks');
  let virtio = 0;
  let scsi = 0;
  const out: Json[] = [];
  for (const disk of disks) {
    const name = String(disk.name);
    const volume = digArray(vmi, 'spec', 'volumes').find((v) => v.name === name);
    if (
      !volume ||
      dig(volume, 'persistentVolumeClaim', 'hotpluggable') === true ||
      dig(volume, 'dataVolume', 'hotpluggable') === true
    )
      continue;
    const bus = digString(disk, 'disk', 'bus') ?? digString(disk, 'cdrom', 'bus') ?? 'virtio';
    const target = bus === 'virtio' ? `vd${TARGETS_VIRTIO[virtio++ % 26]}` : `sd${TARGETS_VIRTIO[scsi++ % 26]}`;
    const entry: Json = { name, target };
    const claim = claimOf(volume);
    if (claim) {
      const pvc = store.get(K.pvcs, vmi.metadata.namespace, claim);
      entry.persistentVolumeClaimInfo = {
        claimName: claim,
        accessModes: accessModesOf(store, vmi.metadata.namespace, claim),
        volumeMode: digString(pvc, 'spec', 'volumeMode') ?? 'Filesystem',
        capacity: digRecord(pvc, 'status', 'capacity') ?? digRecord(pvc, 'spec', 'resources', 'requests') ?? {},
        requests: digRecord(pvc, 'spec', 'resources', 'requests') ?? {},
        filesystemOverhead: '0.055',
      };
    }
    out.push(entry);
  }
  return out;
}
