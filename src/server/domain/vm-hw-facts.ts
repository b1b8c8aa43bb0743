/**
 * A VM's hardware as data (CPU topology, memory, disks with their claims and StorageClasses, NICs), read from the
 * VM spec and the watch cache. The operations that change it live beside it: vm-hw-cpu, vm-hw-disks, vm-hw-nics,
 * vm-hw-options, and vm-hw-compose (a VM from an explicit description).
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { LABEL_TEMPLATE } from './labels';
import { quantityToNumber } from './quantity';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, claimSize, templateSpec, vmVolumes, type VolumeRef } from './vm-facts';

export type DiskBusName = 'virtio' | 'scsi' | 'sata';

export interface DiskFact {
  /** The disk's name in the VM spec (also its volume's name). */
  name: string;
  device: 'disk' | 'cdrom' | 'lun';
  bus: string;
  bootOrder?: number;
  volume?: VolumeRef;
  /** PVC/DataVolume name backing it, '' for containerDisk/cloud-init. */
  claim: string;
  /** Current capacity in bytes (PVC status, else the request), undefined when unknown. */
  sizeBytes?: number;
  /** StorageClass of the claim ('' when unknown or not a claim). */
  storageClass: string;
  /** containerDisk image, when that is the backing. */
  image?: string;
  /** cloud-init Secret, when that is the backing. */
  secret?: string;
}

export interface NicFact {
  name: string;
  model: string;
  mac: string;
  /** 'pod' for the pod network, else the Multus NetworkAttachmentDefinition name. */
  network: string;
}

export interface VmHardware {
  namespace: string;
  name: string;
  sockets: number;
  cores: number;
  threads: number;
  memoryBytes: number;
  disks: DiskFact[];
  nics: NicFact[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  template: boolean;
  runStrategy: string;
}

export const num = (v: unknown, fallback: number): number =>
  typeof v === 'number' && Number.isFinite(v) ? v : fallback;

/** Bytes as an exact quantity a human reads back (`4Gi`, `1536Mi`), falling back to plain bytes. */
export function bytesQuantity(bytes: number): string {
  for (const [unit, factor] of [
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
  ] as const) {
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

export function claimFacts(
  deps: DomainDeps,
  namespace: string,
  claim: string,
): { sizeBytes?: number; storageClass: string } {
  const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, claim);
  const dv = deps.cluster.cache.get('DataVolume', namespace, claim);
  // The larger of capacity and request: after a resize the request leads until the filesystem has grown.
  const capacity = quantityToNumber(asString(asDict(asDict(pvc?.status).capacity).storage));
  const requested = quantityToNumber(claimSize(pvc) || claimSize(dv));
  const known = [capacity, requested].filter(Number.isFinite);
  const bytes = known.length ? Math.max(...known) : NaN;
  const storageClass =
    asString(asDict(pvc?.spec).storageClassName) ||
    asString(asDict(asDict(dv?.spec).storage).storageClassName) ||
    asString(asDict(asDict(dv?.spec).pvc).storageClassName);
  return { ...(Number.isFinite(bytes) ? { sizeBytes: Math.round(bytes) } : {}), storageClass };
}

export function readHardware(deps: DomainDeps, vm: KObject): VmHardware {
  const namespace = vm.metadata.namespace ?? '';
  const name = vm.metadata.name ?? '';
  const tspec = templateSpec(vm);
  const domain = asDict(tspec.domain);
  const cpu = asDict(domain.cpu);
  const memory = quantityToNumber(
    asString(asDict(domain.memory).guest) || asString(asDict(asDict(domain.resources).requests).memory),
  );
  const volumes = new Map(vmVolumes(vm).map((v) => [v.volume, v]));
  const rawVolumes = new Map(asArray(tspec.volumes).map((v) => [asString(asDict(v).name), asDict(v)]));
  const disks: DiskFact[] = asArray(asDict(domain.devices).disks).map((raw) => {
    const d = asDict(raw);
    const diskName = asString(d.name);
    const device = d.cdrom ? 'cdrom' : d.lun ? 'lun' : 'disk';
    const bus = asString(asDict(d[device]).bus) || (device === 'cdrom' ? 'sata' : 'virtio');
    const volume = volumes.get(diskName);
    const rawVolume = rawVolumes.get(diskName) ?? {};
    const fact: DiskFact = { name: diskName, device, bus, claim: volume?.claim ?? '', storageClass: '' };
    if (typeof d.bootOrder === 'number') fact.bootOrder = d.bootOrder;
    if (volume) fact.volume = volume;
    if (volume?.claim) Object.assign(fact, claimFacts(deps, namespace, volume.claim));
    if (volume?.kind === 'containerDisk') fact.image = asString(asDict(rawVolume.containerDisk).image);
    if (volume?.kind === 'cloudInit') {
      const ci = asDict(rawVolume.cloudInitNoCloud ?? rawVolume.cloudInitConfigDrive);
      fact.secret = asString(asDict(ci.secretRef).name);
    }
    return fact;
  });
  const networks = new Map(
    asArray(tspec.networks).map((n) => {
      const net = asDict(n);
      return [
        asString(net.name),
        net.pod ? 'pod' : asString(asDict(net.multus).networkName) || asString(net.name),
      ] as const;
    }),
  );
  const nics: NicFact[] = asArray(asDict(domain.devices).interfaces).map((raw) => {
    const i = asDict(raw);
    const nicName = asString(i.name);
    return {
      name: nicName,
      model: asString(i.model) || 'virtio',
      mac: asString(i.macAddress),
      network: networks.get(nicName) ?? 'pod',
    };
  });
  return {
    namespace,
    name,
    sockets: num(cpu.sockets, 1),
    cores: num(cpu.cores, 1),
    threads: num(cpu.threads, 1),
    memoryBytes: Number.isFinite(memory) ? Math.round(memory) : 0,
    disks,
    nics,
    labels: { ...(vm.metadata.labels ?? {}) },
    annotations: { ...(vm.metadata.annotations ?? {}) },
    template: vm.metadata.labels?.[LABEL_TEMPLATE] === 'true',
    runStrategy: asString(asDict(vm.spec).runStrategy),
  };
}

/**
 * The VM as the apiserver has it now, for read-modify-write of spec lists: the cache may not have seen a patch
 * made a moment ago, and a stale resourceVersion would make the write fail with a conflict.
 */
export async function liveVm(deps: DomainDeps, namespace: string, name: string): Promise<KObject> {
  requireVm(deps, namespace, name);
  const vm = await deps.cluster.fetch('VirtualMachine', namespace, name);
  if (!vm) throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} not found`);
  return vm;
}

export function vmHardware(deps: DomainDeps, namespace: string, name: string): VmHardware {
  return readHardware(deps, requireVm(deps, namespace, name));
}

/** What a client states about a disk it re-sends; fields left out are not stated. */
export interface DiskWish {
  /** The PVC/DataVolume it names. */
  claim?: string;
  storageClass?: string;
  sizeBytes?: number;
}

/**
 * Whether re-sending `wish` for the attached disk `disk` changes nothing — PVE accepts an unchanged drive spec as
 * a no-op (Ansible's proxmox_disk re-sends the volume on every run): the same claim, StorageClass and size.
 */
export function diskUnchanged(disk: DiskFact, wish: DiskWish): boolean {
  if (disk.device !== 'disk') return false;
  if (wish.claim !== undefined && wish.claim !== disk.claim) return false;
  if (wish.storageClass !== undefined && disk.storageClass && wish.storageClass !== disk.storageClass) return false;
  if (wish.sizeBytes !== undefined && wish.sizeBytes !== disk.sizeBytes) return false;
  return true;
}

/** CPU and memory an instancetype gives the VMs that name it. */
export interface InstancetypeSize {
  cpus: number;
  memoryBytes: number;
}

const INSTANCETYPE_TTL_MS = 30_000;
const instancetypeCache = new WeakMap<object, Map<string, { at: number; size: InstancetypeSize | undefined }>>();

/**
 * The size of a cluster instancetype (`spec.cpu.guest`, `spec.memory.guest`), read at most every 30 s per name
 * (instancetypes are immutable in practice). Undefined when it does not exist or cannot be read.
 */
export async function instancetypeSize(deps: DomainDeps, name: string): Promise<InstancetypeSize | undefined> {
  let byName = instancetypeCache.get(deps.cluster);
  if (!byName) {
    byName = new Map();
    instancetypeCache.set(deps.cluster, byName);
  }
  const hit = byName.get(name);
  if (hit && Date.now() - hit.at < INSTANCETYPE_TTL_MS) return hit.size;
  const it = await deps.cluster.fetch('VirtualMachineClusterInstancetype', undefined, name).catch(() => undefined);
  const spec = asDict(it?.spec);
  const cpus = asDict(spec.cpu).guest;
  const memory = quantityToNumber(asString(asDict(spec.memory).guest));
  const size =
    it && typeof cpus === 'number' && cpus > 0 && Number.isFinite(memory)
      ? { cpus, memoryBytes: Math.round(memory) }
      : undefined;
  byName.set(name, { at: Date.now(), size });
  return size;
}

/**
 * The VM's hardware with the size filled in from its instancetype when the template names none (a VM sized by a
 * `VirtualMachineClusterInstancetype` has no `domain.cpu`/`domain.memory` of its own): the instancetype's guest
 * vCPUs as cores of one socket and its guest memory.
 */
export async function sizedHardware(deps: DomainDeps, namespace: string, name: string): Promise<VmHardware> {
  const vm = requireVm(deps, namespace, name);
  const hw = readHardware(deps, vm);
  const ref = asDict(asDict(vm.spec).instancetype);
  const kind = asString(ref.kind);
  if (!asString(ref.name) || (kind && !/^virtualmachineclusterinstancetype$/i.test(kind))) return hw;
  const domain = asDict(templateSpec(vm).domain);
  const size = await instancetypeSize(deps, asString(ref.name));
  if (!size) return hw;
  const ownCpu = Object.keys(asDict(domain.cpu)).some((k) => ['cores', 'sockets', 'threads'].includes(k));
  return {
    ...hw,
    ...(ownCpu ? {} : { cores: size.cpus, sockets: 1, threads: 1 }),
    ...(hw.memoryBytes > 0 ? {} : { memoryBytes: size.memoryBytes }),
  };
}
