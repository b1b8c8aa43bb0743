/** Disks of an existing VM: add (hot-plugged where it runs), detach, grow; StorageClass facts. */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { patchVmFrom } from './vm-patch';
import { runAsTask, type TaskHandle } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, claimSize, templateSpec, vmiActive } from './vm-facts';
import {
  buildComposedVm,
  dataVolumeFor,
  followDataVolumes,
  plannedClaim,
  type DiskPlan,
  type VmBlueprint,
} from './vm-hw-compose';
import { bytesQuantity, claimFacts, liveVm, readHardware, vmHardware, type DiskFact } from './vm-hw-facts';
import { waitFor } from './vm-hw-wait';

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
    await patchVmFrom(deps, vm, {
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
    await patchVmFrom(deps, vm, {
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

// ---------------------------------------------------------------------------------------------------------------
// Corral's volumes API: a new hot-plugged disk, detach by claim, grow by claim.

export type VolumeBus = 'scsi' | 'virtio' | 'sata';

export interface NewVolume {
  sizeBytes: number;
  /** '' or absent: the cluster's default StorageClass. */
  storageClass?: string;
  bus?: VolumeBus;
}

/** The disk of `vm` whose claim (or, failing that, disk name) is `vol`; 404 when there is none. */
function requireDisk(deps: DomainDeps, vm: KObject, vol: string): DiskFact {
  const hw = readHardware(deps, vm);
  const disk = hw.disks.find((d) => d.claim === vol) ?? hw.disks.find((d) => d.name === vol);
  if (!disk) throw new CorralError('NOT_FOUND', `VM ${hw.namespace}/${hw.name} has no volume ${vol}`);
  return disk;
}

/** The StorageClass named (400 when it does not exist), else the default one ('' when the cluster has none). */
async function resolveStorageClass(deps: DomainDeps, wanted: string | undefined): Promise<StorageFact | undefined> {
  const classes = await storageClasses(deps);
  if (!wanted) return classes.find((c) => c.isDefault);
  const found = classes.find((c) => c.name === wanted);
  if (!found)
    throw new CorralError(
      'BAD_REQUEST',
      `storageClass: no StorageClass '${wanted}' in the cluster (there are: ${classes.map((c) => c.name).join(', ') || 'none'})`,
    );
  return found;
}

/**
 * A new blank disk `<vm>-disk-<n>` on a VM, as a task: a DataVolume plus a hot-plug volume persisted in the VM's
 * template (so it is still there after a restart). On a running VM KubeVirt attaches it live; the task ends when
 * the DataVolume is ready and, for a running VM, the volume is attached (volumeStatus Ready).
 */
export async function addVolume(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  req: NewVolume,
): Promise<{ pvc: string; disk: string; task: string }> {
  const id = `VM ${namespace}/${name}`;
  const vm = requireVm(deps, namespace, name);
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `${id} is being deleted`);
  const bus = req.bus ?? 'scsi';
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const active = vmiActive(vmi);
  if (active && bus === 'sata')
    throw new CorralError(
      'CONFLICT',
      `${id} is running and a sata disk cannot be hot-plugged: use bus scsi or virtio, or stop the VM first`,
    );
  const storageClass = await resolveStorageClass(deps, req.storageClass);
  const hw = readHardware(deps, vm);
  let n = 1;
  const taken = (k: number) =>
    hw.disks.some((d) => d.name === `disk-${k}` || d.claim === `${name}-disk-${k}`) ||
    !!deps.cluster.cache.get('PersistentVolumeClaim', namespace, `${name}-disk-${k}`) ||
    !!deps.cluster.cache.get('DataVolume', namespace, `${name}-disk-${k}`);
  while (taken(n)) n++;
  const plan: DiskPlan = {
    name: `disk-${n}`,
    bus,
    cdrom: false,
    hotplug: true,
    backing: { blank: { sizeBytes: req.sizeBytes, storageClass: storageClass?.name ?? '' } },
  };
  const pvc = plannedClaim(name, plan);
  const task = deps.journal.start('disk-add', `${namespace}/${name}`, caller.identity.login);
  await addDisks(deps, caller, namespace, name, [plan], task);
  task.progress(30);
  void waitFor(
    deps,
    namespace,
    ['DataVolume', 'PersistentVolumeClaim', 'VirtualMachineInstance'],
    () => {
      const dv = asDict(deps.cluster.cache.get('DataVolume', namespace, pvc)?.status);
      if (dv.phase === 'Failed')
        return `DataVolume ${pvc} failed: ${
          asArray(dv.conditions)
            .map((c) => asString(asDict(c).message))
            .filter(Boolean)
            .join('; ') || 'see its events'
        }`;
      if (dv.phase !== 'Succeeded') return false;
      const now = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
      if (!active || !vmiActive(now)) return true;
      const st = asArray(asDict(now?.status).volumeStatus)
        .map(asDict)
        .find((s) => s.name === plan.name);
      return asString(st?.phase) === 'Ready';
    },
    `attaching ${pvc}`,
  ).then(
    () =>
      task.done(active ? `${pvc} is attached to the running VM` : `${pvc} is ready; it is attached at the next start`),
    (err: unknown) => task.fail(err),
  );
  return { pvc, disk: plan.name, task: task.id };
}

/**
 * Detaches the volume `vol` (claim or disk name) as a task; `purge` also deletes its DataVolume/PVC when it was
 * made for this VM. A running VM lets go of hot-plugged volumes only: others need the VM stopped (409).
 */
export async function removeVolume(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  vol: string,
  purge: boolean,
): Promise<{ disk: string; task: string }> {
  const vm = requireVm(deps, namespace, name);
  const disk = requireDisk(deps, vm, vol);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  if (vmiActive(vmi) && !disk.volume?.hotpluggable)
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name} is running and ${vol} is not hot-plugged: stop the VM first to detach it`,
    );
  const task = await detachDisks(deps, caller, namespace, name, [disk.name], purge);
  return { disk: disk.name, task };
}

/**
 * Grows the volume `pvc` of a VM to `sizeBytes` as a task. 400 when that is smaller than it is now; 409 naming the
 * StorageClass when it does not allow volume expansion.
 */
export async function expandVolume(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  pvc: string,
  sizeBytes: number,
): Promise<{ task: string; size: string }> {
  const vm = requireVm(deps, namespace, name);
  const disk = requireDisk(deps, vm, pvc);
  if (!disk.claim || disk.volume?.kind === 'containerDisk' || disk.volume?.kind === 'cloudInit')
    throw new CorralError('BAD_REQUEST', `pvc: ${pvc} of VM ${namespace}/${name} is not a volume that can grow`);
  if (disk.sizeBytes !== undefined && sizeBytes < disk.sizeBytes)
    throw new CorralError(
      'BAD_REQUEST',
      `size: ${bytesQuantity(sizeBytes)} is smaller than ${disk.claim}'s ${bytesQuantity(disk.sizeBytes)}; volumes only grow`,
    );
  const classes = await storageClasses(deps);
  const sc = disk.storageClass ? classes.find((c) => c.name === disk.storageClass) : classes.find((c) => c.isDefault);
  if (sc && !sc.expandable)
    throw new CorralError(
      'CONFLICT',
      `storage class ${sc.name} cannot expand (allowVolumeExpansion is not true), so ${disk.claim} cannot grow`,
    );
  if (disk.sizeBytes === sizeBytes) {
    const task = deps.journal.start('resize', `${namespace}/${name}`, caller.identity.login);
    task.done(`${disk.claim} is already ${bytesQuantity(sizeBytes)}`);
    return { task: task.id, size: bytesQuantity(sizeBytes) };
  }
  const task = await resizeDisk(deps, caller, namespace, name, disk.name, sizeBytes);
  return { task, size: bytesQuantity(sizeBytes) };
}
