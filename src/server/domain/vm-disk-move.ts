/**
 * Moving a VM's disk to another StorageClass (PVE `move_disk`). Stopped: CDI clones the claim into a new DataVolume
 * on the target class, the task follows the clone's progress, then the VM's volume is switched to the copy under the
 * VM's resourceVersion (so a concurrent edit fails instead of being lost). Running: a blank DataVolume on the target
 * class and a KubeVirt volume migration copy the disk while the guest runs (vm-disk-move-live.ts). Either way the
 * old volume is deleted only when asked.
 */
import { CorralError } from '../errors';
import { patchVmFrom } from './vm-patch';
import type { ChangeEvent, KObject } from './cluster-port';
import { parseProgress } from './datavolumes';
import type { Caller, DomainDeps } from './deps';
import type { TaskHandle } from './tasks';
import { storageClasses } from './vm-hw-disks';
import { liveVm, readHardware } from './vm-hw-facts';
import { asArray, asDict, asString, printableStatus, vmiActive } from './vm-facts';
import { buildDataVolume } from './vm-spec';
import { gatesOffMessage, migrateVolume, volumeMigrationGatesOff } from './vm-disk-move-live';

export interface DiskMoveInput {
  /** The disk's name in the VM spec. */
  disk: string;
  storageClass: string;
  /** Delete the old volume once the VM uses the copy (PVE `delete=1`); otherwise it stays, unattached. */
  deleteSource: boolean;
  /** Annotations to set on the VM in the same patch that switches the volume (a door's own bookkeeping). */
  annotations?: Record<string, string>;
}

export interface DiskMovePlan {
  claim: string;
  target: string;
  size: string;
}

/** A name for the copy: the claim's, with a short suffix, within 63 characters. */
export function copyName(claim: string, now: number): string {
  const suffix = `-mv${(now % 36 ** 5).toString(36)}`;
  return `${claim.slice(0, 63 - suffix.length).replace(/-+$/, '')}${suffix}`;
}

export async function moveDisk(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  input: DiskMoveInput,
): Promise<string> {
  const vm = await liveVm(deps, namespace, name);
  const hw = readHardware(deps, vm);
  const disk = hw.disks.find((d) => d.name === input.disk);
  if (!disk) throw new CorralError('BAD_REQUEST', `disk: VM ${namespace}/${name} has no disk ${input.disk}`);
  if (!disk.claim || disk.volume?.kind === 'containerDisk' || disk.volume?.kind === 'cloudInit')
    throw new CorralError(
      'BAD_REQUEST',
      `disk: ${input.disk} is a ${disk.volume?.kind ?? 'non-volume'} disk; only a disk on a PersistentVolumeClaim can move`,
    );
  const classes = await storageClasses(deps);
  if (!classes.some((c) => c.name === input.storageClass))
    throw new CorralError('BAD_REQUEST', `storageClass: no StorageClass named '${input.storageClass}'`);
  const current = disk.storageClass || classes.find((c) => c.isDefault)?.name || '';
  if (current === input.storageClass)
    throw new CorralError('CONFLICT', `disk ${input.disk} is already on StorageClass ${input.storageClass}`);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const running = vmiActive(vmi);
  if (running) {
    const phase = asString(asDict(vmi?.status).phase);
    if (phase !== 'Running')
      throw new CorralError(
        'CONFLICT',
        `VM ${namespace}/${name} is ${printableStatus(vm)}: its disk can move once it runs or is stopped`,
      );
    if (disk.volume?.hotpluggable)
      throw new CorralError(
        'CONFLICT',
        `disk ${input.disk} is hot-plugged: a volume migration moves only the disks the VM started with; stop the VM first`,
      );
    const off = await volumeMigrationGatesOff(deps);
    if (off.length) throw new CorralError('CONFLICT', gatesOffMessage(off));
    const inFlight = asArray(asDict(vmi?.status).migratedVolumes).length > 0;
    if (inFlight)
      throw new CorralError(
        'CONFLICT',
        `VM ${namespace}/${name} has a volume migration in progress; wait for it to end`,
      );
  }
  const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, disk.claim);
  const size =
    asString(asDict(asDict(pvc?.status).capacity).storage) ||
    asString(asDict(asDict(asDict(pvc?.spec).resources).requests).storage);
  if (!size) throw new CorralError('CONFLICT', `claim ${namespace}/${disk.claim} has no size yet (is it bound?)`);
  const copy = copyName(disk.claim, Date.now());
  // A running VM's copy starts blank: the volume migration writes the disk's content into it.
  const dv = buildDataVolume(
    name,
    namespace,
    copy,
    size,
    running ? { blank: {} } : { pvc: { namespace, name: disk.claim } },
  );
  (asDict(dv.spec).storage as Record<string, unknown>).storageClassName = input.storageClass;

  const task = deps.journal.start('disk-move', `${namespace}/${name}`, caller.identity.login);
  task.log(
    running
      ? `VM is running: moving ${disk.claim} (${size}, ${current || 'default class'}) to ${copy} on ${input.storageClass} by a volume migration`
      : `cloning ${disk.claim} (${size}, ${current || 'default class'}) to ${copy} on ${input.storageClass}`,
  );
  try {
    await deps.cluster.create('DataVolume', dv);
  } catch (err) {
    task.fail(err);
    throw err;
  }
  const move = { disk: input.disk, from: disk.claim, copy };
  void finishMove(deps, namespace, move, input, task, async () => {
    if (running) {
      await followClone(deps, namespace, copy, task, 10);
      const live = { ...move, storageClass: input.storageClass, deleteSource: input.deleteSource };
      await migrateVolume(deps, namespace, name, vm, { ...live, annotations: input.annotations }, task);
    } else {
      await followClone(deps, namespace, copy, task);
      await switchVolume(deps, vm, move, input);
    }
  });
  return task.id;
}

/**
 * The rest of a move, in the background: `useCopy` waits for the copy and puts it in the VM, then the old volume is
 * deleted or kept as asked. On any failure the task fails and the copy, used by nothing, is removed rather than
 * left behind as a stray claim.
 */
async function finishMove(
  deps: DomainDeps,
  namespace: string,
  move: { disk: string; from: string; copy: string },
  input: DiskMoveInput,
  task: TaskHandle,
  useCopy: () => Promise<void>,
): Promise<void> {
  try {
    await useCopy();
    await finishSource(deps, namespace, move, input, task);
  } catch (err) {
    task.fail(err);
    await deps.cluster.remove('DataVolume', namespace, move.copy).catch(() => false);
  }
}

/** A stopped VM's volume switches to the copy, against the VM read before the clone: an edit in between conflicts. */
async function switchVolume(
  deps: DomainDeps,
  vm: KObject,
  move: { disk: string; from: string; copy: string },
  input: DiskMoveInput,
): Promise<void> {
  const tspec = asDict(asDict(vm.spec).template).spec as Record<string, unknown> | undefined;
  const volumes = asArray(tspec?.volumes).map((raw) => {
    const v = asDict(raw);
    if (asString(v.name) !== move.disk) return v;
    return { name: move.disk, dataVolume: { name: move.copy } };
  });
  const templates = asArray(asDict(vm.spec).dataVolumeTemplates).filter(
    (t) => asString(asDict(asDict(t).metadata).name) !== move.from,
  );
  await patchVmFrom(deps, vm, {
    metadata: input.annotations ? { annotations: input.annotations } : {},
    spec: {
      ...(asArray(asDict(vm.spec).dataVolumeTemplates).length ? { dataVolumeTemplates: templates } : {}),
      template: { spec: { volumes } },
    },
  });
}

async function finishSource(
  deps: DomainDeps,
  namespace: string,
  move: { disk: string; from: string; copy: string },
  input: DiskMoveInput,
  task: TaskHandle,
): Promise<void> {
  task.log(`disk ${move.disk} now uses ${move.copy} on ${input.storageClass}`);
  if (input.deleteSource) {
    await deps.cluster.remove('DataVolume', namespace, move.from);
    await deps.cluster.remove('PersistentVolumeClaim', namespace, move.from);
    task.log(`deleted the old volume ${move.from}`);
  } else task.log(`the old volume ${move.from} is kept, no longer attached`);
  task.done(`moved ${move.disk} to ${input.storageClass}`);
}

/** Wait for the copy's DataVolume to succeed, reporting its progress as up to `share` % of the task. */
function followClone(deps: DomainDeps, namespace: string, name: string, task: TaskHandle, share = 95): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let lastPhase = '';
    const look = (dv: KObject | undefined): boolean => {
      if (!dv) {
        reject(new CorralError('CONFLICT', `DataVolume ${namespace}/${name} was deleted before the clone finished`));
        return true;
      }
      const status = asDict(dv.status);
      const phase = asString(status.phase);
      if (phase && phase !== lastPhase) task.log(`${share === 95 ? 'clone' : 'copy'} ${(lastPhase = phase)}`);
      const progress = parseProgress(status.progress);
      if (progress !== null) task.progress(Math.min(share, (progress * share) / 100));
      if (phase === 'Succeeded') {
        resolve();
        return true;
      }
      if (phase === 'Failed') {
        reject(new CorralError('BAD_GATEWAY', `clone into ${namespace}/${name} failed`));
        return true;
      }
      return false;
    };
    const finish = () => {
      unsubscribe();
      clearTimeout(timer);
    };
    const unsubscribe = deps.cluster.onChange((e: ChangeEvent) => {
      if (e.kind !== 'DataVolume' || e.object.metadata.namespace !== namespace || e.object.metadata.name !== name)
        return;
      if (look(e.type === 'DELETED' ? undefined : e.object)) finish();
    });
    const timer = setTimeout(() => {
      finish();
      reject(
        new CorralError(
          'TIMEOUT',
          `clone into ${namespace}/${name} did not finish in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
        ),
      );
    }, deps.config.waitTimeoutMs);
    timer.unref?.();
    const now = deps.cluster.cache.get('DataVolume', namespace, name);
    if (now && look(now)) finish();
  });
}
