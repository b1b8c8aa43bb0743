/**
 * Create and update parameters of `POST /nodes/{n}/qemu` and `PUT|POST …/config`, turned into Corral's hardware
 * vocabulary. Everything is validated before anything is written, and every refusal is a
 * `400 Parameter verification failed.` naming the parameter, so a bad request never half-creates a VM.
 */
import type { CorralServices } from '@/server/domain/services';
import type { DiskPlan, NicPlan } from '@/server/domain/vm-hardware';
import { missingNetworks } from '@/server/domain/vm-networks';
import { unfinishedImage } from '@/server/domain/library-image';
import { isCloudInitKey } from './cloudinit-params';
import type { DiskExtras, Extras, NetExtras } from './extras';
import type { Params } from './params';
import { ISO_STORAGE, findStorage, importVolumes, resolveIso } from './storage-map';
import { DiskSpecError, parseDiskKey, parseDiskSpec, type DiskBus } from './translate/disk-spec';
import { NetSpecError, parseNetKey, parseNetSpec, stableMac } from './translate/net-spec';
import { GIB } from './translate/size';
import { STORED_OPTIONS } from './vm-view';
import { paramError } from './wire';

/** Keys the translator maps itself (not stored verbatim). */
const MAPPED = new Set([
  'vmid',
  'name',
  'cores',
  'sockets',
  'memory',
  'tags',
  'template',
  'start',
  'pool',
  'node',
  'digest',
  'delete',
  'revert',
  'skiplock',
  'background_delay',
  'force',
  'unique',
  'archive',
  'storage',
  'live-restore',
]);

const KUBEVIRT_MODELS = new Set(['virtio', 'e1000', 'e1000e', 'rtl8139', 'pcnet', 'ne2k_pci']);

export function kubevirtBus(bus: DiskBus, cdrom: boolean): 'virtio' | 'scsi' | 'sata' {
  // KubeVirt has no IDE bus, and CD-ROMs cannot sit on virtio: both become SATA.
  if (bus === 'ide' || (cdrom && bus === 'virtio')) return 'sata';
  return bus;
}

/** Keys of `args` that are neither mapped nor disk/net keys, refused when PVE would not know them either. */
export function unknownKeys(args: Params, extra: string[] = []): string[] {
  return args
    .keys()
    .filter(
      (k) =>
        !MAPPED.has(k) &&
        !STORED_OPTIONS.has(k) &&
        !extra.includes(k) &&
        !isCloudInitKey(k) &&
        !parseDiskKey(k) &&
        parseNetKey(k) === undefined &&
        !/^unused\d+$/.test(k),
    );
}

export function checkUnknown(args: Params, extra: string[] = []): void {
  const unknown = unknownKeys(args, extra);
  if (unknown.length)
    throw paramError(
      Object.fromEntries(
        unknown.map((k) => [
          k,
          'property is not defined in schema and the schema does not allow additional properties',
        ]),
      ),
    );
}

/** Refuses any parameter but `allowed`, as PVE's schema validator does for endpoints without extra properties. */
export function onlyParams(args: Params, allowed: readonly string[]): void {
  const unknown = args.keys().filter((k) => !allowed.includes(k));
  if (unknown.length)
    throw paramError(
      Object.fromEntries(
        unknown.map((k) => [
          k,
          'property is not defined in schema and the schema does not allow additional properties',
        ]),
      ),
    );
}

/** A Kubernetes name for a VM from PVE's `name` (PVE allows more; Corral refuses rather than renames). */
export function vmName(args: Params, vmid: number): string {
  const name = args.string('name') ?? `vm-${vmid}`;
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name))
    throw paramError({
      name: `invalid name '${name}': Corral VMs are Kubernetes objects; use lower-case letters, digits and '-' (at most 63)`,
    });
  return name;
}

export function tagsOf(value: string | undefined): string[] {
  if (!value) return [];
  const tags = value.split(/[;,\s]+/).filter(Boolean);
  for (const t of tags)
    if (!/^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$/.test(t)) throw paramError({ tags: `invalid tag '${t}'` });
  return [...new Set(tags)].sort();
}

export interface DiskTranslation {
  plans: DiskPlan[];
  extras: Record<string, DiskExtras>;
  /** A `<storage>:cloudinit` drive: the domain attaches it with the cloud-init settings (vm-cloudinit.ts). */
  cloudInit?: { key: string; bus: 'sata' | 'scsi' };
}

/**
 * Disk keys (`scsi0`, `ide2`, …) → disk plans. New disks become DataVolumes `<vm>-<key>` on the storage's
 * StorageClass; ISO media attach a library claim read-only or import the catalog URL; `import-from` takes a URL
 * or a library volume.
 */
export async function translateDisks(
  services: CorralServices,
  args: Params,
  vmNameForErrors: string,
  namespace: string,
): Promise<DiskTranslation> {
  const plans: DiskPlan[] = [];
  const extras: Record<string, DiskExtras> = {};
  let cloudInit: DiskTranslation['cloudInit'];
  const keys = args
    .keys()
    .filter((k) => parseDiskKey(k))
    .sort();
  for (const key of keys) {
    const text = args.raw(key) ?? '';
    const bad = (why: string) => paramError({ [key]: why });
    let spec;
    try {
      spec = parseDiskSpec(text);
    } catch (err) {
      if (err instanceof DiskSpecError) throw bad(err.message);
      throw err;
    }
    const slot = parseDiskKey(key);
    if (!slot) continue;
    const src = spec.source;
    const cdrom = src.kind === 'iso' || src.kind === 'empty-cdrom';
    const bus = kubevirtBus(slot.bus, cdrom);
    const base = { name: key, bus, cdrom };
    switch (src.kind) {
      case 'empty-cdrom':
        extras[key] = { options: spec.options, empty: true };
        continue;
      case 'cloudinit': {
        if (cloudInit) throw bad(`only one cloud-init drive is allowed (${cloudInit.key} is one)`);
        const storage = await findStorage(services, src.storage);
        if (!storage) throw bad(`storage '${src.storage}' does not exist`);
        if (!storage.content.includes('images'))
          throw bad(`storage '${src.storage}' does not support content-type 'images'`);
        // A CD-ROM like PVE's: SATA for ide/sata/virtio slots, SCSI for scsi ones.
        cloudInit = { key, bus: slot.bus === 'scsi' ? 'scsi' : 'sata' };
        extras[key] = { storage: src.storage, options: spec.options };
        continue;
      }
      case 'iso': {
        if (src.storage !== ISO_STORAGE)
          throw bad(`storage '${src.storage}' does not support content-type 'iso' (use '${ISO_STORAGE}')`);
        const iso = await resolveIso(services, src.path);
        if (!iso) throw bad(`volume '${src.storage}:${src.path}' does not exist`);
        const unfinished = iso.claim ? unfinishedImage(services.deps, namespace, iso.claim) : null;
        if (unfinished) throw bad(`volume '${src.storage}:${src.path}' is not ready: ${unfinished}`);
        extras[key] = { storage: src.storage, volume: src.path, options: spec.options };
        if (iso.claim) plans.push({ ...base, backing: { claim: iso.claim } });
        else if (iso.url)
          plans.push({ ...base, backing: { import: { url: iso.url, sizeBytes: 5 * GIB, storageClass: '' } } });
        continue;
      }
      case 'volume': {
        const storage = await findStorage(services, src.storage);
        if (!storage) throw bad(`storage '${src.storage}' does not exist`);
        // An existing volume must exist: a VM naming a missing claim would never start.
        const cache = services.deps.cluster.cache;
        if (
          !cache.get('PersistentVolumeClaim', namespace, src.volume) &&
          !cache.get('DataVolume', namespace, src.volume)
        )
          throw bad(`volume '${src.storage}:${src.volume}' does not exist`);
        extras[key] = { storage: src.storage, options: spec.options };
        plans.push({ ...base, backing: { claim: src.volume } });
        continue;
      }
      case 'new':
      case 'import': {
        const storage = await findStorage(services, src.storage);
        if (!storage) throw bad(`storage '${src.storage}' does not exist`);
        if (!storage.content.includes('images'))
          throw bad(`storage '${src.storage}' does not support content-type 'images'`);
        extras[key] = { storage: src.storage, options: spec.options };
        if (src.kind === 'new') {
          plans.push({ ...base, backing: { blank: { sizeBytes: src.sizeBytes, storageClass: storage.storageClass } } });
          continue;
        }
        const size = src.sizeBytes ?? 10 * GIB;
        if (/^https?:\/\//.test(src.from)) {
          plans.push({
            ...base,
            backing: { import: { url: src.from, sizeBytes: size, storageClass: storage.storageClass } },
          });
        } else if (/^[^:/]+:import\//.test(src.from)) {
          // PVE 8.2's import content: a disk image uploaded as `<storage>:import/<file>` (storage-upload.ts).
          const image = importVolumes(services, src.from.slice(0, src.from.indexOf(':'))).find(
            (v) => v.volid === src.from,
          );
          if (!image) throw bad(`import-from '${src.from}': volume does not exist`);
          if (namespace !== services.deps.config.defaultNamespace)
            throw bad(
              `import-from '${src.from}': import volumes are in namespace ${services.deps.config.defaultNamespace}, not ${namespace}`,
            );
          const unfinished = unfinishedImage(services.deps, namespace, image.claim);
          if (unfinished) throw bad(`import-from '${src.from}' is not ready: ${unfinished}`);
          plans.push({
            ...base,
            backing: {
              clone: {
                pvc: image.claim,
                sizeBytes: src.sizeBytes ?? image.sizeBytes,
                storageClass: storage.storageClass,
              },
            },
          });
        } else {
          const volume = src.from.includes(':')
            ? src.from.slice(src.from.indexOf(':') + 1).replace(/^iso\//, '')
            : src.from;
          if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(volume))
            throw bad(
              `import-from '${src.from}' is neither an http(s) URL nor a volume of ${vmNameForErrors}'s namespace`,
            );
          const unfinished = unfinishedImage(services.deps, namespace, volume);
          if (unfinished) throw bad(`import-from '${src.from}' is not ready: ${unfinished}`);
          plans.push({
            ...base,
            backing: { clone: { pvc: volume, sizeBytes: size, storageClass: storage.storageClass } },
          });
        }
        continue;
      }
    }
  }
  return { plans, extras, ...(cloudInit ? { cloudInit } : {}) };
}

/** `boot=order=scsi0;ide2;net0` → boot orders for the planned disks; default: disks first, then CD-ROMs. */
export function applyBootOrder(plans: DiskPlan[], boot: string | undefined): void {
  const order = /(?:^|,)order=([^,]+)/
    .exec(boot ?? '')?.[1]
    ?.split(';')
    .filter(Boolean);
  if (order) {
    let n = 1;
    for (const key of order) {
      const plan = plans.find((p) => p.name === key);
      if (plan) plan.bootOrder = n++;
    }
    return;
  }
  let n = 1;
  for (const p of plans.filter((d) => !d.cdrom)) p.bootOrder = n++;
  for (const p of plans.filter((d) => d.cdrom)) p.bootOrder = n++;
}

export interface NetTranslation {
  plans: NicPlan[];
  extras: Record<string, NetExtras>;
}

/** `netN` keys → NICs with a MAC (the client's, else a stable one), on the pod network (`vmbr0`) or a Multus network. */
export function translateNets(args: Params, namespace: string, name: string, existingPodNic = false): NetTranslation {
  const plans: NicPlan[] = [];
  const extras: Record<string, NetExtras> = {};
  let podTaken = existingPodNic;
  const keys = args
    .keys()
    .filter((k) => parseNetKey(k) !== undefined)
    .sort((a, b) => (parseNetKey(a) ?? 0) - (parseNetKey(b) ?? 0));
  for (const key of keys) {
    let spec;
    try {
      spec = parseNetSpec(args.raw(key) ?? '');
    } catch (err) {
      if (err instanceof NetSpecError) throw paramError({ [key]: err.message });
      throw err;
    }
    const bridge = spec.bridge ?? 'vmbr0';
    const pod = bridge === 'vmbr0';
    if (pod && podTaken)
      throw paramError({
        [key]: `only one NIC can be on the pod network (vmbr0); name a NetworkAttachmentDefinition as the bridge for more`,
      });
    if (pod) podTaken = true;
    else if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\/[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)?$/.test(bridge))
      throw paramError({
        [key]: `bridge '${bridge}' must be vmbr0 (the pod network) or a NetworkAttachmentDefinition name`,
      });
    const mac = spec.mac ?? stableMac(namespace, name, parseNetKey(key) ?? 0);
    const model = KUBEVIRT_MODELS.has(spec.model) ? spec.model : 'virtio';
    plans.push({ name: key, model, mac, network: pod ? 'pod' : bridge });
    extras[key] = { bridge, options: spec.options, ...(model !== spec.model ? { model: spec.model } : {}) };
  }
  return { plans, extras };
}

/** Refuses, keyed by `netN`, NICs whose bridge names no NetworkAttachmentDefinition — before anything is written. */
export async function requireBridges(services: CorralServices, namespace: string, plans: NicPlan[]): Promise<void> {
  const missing = await missingNetworks(services.deps, namespace, plans);
  if (missing.length) throw paramError(Object.fromEntries(missing.map((m) => [m.nic, `bridge: ${m.message}`])));
}

/**
 * Options stored verbatim (description, ostype, …), validated for the few PVE checks clients rely on. `onboot` is
 * not one of them: it is the domain's start on boot (the run strategy), see `onbootOf`.
 */
export function storedOptions(args: Params): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of args.keys()) {
    if (!STORED_OPTIONS.has(key) || key === 'onboot') continue;
    const value = args.raw(key) ?? '';
    if (
      ['onboot', 'acpi', 'numa', 'tablet', 'protection', 'kvm', 'localtime', 'freeze', 'reboot'].includes(key) &&
      args.bool(key) !== undefined
    ) {
      out[key] = args.bool(key) ? '1' : '0';
      continue;
    }
    if (key === 'description' && value.length > 8192)
      throw paramError({ description: 'value may only be 8192 characters long' });
    out[key] = value;
  }
  return out;
}

/** The `onboot` a client sent (`delete=onboot` is PVE's default, 0); undefined when it did not mention it. */
export function onbootOf(args: Params, deletes: string[] = []): boolean | undefined {
  return args.bool('onboot') ?? (deletes.includes('onboot') ? false : undefined);
}

export function mergeExtras(base: Extras, update: Partial<Extras>): Extras {
  return {
    options: { ...base.options, ...(update.options ?? {}) },
    disks: { ...base.disks, ...(update.disks ?? {}) },
    nets: { ...base.nets, ...(update.nets ?? {}) },
  };
}
