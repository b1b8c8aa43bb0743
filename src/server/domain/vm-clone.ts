/**
 * Clone a VM with KubeVirt's VirtualMachineClone: disks are snapshotted and restored into the new VM, MACs and
 * firmware UUID are renewed. The task stays running until the clone has Succeeded (or failed with KubeVirt's
 * reason), then the new VM gets its own labels (Corral's ownership label, and whatever the caller adds, e.g. a
 * Proxmox vmid) — identity labels of the source are filtered out so the copy never claims the source's identity.
 */
import { CorralError } from '../errors';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { LABEL_TEMPLATE, LABEL_VM, LABEL_VMID } from './labels';
import type { TaskHandle } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString } from './vm-facts';

export interface CloneOptions {
  /** Labels set on the new VM once it exists. */
  labels?: Record<string, string>;
  /** Annotations set on the new VM once it exists. */
  annotations?: Record<string, string>;
  /** Interface name → MAC for the new VM (KubeVirt generates the others). */
  macs?: Record<string, string>;
  /** Start the new VM once the clone has succeeded (the clone is created Halted). */
  start?: boolean;
  /** false: the new VM is Manual (not started on boot), as its source; otherwise Halted, Always once started. */
  startOnBoot?: boolean;
}

/** How far a VirtualMachineClone has got, by phase, for the task's progress. */
const CLONE_PROGRESS: Record<string, number> = {
  SnapshotInProgress: 20,
  CreatingTargetVM: 50,
  RestoreInProgress: 70,
  Succeeded: 95,
};

export async function cloneVm(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  source: string,
  target: string,
  options: CloneOptions = {},
  onTask?: (task: TaskHandle) => void,
): Promise<string> {
  requireVm(deps, namespace, source);
  if (deps.cluster.cache.get('VirtualMachine', namespace, target))
    throw new CorralError('CONFLICT', `VM ${namespace}/${target} already exists`);
  const name = `${target}-clone-${Date.now().toString(36)}`;
  await deps.cluster.create('VirtualMachineClone', {
    apiVersion: 'clone.kubevirt.io/v1beta1',
    kind: 'VirtualMachineClone',
    metadata: { name, namespace, labels: { [LABEL_VM]: target } },
    spec: {
      source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: source },
      target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: target },
      labelFilters: ['*', `!${LABEL_VMID}`, `!${LABEL_TEMPLATE}`, `!${LABEL_VM}`],
      ...(options.macs ? { newMacAddresses: options.macs } : {}),
    },
  });
  const task = deps.journal.start('clone', `${namespace}/${source}`, caller.identity.login);
  onTask?.(task);
  task.log(`VirtualMachineClone ${name}: ${source} → ${target}`);
  task.progress(5);
  void (async () => {
    const deadline = Date.now() + deps.config.waitTimeoutMs;
    let last = '';
    for (;;) {
      const clone = await deps.cluster.fetch('VirtualMachineClone', namespace, name);
      if (!clone) throw new CorralError('NOT_FOUND', `VirtualMachineClone ${name} disappeared`);
      const status = asDict(clone.status);
      const phase = asString(status.phase);
      if (phase && phase !== last) task.log(`phase ${(last = phase)}`);
      if (CLONE_PROGRESS[phase]) task.progress(CLONE_PROGRESS[phase]);
      if (phase === 'Succeeded') break;
      if (phase === 'Failed') {
        const cond = asArray(status.conditions)
          .map(asDict)
          .find((c) => asString(c.message));
        throw new CorralError('BAD_GATEWAY', `clone failed${cond ? `: ${asString(cond.message)}` : ''}`);
      }
      if (Date.now() > deadline)
        throw new CorralError(
          'TIMEOUT',
          `clone of ${source} did not finish in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
        );
      await sleep(Math.min(deps.config.pollMs, 500));
    }
    await deps.cluster.patch('VirtualMachine', namespace, target, {
      metadata: {
        labels: { [LABEL_VM]: target, ...(options.labels ?? {}) },
        ...(options.annotations ? { annotations: options.annotations } : {}),
      },
    });
    if (options.startOnBoot === false) {
      await deps.cluster.patch('VirtualMachine', namespace, target, { spec: { runStrategy: 'Manual', running: null } });
      if (options.start) {
        await deps.cluster.subresource('virtualmachines', namespace, target, 'start');
        task.log(`started ${target}`);
      }
    } else if (options.start) {
      await deps.cluster.patch('VirtualMachine', namespace, target, { spec: { runStrategy: 'Always', running: null } });
      task.log(`started ${target}`);
    }
    task.done(`cloned ${source} to ${target}`);
  })().catch((err: unknown) => task.fail(err));
  return task.id;
}
