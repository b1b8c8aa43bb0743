/**
 * VM snapshots (KubeVirt VirtualMachineSnapshot / VirtualMachineRestore): list, create, delete, restore. Each
 * mutation is a task that stays running until KubeVirt reports the end state (snapshot ready, restore complete,
 * snapshot gone), so callers polling the task see the real outcome. A snapshot's display name may differ from its
 * object name (Proxmox names allow upper case and `_`); it is kept in an annotation.
 */
import { createHash } from 'node:crypto';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { LABEL_VM } from './labels';
import type { TaskHandle } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, printableStatus, vmiActive } from './vm-facts';

export const ANNOTATION_SNAPSHOT_NAME = 'corral.dev/snapshot-name';
export const ANNOTATION_SNAPSHOT_DESCRIPTION = 'corral.dev/snapshot-description';

export interface SnapshotRow {
  /** Display name (the annotation, else the object name). */
  name: string;
  object: string;
  phase: string;
  creationTime: string;
  description: string;
  readyToUse: boolean;
  error: string;
}

function toRow(s: KObject): SnapshotRow {
  const status = asDict(s.status);
  const err = asDict(status.error);
  return {
    name: s.metadata.annotations?.[ANNOTATION_SNAPSHOT_NAME] ?? s.metadata.name ?? '',
    object: s.metadata.name ?? '',
    phase: asString(status.phase) || 'InProgress',
    creationTime: asString(status.creationTime) || (s.metadata.creationTimestamp ?? ''),
    description: s.metadata.annotations?.[ANNOTATION_SNAPSHOT_DESCRIPTION] ?? '',
    readyToUse: status.readyToUse === true,
    error: asString(err.message),
  };
}

async function snapshotObjects(deps: DomainDeps, namespace: string, vm: string): Promise<KObject[]> {
  const all = await deps.cluster.fetchList('VirtualMachineSnapshot', { namespace });
  return all.filter((s) => asString(asDict(asDict(s.spec).source).name) === vm);
}

/** Oldest first, as a snapshot tree reads. */
export async function listSnapshots(deps: DomainDeps, namespace: string, vm: string): Promise<SnapshotRow[]> {
  requireVm(deps, namespace, vm);
  return (await snapshotObjects(deps, namespace, vm))
    .map(toRow)
    .sort((a, b) => a.creationTime.localeCompare(b.creationTime) || a.name.localeCompare(b.name));
}

/** A DNS-1123 object name for a display name: lower-cased, `_` → `-`, plus a short hash when that changed it. */
export function snapshotObjectName(vm: string, display: string): string {
  const clean = display.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  const suffix = clean === display ? '' : `-${createHash('sha1').update(display).digest('hex').slice(0, 6)}`;
  return `${vm}-${clean}${suffix}`.slice(0, 253).replace(/-+$/, '');
}

async function findSnapshot(
  deps: DomainDeps,
  namespace: string,
  vm: string,
  display: string,
): Promise<KObject | undefined> {
  return (await snapshotObjects(deps, namespace, vm)).find((s) => toRow(s).name === display);
}

/** Polls a live (uncached) object until `done` says so; the snapshot kinds are not in the watch cache. */
async function waitFor(deps: DomainDeps, what: string, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + deps.config.waitTimeoutMs;
  while (Date.now() < deadline) {
    if (await probe()) return;
    await sleep(Math.min(deps.config.pollMs, 500));
  }
  throw new CorralError('TIMEOUT', `${what} did not finish in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`);
}

/** Runs a background task body, recording its end; the caller gets the task id at once. */
function background(
  deps: DomainDeps,
  action: string,
  target: string,
  caller: Caller,
  body: (task: TaskHandle) => Promise<void>,
  onTask?: (t: TaskHandle) => void,
): string {
  const task = deps.journal.start(action, target, caller.identity.login);
  onTask?.(task);
  void body(task).then(
    () => {
      if (!task.finished) task.done();
    },
    (err: unknown) => task.fail(err),
  );
  return task.id;
}

export async function createSnapshot(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  vm: string,
  display: string,
  description = '',
  onTask?: (t: TaskHandle) => void,
): Promise<string> {
  requireVm(deps, namespace, vm);
  if (await findSnapshot(deps, namespace, vm, display))
    throw new CorralError('CONFLICT', `snapshot name '${display}' already used`);
  const object = snapshotObjectName(vm, display);
  await deps.cluster.create('VirtualMachineSnapshot', {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshot',
    metadata: {
      name: object,
      namespace,
      labels: { [LABEL_VM]: vm },
      annotations: {
        [ANNOTATION_SNAPSHOT_NAME]: display,
        ...(description ? { [ANNOTATION_SNAPSHOT_DESCRIPTION]: description } : {}),
      },
    },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm } },
  });
  return background(
    deps,
    'snapshot',
    `${namespace}/${vm}`,
    caller,
    async (task) => {
      task.log(`VirtualMachineSnapshot ${object} created`);
      let lastPhase = '';
      await waitFor(deps, `snapshot ${display}`, async () => {
        const s = await deps.cluster.fetch('VirtualMachineSnapshot', namespace, object);
        if (!s) throw new CorralError('NOT_FOUND', `snapshot ${object} disappeared`);
        const row = toRow(s);
        if (row.phase !== lastPhase) task.log(`phase ${(lastPhase = row.phase)}`);
        if (row.phase === 'Failed')
          throw new CorralError('BAD_GATEWAY', `snapshot ${display} failed${row.error ? `: ${row.error}` : ''}`);
        return row.phase === 'Succeeded' && row.readyToUse;
      });
      task.done(`snapshot ${display} ready`);
    },
    onTask,
  );
}

export async function deleteSnapshot(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  vm: string,
  display: string,
  onTask?: (t: TaskHandle) => void,
): Promise<string> {
  requireVm(deps, namespace, vm);
  const s = await findSnapshot(deps, namespace, vm, display);
  if (!s) throw new CorralError('NOT_FOUND', `snapshot '${display}' does not exist`);
  const object = s.metadata.name ?? '';
  await deps.cluster.remove('VirtualMachineSnapshot', namespace, object);
  return background(
    deps,
    'snapshot-delete',
    `${namespace}/${vm}`,
    caller,
    async (task) => {
      task.log(`deleting VirtualMachineSnapshot ${object}`);
      await waitFor(
        deps,
        `deleting snapshot ${display}`,
        async () => !(await deps.cluster.fetch('VirtualMachineSnapshot', namespace, object)),
      );
      task.done(`snapshot ${display} deleted`);
    },
    onTask,
  );
}

/**
 * Restores the VM to a snapshot. KubeVirt only restores a stopped VM: a running one is stopped first (as
 * Proxmox's rollback does), and it stays stopped afterwards unless `startAfter`.
 */
export async function restoreSnapshot(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  vm: string,
  display: string,
  options: { startAfter?: boolean } = {},
  onTask?: (t: TaskHandle) => void,
): Promise<string> {
  requireVm(deps, namespace, vm);
  const s = await findSnapshot(deps, namespace, vm, display);
  if (!s) throw new CorralError('NOT_FOUND', `snapshot '${display}' does not exist`);
  if (!toRow(s).readyToUse) throw new CorralError('CONFLICT', `snapshot '${display}' is not ready (${toRow(s).phase})`);
  const object = s.metadata.name ?? '';
  return background(
    deps,
    'rollback',
    `${namespace}/${vm}`,
    caller,
    async (task) => {
      const isActive = () => vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, vm));
      if (isActive()) {
        task.log('stopping the VM for the rollback');
        await deps.cluster.subresource('virtualmachines', namespace, vm, 'stop');
        await waitFor(deps, `stopping ${namespace}/${vm}`, () => Promise.resolve(!isActive()));
      } else if (asString(asDict(requireVm(deps, namespace, vm).spec).runStrategy) === 'Always') {
        await deps.cluster.patch('VirtualMachine', namespace, vm, { spec: { runStrategy: 'Halted' } });
      }
      const restore = `${object}-restore-${Date.now().toString(36)}`;
      await deps.cluster.create('VirtualMachineRestore', {
        apiVersion: 'snapshot.kubevirt.io/v1beta1',
        kind: 'VirtualMachineRestore',
        metadata: { name: restore, namespace, labels: { [LABEL_VM]: vm } },
        spec: {
          target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vm },
          virtualMachineSnapshotName: object,
        },
      });
      task.log(`VirtualMachineRestore ${restore} created`);
      await waitFor(deps, `restore of ${display}`, async () => {
        const r = await deps.cluster.fetch('VirtualMachineRestore', namespace, restore);
        if (!r) throw new CorralError('NOT_FOUND', `restore ${restore} disappeared`);
        const status = asDict(r.status);
        const failed = asArray(status.conditions)
          .map(asDict)
          .find((c) => c.type === 'Failure' && c.status === 'True');
        if (failed)
          throw new CorralError(
            'BAD_GATEWAY',
            `restore failed: ${asString(failed.message) || asString(failed.reason)}`,
          );
        return status.complete === true;
      });
      task.log(`restored; VM is ${printableStatus(requireVm(deps, namespace, vm))}`);
      if (options.startAfter) {
        await deps.cluster.patch('VirtualMachine', namespace, vm, { spec: { runStrategy: 'Always' } });
        task.log('started');
      }
      task.done(`rolled back to ${display}`);
    },
    onTask,
  );
}
