/**
 * A VM's hardware as data, and the operations that change it: compose a VM from an explicit description (several
 * disks and CD-ROMs, NICs with fixed MACs, labels/annotations), scale CPU/memory, add/resize/detach disks, and
 * set metadata. Written for the Proxmox translator, whose clients describe VMs disk by disk and NIC by NIC, but
 * transport-free like the rest of the domain: it speaks bytes, StorageClasses and KubeVirt buses.
 */
import { CorralError, describeError } from '../errors';
import type { Kind, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { LABEL_TEMPLATE } from './labels';
import { quantityToNumber } from './quantity';
import { runAsTask, type TaskHandle } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, claimSize, templateSpec, vmVolumes, type VolumeRef } from './vm-facts';
import { requireNetworks } from './vm-networks';
import { buildDataVolume, ownedLabels, type DataVolumeSource } from './vm-spec';

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

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

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

function claimFacts(deps: DomainDeps, namespace: string, claim: string): { sizeBytes?: number; storageClass: string } {
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
async function liveVm(deps: DomainDeps, namespace: string, name: string): Promise<KObject> {
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

// ---------------------------------------------------------------------------------------------------------------
// Compose: create a VM from an explicit hardware description.

export type DiskBacking =
  /** A new blank DataVolume `<vm>-<disk>` on the StorageClass ('' = the cluster default). */
  | { blank: { sizeBytes: number; storageClass: string } }
  /** A DataVolume imported from an http(s) URL. */
  | { import: { url: string; sizeBytes: number; storageClass: string } }
  /** A DataVolume cloned from a PVC in the VM's namespace. */
  | { clone: { pvc: string; sizeBytes: number; storageClass: string } }
  /** An existing claim used as is (e.g. a shared ISO library PVC). */
  | { claim: string };

export interface DiskPlan {
  name: string;
  bus: DiskBusName;
  cdrom: boolean;
  bootOrder?: number;
  backing: DiskBacking;
}

export interface NicPlan {
  name: string;
  model: string;
  mac: string;
  /** 'pod' or a Multus NetworkAttachmentDefinition name. */
  network: string;
}

export interface VmBlueprint {
  name: string;
  namespace: string;
  sockets: number;
  cores: number;
  memoryBytes: number;
  disks: DiskPlan[];
  nics: NicPlan[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  start: boolean;
}

/** The claim name a planned disk will have. */
export function plannedClaim(vm: string, disk: DiskPlan): string {
  return 'claim' in disk.backing ? disk.backing.claim : `${vm}-${disk.name}`;
}

function dataVolumeFor(bp: VmBlueprint, disk: DiskPlan): KObject | undefined {
  const b = disk.backing;
  if ('claim' in b) return undefined;
  let source: DataVolumeSource;
  let size: number;
  let storageClass: string;
  if ('blank' in b) [source, size, storageClass] = [{ blank: {} }, b.blank.sizeBytes, b.blank.storageClass];
  else if ('import' in b)
    [source, size, storageClass] = [{ http: { url: b.import.url } }, b.import.sizeBytes, b.import.storageClass];
  else
    [source, size, storageClass] = [
      { pvc: { namespace: bp.namespace, name: b.clone.pvc } },
      b.clone.sizeBytes,
      b.clone.storageClass,
    ];
  const dv = buildDataVolume(bp.name, bp.namespace, plannedClaim(bp.name, disk), bytesQuantity(size), source);
  if (storageClass) (asDict(dv.spec).storage as Record<string, unknown>).storageClassName = storageClass;
  return dv;
}

export function buildComposedVm(bp: VmBlueprint): KObject {
  const disks = bp.disks.map((d) => ({
    name: d.name,
    ...(d.cdrom ? { cdrom: { bus: d.bus === 'virtio' ? 'sata' : d.bus, readonly: true } } : { disk: { bus: d.bus } }),
    ...(d.bootOrder !== undefined ? { bootOrder: d.bootOrder } : {}),
  }));
  const volumes = bp.disks.map((d) =>
    'claim' in d.backing
      ? { name: d.name, persistentVolumeClaim: { claimName: d.backing.claim, ...(d.cdrom ? { readOnly: true } : {}) } }
      : { name: d.name, dataVolume: { name: plannedClaim(bp.name, d) } },
  );
  const interfaces = bp.nics.map((n) => ({
    name: n.name,
    model: n.model,
    macAddress: n.mac,
    ...(n.network === 'pod' ? { masquerade: {} } : { bridge: {} }),
  }));
  const networks = bp.nics.map((n) =>
    n.network === 'pod' ? { name: n.name, pod: {} } : { name: n.name, multus: { networkName: n.network } },
  );
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: bp.name,
      namespace: bp.namespace,
      labels: { ...bp.labels, ...ownedLabels(bp.name) },
      annotations: { ...bp.annotations },
    },
    spec: {
      runStrategy: bp.start ? 'Always' : 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/domain': bp.name, 'corral.dev/vm': bp.name } },
        spec: {
          domain: {
            cpu: { sockets: bp.sockets, cores: bp.cores, threads: 1 },
            memory: { guest: bytesQuantity(bp.memoryBytes) },
            devices: { disks, interfaces, ...(interfaces.length === 0 ? { autoattachPodInterface: false } : {}) },
          },
          networks,
          volumes,
        },
      },
    },
  };
}

/**
 * Writes the DataVolumes and the VM. The task stays `running` until every new DataVolume has finished importing
 * (or failed), because Proxmox clients treat the create task's end as "disks are ready". Anything written is
 * removed again if a write fails. Resolves with the task id once the objects exist.
 */
export async function composeVm(
  deps: DomainDeps,
  caller: Caller,
  bp: VmBlueprint,
  onTask?: (task: TaskHandle) => void,
): Promise<string> {
  if (deps.cluster.cache.get('VirtualMachine', bp.namespace, bp.name))
    throw new CorralError(
      'CONFLICT',
      `VM ${bp.namespace}/${bp.name} already exists; pick another name or delete it first`,
    );
  await requireNetworks(deps, bp.namespace, bp.nics);
  const target = `${bp.namespace}/${bp.name}`;
  const task = deps.journal.start('create', target, caller.identity.login);
  onTask?.(task);
  const written: { kind: Kind; name: string }[] = [];
  try {
    if (!(await deps.cluster.fetch('Namespace', undefined, bp.namespace))) {
      await deps.cluster
        .create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: bp.namespace } })
        .catch((err: unknown) => {
          if (!(err instanceof CorralError && err.code === 'CONFLICT')) throw err;
        });
    }
    for (const disk of bp.disks) {
      const dv = dataVolumeFor(bp, disk);
      if (!dv) continue;
      await deps.cluster.create('DataVolume', dv);
      written.push({ kind: 'DataVolume', name: dv.metadata.name ?? '' });
      task.log(`created DataVolume ${dv.metadata.name} for ${disk.name}`);
    }
    await deps.cluster.create('VirtualMachine', buildComposedVm(bp));
    written.push({ kind: 'VirtualMachine', name: bp.name });
    task.log(`created VirtualMachine ${target}`);
    task.progress(50);
  } catch (err) {
    const leftovers: string[] = [];
    for (const w of written.reverse()) {
      await deps.cluster
        .remove(w.kind, bp.namespace, w.name)
        .catch((e: unknown) => leftovers.push(`${w.kind} ${w.name} (${describeError(e)})`));
    }
    const tail = leftovers.length
      ? `; rollback could not remove: ${leftovers.join(', ')}`
      : written.length
        ? '; everything created so far was removed again'
        : '';
    const failure = new CorralError(
      err instanceof CorralError ? err.code : 'BAD_GATEWAY',
      `creating VM ${target} failed: ${describeError(err)}${tail}`,
      { cause: err },
    );
    task.fail(failure);
    throw failure;
  }
  const claims = written.filter((w) => w.kind === 'DataVolume').map((w) => w.name);
  void followDataVolumes(deps, bp.namespace, claims, task);
  return task.id;
}

/** Ends `task` when every DataVolume has Succeeded (OK) or one Failed (its message), following cache events. */
export function followDataVolumes(
  deps: DomainDeps,
  namespace: string,
  names: string[],
  task: TaskHandle,
): Promise<void> {
  return new Promise((resolve) => {
    const seen = new Map<string, string>();
    const check = (): boolean => {
      let done = 0;
      for (const n of names) {
        const dv = deps.cluster.cache.get('DataVolume', namespace, n);
        const status = asDict(dv?.status);
        const phase = asString(status.phase);
        if (phase && seen.get(n) !== phase) {
          seen.set(n, phase);
          task.log(`DataVolume ${n}: ${phase}${status.progress ? ` ${asString(status.progress)}` : ''}`);
        }
        if (phase === 'Succeeded') done++;
        else if (phase === 'Failed') {
          const cond = asArray(status.conditions)
            .map(asDict)
            .find((c) => asString(c.message));
          task.fail(new Error(`DataVolume ${n} failed${cond ? `: ${asString(cond.message)}` : ''}`));
          return true;
        }
      }
      if (done === names.length) {
        task.done(names.length ? 'all disks ready' : 'VM created');
        return true;
      }
      task.progress(50 + Math.round((done / Math.max(1, names.length)) * 45));
      return false;
    };
    if (check()) return resolve();
    const timer = setTimeout(() => {
      unsubscribe();
      if (!task.finished)
        task.fail(new Error(`disks were not ready after ${Math.round(deps.config.waitTimeoutMs / 1000)}s`));
      resolve();
    }, deps.config.waitTimeoutMs);
    const unsubscribe = deps.cluster.onChange((e) => {
      if (
        (e.kind === 'DataVolume' || e.kind === 'PersistentVolumeClaim') &&
        e.object.metadata.namespace === namespace &&
        check()
      ) {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Changes to an existing VM.

export interface HardwareChange {
  sockets?: number;
  cores?: number;
  memoryBytes?: number;
  /** Labels to set (value) or remove (null). */
  labels?: Record<string, string | null>;
  /** Annotations to set (value) or remove (null). */
  annotations?: Record<string, string | null>;
}

/**
 * Applies CPU/memory and metadata in one merge patch. Like Proxmox's config PUT it never restarts the guest: a
 * running VM picks up CPU/memory through KubeVirt's live update where supported, else at its next restart.
 */
export async function changeHardware(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  change: HardwareChange,
): Promise<string | undefined> {
  const vm = requireVm(deps, namespace, name);
  const domain: Record<string, unknown> = {};
  const cpu = asDict(asDict(templateSpec(vm).domain).cpu);
  if (change.sockets !== undefined || change.cores !== undefined) {
    domain.cpu = { ...cpu, sockets: change.sockets ?? num(cpu.sockets, 1), cores: change.cores ?? num(cpu.cores, 1) };
  }
  if (change.memoryBytes !== undefined) domain.memory = { guest: bytesQuantity(change.memoryBytes) };
  const patch: Record<string, unknown> = {};
  if (change.labels || change.annotations) {
    patch.metadata = {
      ...(change.labels ? { labels: change.labels } : {}),
      ...(change.annotations ? { annotations: change.annotations } : {}),
    };
  }
  if (Object.keys(domain).length) patch.spec = { template: { spec: { domain } } };
  if (Object.keys(patch).length === 0) return undefined;
  const summary = [
    change.sockets !== undefined ? `sockets=${change.sockets}` : '',
    change.cores !== undefined ? `cores=${change.cores}` : '',
    change.memoryBytes !== undefined ? `memory=${change.memoryBytes}B` : '',
    change.labels || change.annotations ? 'metadata' : '',
  ]
    .filter(Boolean)
    .join(' ');
  return runAsTask(deps.journal, 'config', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, patch);
    task.done(`updated ${summary}`);
    return task.id;
  });
}

/** Metadata only, without a task (the vmid index persisting a label, tags). */
export async function patchVmMetadata(
  deps: DomainDeps,
  namespace: string,
  name: string,
  labels: Record<string, string | null>,
): Promise<void> {
  await deps.cluster.patch('VirtualMachine', namespace, name, { metadata: { labels } });
}

export async function setTemplateFlag(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  on: boolean,
): Promise<string> {
  requireVm(deps, namespace, name);
  return runAsTask(deps.journal, 'template', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { labels: { [LABEL_TEMPLATE]: on ? 'true' : null } },
    });
    task.done(on ? 'marked as template' : 'template flag removed');
    return task.id;
  });
}

/**
 * Adds disks to an existing VM (new DataVolumes + spec entries, persisted so they survive restarts). The VM spec
 * is replaced as a whole list, so concurrent edits are caught by the apiserver's resourceVersion check.
 */
export async function addDisks(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  disks: DiskPlan[],
  task?: TaskHandle,
): Promise<string> {
  const vm = await liveVm(deps, namespace, name);
  const hw = readHardware(deps, vm);
  for (const d of disks)
    if (hw.disks.some((x) => x.name === d.name))
      throw new CorralError('CONFLICT', `VM ${namespace}/${name} already has a disk ${d.name}`);
  const bp: VmBlueprint = {
    name,
    namespace,
    sockets: 1,
    cores: 1,
    memoryBytes: 0,
    disks,
    nics: [],
    labels: {},
    annotations: {},
    start: false,
  };
  const composed = asDict(asDict(asDict(asDict(buildComposedVm(bp).spec).template).spec));
  const newDisks = asArray(asDict(asDict(composed.domain).devices).disks);
  const newVolumes = asArray(composed.volumes);
  const tspec = templateSpec(vm);
  const own = task ?? deps.journal.start('disk-add', `${namespace}/${name}`, caller.identity.login);
  const created: string[] = [];
  try {
    for (const d of disks) {
      const dv = dataVolumeFor(bp, d);
      if (!dv) continue;
      await deps.cluster.create('DataVolume', dv);
      created.push(dv.metadata.name ?? '');
      own.log(`created DataVolume ${dv.metadata.name}`);
    }
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { resourceVersion: vm.metadata.resourceVersion },
      spec: {
        template: {
          spec: {
            domain: { devices: { disks: [...asArray(asDict(asDict(tspec.domain).devices).disks), ...newDisks] } },
            volumes: [...asArray(tspec.volumes), ...newVolumes],
          },
        },
      },
    });
    own.log(`attached ${disks.map((d) => d.name).join(', ')}`);
  } catch (err) {
    for (const n of created) await deps.cluster.remove('DataVolume', namespace, n).catch(() => undefined);
    own.fail(err);
    throw err;
  }
  if (!task) {
    if (created.length) void followDataVolumes(deps, namespace, created, own);
    else own.done();
  }
  return own.id;
}

/**
 * Adds and removes NICs in the VM spec (interfaces + networks, replaced as whole lists under the VM's
 * resourceVersion). A running VM picks them up at its next restart (or live, where KubeVirt hot-plugs them).
 */
export async function changeNics(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  add: NicPlan[],
  remove: string[],
): Promise<string> {
  const vm = await liveVm(deps, namespace, name);
  const tspec = templateSpec(vm);
  const interfaces = asArray(asDict(asDict(tspec.domain).devices).interfaces).map(asDict);
  const networks = asArray(tspec.networks).map(asDict);
  for (const n of add)
    if (interfaces.some((i) => asString(i.name) === n.name))
      throw new CorralError('CONFLICT', `VM ${namespace}/${name} already has a NIC ${n.name}`);
  const missing = remove.filter((r) => !interfaces.some((i) => asString(i.name) === r));
  if (missing.length) throw new CorralError('BAD_REQUEST', `VM ${namespace}/${name} has no NIC ${missing.join(', ')}`);
  if (
    add.filter((n) => n.network === 'pod').length +
      networks.filter((n) => n.pod && !remove.includes(asString(n.name))).length >
    1
  )
    throw new CorralError('BAD_REQUEST', 'only one NIC can be on the pod network');
  await requireNetworks(deps, namespace, add);
  const composed = asDict(
    asDict(
      asDict(
        buildComposedVm({
          name,
          namespace,
          sockets: 1,
          cores: 1,
          memoryBytes: 0,
          disks: [],
          nics: add,
          labels: {},
          annotations: {},
          start: false,
        }).spec,
      ).template,
    ).spec,
  );
  return runAsTask(deps.journal, 'config', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { resourceVersion: vm.metadata.resourceVersion },
      spec: {
        template: {
          spec: {
            domain: {
              devices: {
                interfaces: [
                  ...interfaces.filter((i) => !remove.includes(asString(i.name))),
                  ...asArray(asDict(asDict(composed.domain).devices).interfaces),
                ],
              },
            },
            networks: [...networks.filter((n) => !remove.includes(asString(n.name))), ...asArray(composed.networks)],
          },
        },
      },
    });
    task.done(
      [
        add.length ? `added ${add.map((n) => n.name).join(', ')}` : '',
        remove.length ? `removed ${remove.join(', ')}` : '',
      ]
        .filter(Boolean)
        .join('; '),
    );
    return task.id;
  });
}

/** Detaches disks from the spec; `purge` also deletes the DataVolume/PVC behind each (PVE `unlink force=1`). */
export async function detachDisks(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  diskNames: string[],
  purge: boolean,
): Promise<string> {
  const vm = await liveVm(deps, namespace, name);
  const hw = readHardware(deps, vm);
  const doomed = hw.disks.filter((d) => diskNames.includes(d.name));
  const missing = diskNames.filter((n) => !doomed.some((d) => d.name === n));
  if (missing.length) throw new CorralError('BAD_REQUEST', `VM ${namespace}/${name} has no disk ${missing.join(', ')}`);
  const tspec = templateSpec(vm);
  return runAsTask(deps.journal, 'disk-detach', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { resourceVersion: vm.metadata.resourceVersion },
      spec: {
        template: {
          spec: {
            domain: {
              devices: {
                disks: asArray(asDict(asDict(tspec.domain).devices).disks).filter(
                  (d) => !diskNames.includes(asString(asDict(d).name)),
                ),
              },
            },
            volumes: asArray(tspec.volumes).filter((v) => !diskNames.includes(asString(asDict(v).name))),
          },
        },
      },
    });
    task.log(`detached ${diskNames.join(', ')}`);
    if (purge) {
      for (const d of doomed) {
        if (!d.claim || d.volume?.kind === 'containerDisk') continue;
        const owned =
          deps.cluster.cache.get('PersistentVolumeClaim', namespace, d.claim)?.metadata.labels?.['corral.dev/vm'] ===
            name ||
          deps.cluster.cache.get('DataVolume', namespace, d.claim)?.metadata.labels?.['corral.dev/vm'] === name;
        // Only volumes made for this VM are deleted; a shared claim (an ISO library) is merely detached.
        if (!owned) continue;
        await deps.cluster.remove('DataVolume', namespace, d.claim);
        await deps.cluster.remove('PersistentVolumeClaim', namespace, d.claim);
        task.log(`deleted volume ${d.claim}`);
      }
    }
    task.done();
    return task.id;
  });
}

/**
 * Grows a disk's claim. The task stays running until the PVC reports the new capacity, and fails with the
 * apiserver's or the resizer's reason (e.g. a StorageClass without allowVolumeExpansion).
 */
export async function resizeDisk(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  diskName: string,
  sizeBytes: number,
): Promise<string> {
  const hw = vmHardware(deps, namespace, name);
  const disk = hw.disks.find((d) => d.name === diskName);
  if (!disk) throw new CorralError('BAD_REQUEST', `VM ${namespace}/${name} has no disk ${diskName}`);
  if (!disk.claim || disk.volume?.kind === 'containerDisk' || disk.volume?.kind === 'cloudInit')
    throw new CorralError(
      'BAD_REQUEST',
      `disk ${diskName} of ${namespace}/${name} is not backed by a volume that can grow`,
    );
  if (disk.sizeBytes !== undefined && sizeBytes < disk.sizeBytes)
    throw new CorralError('BAD_REQUEST', `disk ${diskName}: shrinking is not supported`);
  const task = deps.journal.start('resize', `${namespace}/${name}`, caller.identity.login);
  try {
    await deps.cluster.patch('PersistentVolumeClaim', namespace, disk.claim, {
      spec: { resources: { requests: { storage: bytesQuantity(sizeBytes) } } },
    });
  } catch (err) {
    task.fail(err);
    throw err;
  }
  task.log(`requested ${bytesQuantity(sizeBytes)} for ${disk.claim}`);
  void followExpansion(deps, namespace, disk.claim, sizeBytes, task);
  return task.id;
}

function followExpansion(
  deps: DomainDeps,
  namespace: string,
  claim: string,
  sizeBytes: number,
  task: TaskHandle,
): Promise<void> {
  let seenTarget = false;
  return new Promise((resolve) => {
    const check = (): boolean => {
      const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, claim);
      if (!pvc) {
        task.fail(new Error(`PVC ${claim} disappeared`));
        return true;
      }
      const status = asDict(pvc.status);
      const capacity = quantityToNumber(asString(asDict(status.capacity).storage));
      if (Number.isFinite(capacity) && capacity >= sizeBytes) {
        task.done(`${claim} is now ${asString(asDict(status.capacity).storage)}`);
        return true;
      }
      const conditions = asArray(status.conditions).map(asDict);
      if (conditions.some((c) => c.type === 'FileSystemResizePending' && c.status === 'True')) {
        task.done(`${claim} expanded; its filesystem grows when the VM next (re)starts`);
        return true;
      }
      // The sim and real admission may revert a refused request; only a request that was seen at the target
      // and then went back counts (earlier cache events can still carry the old size).
      const requested = quantityToNumber(claimSize(pvc));
      if (Number.isFinite(requested) && requested >= sizeBytes) seenTarget = true;
      if (seenTarget && Number.isFinite(requested) && requested < sizeBytes) {
        task.fail(
          new Error(
            `resizing ${claim} was refused (its StorageClass may not allow volume expansion); see the PVC's events`,
          ),
        );
        return true;
      }
      const failed = conditions.find((c) => /Fail/i.test(asString(c.type)) && c.status === 'True');
      if (failed) {
        task.fail(new Error(`resizing ${claim} failed: ${asString(failed.message) || asString(failed.type)}`));
        return true;
      }
      return false;
    };
    if (check()) return resolve();
    const timer = setTimeout(() => {
      unsubscribe();
      if (!task.finished)
        task.fail(
          new Error(
            `${claim} did not grow to ${bytesQuantity(sizeBytes)} in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
          ),
        );
      resolve();
    }, deps.config.waitTimeoutMs);
    const unsubscribe = deps.cluster.onChange((e) => {
      if (
        e.kind === 'PersistentVolumeClaim' &&
        e.object.metadata.namespace === namespace &&
        e.object.metadata.name === claim &&
        check()
      ) {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Storage facts.

export interface StorageFact {
  name: string;
  provisioner: string;
  isDefault: boolean;
  expandable: boolean;
}

const STORAGE_TTL_MS = 10_000;
const storageCache = new WeakMap<object, { at: number; facts: StorageFact[] }>();

/** StorageClasses, cached briefly per cluster (they rarely change and are not in the watch cache). */
export async function storageClasses(deps: DomainDeps): Promise<StorageFact[]> {
  const hit = storageCache.get(deps.cluster);
  if (hit && Date.now() - hit.at < STORAGE_TTL_MS) return hit.facts;
  const classes = await deps.cluster.fetchList('StorageClass');
  const annotated = (c: KObject, key: string) => c.metadata.annotations?.[key] === 'true';
  const def =
    classes.find((c) => annotated(c, 'storageclass.kubevirt.io/is-default-virt-class')) ??
    classes.find((c) => annotated(c, 'storageclass.kubernetes.io/is-default-class'));
  const facts = classes
    .map((c) => ({
      name: c.metadata.name ?? '',
      provisioner: asString(c.provisioner),
      isDefault: c === def,
      expandable: c.allowVolumeExpansion === true,
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
  storageCache.set(deps.cluster, { at: Date.now(), facts });
  return facts;
}

/** PVCs in a namespace (from the cache) that no VM owns: the library shared ISOs and images come from. */
export function libraryClaims(
  deps: DomainDeps,
  namespace: string,
): { name: string; sizeBytes?: number; storageClass: string; created: string }[] {
  return (
    deps.cluster.cache
      .list('PersistentVolumeClaim', namespace)
      // DataVolume-made claims count (a library image is usually one); claims owned by a VM do not.
      .filter(
        (p) =>
          !p.metadata.labels?.['corral.dev/vm'] &&
          !p.metadata.ownerReferences?.some((r) => r.kind === 'VirtualMachine'),
      )
      .map((p) => ({
        name: p.metadata.name ?? '',
        ...claimFacts(deps, namespace, p.metadata.name ?? ''),
        created: p.metadata.creationTimestamp ?? '',
      }))
  );
}
