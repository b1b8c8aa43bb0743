/**
 * Proxmox storages over Corral's storage: every StorageClass is a storage of the same name (content `images`);
 * `local-lvm` — the default in every Proxmox tool — is an alias of the cluster's default StorageClass when no
 * class carries that name; `local` is the ISO library (content `iso`): PVCs in the default namespace that no VM
 * owns, and the catalog's ISO entries, plus cloud-init snippets (keys of the `corral-snippets` ConfigMap) and PVE
 * 8.2's `import` content: disk images uploaded as `local:import/<file>` (DataVolumes annotated with that volume id),
 * which `import-from=local:import/<file>` clones into a new VM's disk.
 */
import type { CorralServices } from '@/server/domain/services';
import { classCapacity, storageCapacity } from '@/server/domain/storage-capacity';
import { libraryClaims, storageClasses, type StorageFact } from '@/server/domain/vm-hardware';
import { quantityToNumber } from '@/server/domain/quantity';
import { corral } from './errors';

export const ISO_STORAGE = 'local';
export const LVM_ALIAS = 'local-lvm';

export interface PveStorage {
  storage: string;
  type: 'lvmthin' | 'dir';
  content: string;
  /** The StorageClass new disks on this storage use ('' = cluster default). */
  storageClass: string;
  shared: 0 | 1;
}

export async function pveStorages(services: CorralServices): Promise<PveStorage[]> {
  const classes = await corral(storageClasses(services.deps));
  const out: PveStorage[] = classes.map((c: StorageFact) => ({
    storage: c.name,
    type: 'lvmthin',
    content: 'images,rootdir',
    storageClass: c.name,
    shared: 1,
  }));
  if (!classes.some((c) => c.name === LVM_ALIAS)) {
    const def = classes.find((c) => c.isDefault);
    if (def)
      out.push({ storage: LVM_ALIAS, type: 'lvmthin', content: 'images,rootdir', storageClass: def.name, shared: 1 });
  }
  if (!classes.some((c) => c.name === ISO_STORAGE))
    out.push({ storage: ISO_STORAGE, type: 'dir', content: 'iso,vztmpl,snippets,import', storageClass: '', shared: 1 });
  return out.sort((a, b) => a.storage.localeCompare(b.storage));
}

/** A storage's sizes in bytes as PVE reports them; `estimated` when total/avail are not the CSI driver's own. */
export interface StorageSizes {
  total: number;
  used: number;
  avail: number;
  estimated: boolean;
}

/**
 * Sizes of each storage (by storage id). A StorageClass storage (and `local-lvm`, its default class's alias) reads
 * the domain's capacity of that class: used = its Bound claims. `local`, the ISO library, uses the library's claims
 * and the node-disk estimate for total/avail.
 */
export async function storageSizes(
  services: CorralServices,
  storages: PveStorage[],
): Promise<Map<string, StorageSizes>> {
  const deps = services.deps;
  const defaultClass = (await corral(storageClasses(deps))).find((c) => c.isDefault)?.name ?? '';
  const capacity = await corral(storageCapacity(deps, defaultClass));
  const out = new Map<string, StorageSizes>();
  for (const s of storages) {
    if (s.storageClass) {
      const c = classCapacity(capacity, s.storageClass);
      out.set(s.storage, { total: c.total, used: c.used, avail: c.avail, estimated: c.estimated });
      continue;
    }
    const used = libraryClaims(deps, deps.config.defaultNamespace).reduce((sum, c) => sum + (c.sizeBytes ?? 0), 0);
    const { pool } = capacity;
    out.set(s.storage, { total: Math.max(pool.total, used), used, avail: pool.avail, estimated: true });
  }
  return out;
}

export async function findStorage(services: CorralServices, id: string): Promise<PveStorage | undefined> {
  return (await pveStorages(services)).find((s) => s.storage === id);
}

export interface IsoVolume {
  volid: string;
  /** An existing claim to attach read-only, or a URL to import. */
  claim?: string;
  url?: string;
  sizeBytes?: number;
  ctime: number;
}

/** The ISO library as `local:iso/<name>` volumes. */
export async function isoVolumes(services: CorralServices): Promise<IsoVolume[]> {
  const namespace = services.deps.config.defaultNamespace;
  const out: IsoVolume[] = libraryClaims(services.deps, namespace).map((c) => ({
    volid: `${ISO_STORAGE}:iso/${c.name}`,
    claim: c.name,
    ...(c.sizeBytes !== undefined ? { sizeBytes: c.sizeBytes } : {}),
    ctime: Math.floor(Date.parse(c.created) / 1000) || 0,
  }));
  const catalog = await corral(services.images.list()).catch(() => []);
  for (const entry of catalog as { name: string; kind?: string; uri?: string }[]) {
    if (entry.kind === 'iso' && entry.uri)
      out.push({ volid: `${ISO_STORAGE}:iso/${entry.name}.iso`, url: entry.uri, ctime: 0 });
  }
  return out.sort((a, b) => a.volid.localeCompare(b.volid));
}

/** `iso/debian-12.iso` → the library entry, matching with or without the `.iso` suffix. */
export async function resolveIso(services: CorralServices, path: string): Promise<IsoVolume | undefined> {
  const wanted = path.replace(/^iso\//, '');
  const bare = wanted.replace(/\.iso$/i, '');
  return (await isoVolumes(services)).find((v) => {
    const name = v.volid.slice(`${ISO_STORAGE}:iso/`.length);
    // `debian-12.iso` finds a claim named debian-12.iso, debian-12 or debian-12-iso (Kubernetes names have no dots).
    return name === wanted || name === bare || name === `${bare}-iso` || name.replace(/\.iso$/i, '') === bare;
  });
}

/** On a DataVolume uploaded through PVE's storage upload: the PVE volume id it answers to (`local:import/a.raw`). */
export const ANNOTATION_PVE_VOLUME = 'corral.dev/pve-volume';

export interface ImportVolume {
  volid: string;
  /** The DataVolume (and claim) holding the image, in the default namespace. */
  claim: string;
  format: string;
  sizeBytes: number;
  ctime: number;
}

/** The `import` content of `storage`: uploaded disk images whose upload finished (DataVolume Succeeded). */
export function importVolumes(services: CorralServices, storage: string): ImportVolume[] {
  const namespace = services.deps.config.defaultNamespace;
  const prefix = `${storage}:import/`;
  return services.deps.cluster.cache
    .list('DataVolume', namespace)
    .filter((dv) => dv.metadata.annotations?.[ANNOTATION_PVE_VOLUME]?.startsWith(prefix))
    .filter((dv) => (dv.status as { phase?: string } | undefined)?.phase === 'Succeeded')
    .map((dv) => {
      const volid = dv.metadata.annotations?.[ANNOTATION_PVE_VOLUME] ?? '';
      const requested = (dv.spec as { storage?: { resources?: { requests?: { storage?: string } } } } | undefined)
        ?.storage?.resources?.requests?.storage;
      return {
        volid,
        claim: dv.metadata.name ?? '',
        format: volid.slice(volid.lastIndexOf('.') + 1),
        sizeBytes: Math.round(quantityToNumber(requested) || 0),
        ctime: Math.floor(Date.parse(dv.metadata.creationTimestamp ?? '') / 1000) || 0,
      };
    })
    .sort((a, b) => a.volid.localeCompare(b.volid));
}
