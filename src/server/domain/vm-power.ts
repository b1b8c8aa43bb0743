/**
 * Power actions that end when the VM has reached the state asked for, not when KubeVirt accepted the request.
 * Proxmox clients poll one task per action and then trust the VM's status, so the task stays `running` while the
 * guest boots or shuts down and ends with the real outcome (or the reason it could not get there).
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import type { TaskHandle } from './tasks';
import { refusal, requireVm } from './vm-actions';
import { asDict, asString, printableStatus, vmiActive, vmiPaused, vmiPhase } from './vm-facts';

export type PowerAction = 'start' | 'stop' | 'shutdown' | 'restart' | 'reset' | 'pause' | 'unpause';

/** A VM state an action waits for. */
type Goal = (vm: KObject | undefined, vmi: KObject | undefined) => boolean;

// Both the instance and the VM's printableStatus must agree: clients read the status right after the task ends.
const running: Goal = (vm, vmi) =>
  vmiActive(vmi) && vmiPhase(vmi) === 'Running' && !vmiPaused(vmi) && !!vm && printableStatus(vm) === 'Running';
const stopped: Goal = (vm, vmi) =>
  !vmiActive(vmi) &&
  !!vm &&
  !['Running', 'Paused', 'Migrating', 'Stopping', 'Terminating', 'Starting'].includes(printableStatus(vm));
const paused: Goal = (vm, vmi) => vmiPaused(vmi) && !!vm && printableStatus(vm) === 'Paused';

const GOALS: Record<PowerAction, Goal> = {
  start: running,
  stop: stopped,
  shutdown: stopped,
  restart: running,
  reset: running,
  pause: paused,
  unpause: running,
};

/** Shutting down: KubeVirt has been told to stop it and has not reported it stopped yet. */
function isGoingDown(vm: KObject): boolean {
  return ['Stopping', 'Terminating'].includes(printableStatus(vm));
}

/** Why the action cannot run now, in Corral's words (the translator rephrases for its clients). */
export function powerRefusal(
  deps: DomainDeps,
  namespace: string,
  name: string,
  action: PowerAction,
): string | undefined {
  const vm = requireVm(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const base = action === 'shutdown' ? 'stop' : action === 'reset' ? 'restart' : action;
  return refusal(base, vm, vmi);
}

async function invoke(deps: DomainDeps, vm: KObject, action: PowerAction): Promise<void> {
  const namespace = vm.metadata.namespace ?? '';
  const name = vm.metadata.name ?? '';
  switch (action) {
    case 'start': {
      const spec = asDict(vm.spec);
      if (asString(spec.runStrategy) === 'Always' || spec.running === true) {
        // Always without an instance: KubeVirt refuses the start verb, so re-assert the intent on the spec.
        await deps.cluster.patch('VirtualMachine', namespace, name, { spec: { runStrategy: 'Always', running: null } });
        return;
      }
      await deps.cluster.subresource('virtualmachines', namespace, name, 'start');
      return;
    }
    case 'stop':
      // Proxmox's stop pulls the plug: no grace period.
      await deps.cluster.subresource('virtualmachines', namespace, name, 'stop', { gracePeriod: 0 });
      return;
    case 'shutdown':
      await deps.cluster.subresource('virtualmachines', namespace, name, 'stop');
      return;
    case 'restart':
      await deps.cluster.subresource('virtualmachines', namespace, name, 'restart');
      return;
    case 'reset':
      await deps.cluster.subresource('virtualmachines', namespace, name, 'restart', { gracePeriodSeconds: 0 });
      return;
    case 'pause':
      await deps.cluster.subresource('virtualmachineinstances', namespace, name, 'pause');
      return;
    case 'unpause':
      await deps.cluster.subresource('virtualmachineinstances', namespace, name, 'unpause');
      return;
  }
}

/**
 * Runs the action as a task and resolves with its id once KubeVirt accepted it; the task itself ends when the
 * VM reaches the goal state, fails with the VM's status when it does not within `timeoutMs`. A refusal (start a
 * running VM, ...) is thrown before any task exists.
 */
export async function powerAction(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  action: PowerAction,
  options: { timeoutMs?: number; onTask?: (task: TaskHandle) => void } = {},
): Promise<string> {
  const vm = requireVm(deps, namespace, name);
  const why = powerRefusal(deps, namespace, name, action);
  // A stop of a VM already on its way down (its instance gone, its status not yet Stopped) joins that shutdown:
  // Proxmox clients see such a VM as `running`, send a stop, and expect a task that ends once it is stopped.
  const joinShutdown = why !== undefined && (action === 'stop' || action === 'shutdown') && isGoingDown(vm);
  if (why && !joinShutdown) throw new CorralError('CONFLICT', why);
  const vmiBefore = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const uidBefore = vmiBefore?.metadata.uid;
  const task = deps.journal.start(action, `${namespace}/${name}`, caller.identity.login);
  options.onTask?.(task);
  if (joinShutdown) {
    task.log(`VM is already ${printableStatus(vm)}: waiting for it to stop`);
  } else {
    try {
      await invoke(deps, vm, action);
    } catch (err) {
      task.fail(err);
      throw err;
    }
    task.log(`${action} requested`);
  }
  const goal = GOALS[action];
  // A restart must see a new instance, otherwise the old one (still Running) satisfies "running" at once.
  const reached = (): boolean => {
    const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
    const fresh = action === 'restart' || action === 'reset' ? vmi?.metadata.uid !== uidBefore : true;
    return fresh && goal(deps.cluster.cache.get('VirtualMachine', namespace, name), vmi);
  };
  const timeoutMs = options.timeoutMs ?? deps.config.waitTimeoutMs;
  void new Promise<void>((resolve) => {
    let lastStatus = '';
    const check = (): boolean => {
      const current = deps.cluster.cache.get('VirtualMachine', namespace, name);
      if (!current) {
        task.fail(new Error(`VM ${namespace}/${name} was deleted`));
        return true;
      }
      const status = printableStatus(current);
      if (status !== lastStatus) task.log(`status ${(lastStatus = status)}`);
      if (reached()) {
        task.done(`${action}: VM is ${status}`);
        return true;
      }
      if (action === 'start' && /^(Error|CrashLoop)/.test(status)) {
        task.fail(new Error(`VM ${namespace}/${name} did not start: ${status}`));
        return true;
      }
      return false;
    };
    const finish = () => {
      unsubscribe();
      clearTimeout(timer);
      resolve();
    };
    const unsubscribe = deps.cluster.onChange((e) => {
      if (
        (e.kind === 'VirtualMachine' || e.kind === 'VirtualMachineInstance') &&
        e.object.metadata.namespace === namespace &&
        e.object.metadata.name === name &&
        check()
      )
        finish();
    });
    const timer = setTimeout(() => {
      unsubscribe();
      if (!task.finished)
        task.fail(
          new Error(
            `${action} of ${namespace}/${name} did not finish in ${Math.round(timeoutMs / 1000)}s (status ${lastStatus})`,
          ),
        );
      resolve();
    }, timeoutMs);
    if (check()) finish();
  });
  return task.id;
}
