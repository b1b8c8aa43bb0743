/**
 * Power actions and live migration. Each checks the cached state first so an impossible action is a 409 with the
 * reason (not a round-trip that KubeVirt may answer ambiguously), then calls the KubeVirt subresource verb.
 */
import type { VmAction } from '../schemas/vms';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { runAsTask } from './tasks';
import { pinVm } from './vm-pin';
import {
  asDict,
  asString,
  isLiveMigratable,
  printableStatus,
  vmiActive,
  vmiNode,
  vmiPaused,
  vmiPhase,
} from './vm-facts';

export function requireVm(deps: DomainDeps, namespace: string, name: string): KObject {
  const vm = deps.cluster.cache.get('VirtualMachine', namespace, name);
  if (!vm) throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} not found`);
  return vm;
}

/** Why `action` cannot run now, or undefined when it can. */
export function refusal(action: VmAction, vm: KObject, vmi: KObject | undefined): string | undefined {
  const id = `VM ${vm.metadata.namespace}/${vm.metadata.name}`;
  const status = printableStatus(vm);
  const active = vmiActive(vmi);
  const running = active && vmiPhase(vmi) === 'Running';
  if (vm.metadata.deletionTimestamp) return `${id} is being deleted`;
  switch (action) {
    case 'start':
      return active ? `${id} is already running (${status})` : undefined;
    case 'stop':
      return active || status === 'Starting' || status === 'Provisioning'
        ? undefined
        : `${id} is not running (${status})`;
    case 'restart':
      return active ? undefined : `${id} is not running (${status}); start it instead`;
    case 'pause':
      if (!running) return `${id} is not running (${status}); only a running VM can be paused`;
      return vmiPaused(vmi) ? `${id} is already paused` : undefined;
    case 'unpause':
      return running && vmiPaused(vmi) ? undefined : `${id} is not paused (${status})`;
    case 'migrate': {
      if (!running)
        return `${id} is not running (${status}); only a running VM can be live-migrated (a stopped one moves offline to a targetNode)`;
      if (status === 'Migrating') return `${id} is already migrating`;
      const m = isLiveMigratable(vmi);
      return m.ok ? undefined : `${id} cannot be live-migrated: ${m.reason}`;
    }
  }
}

const VERB_TARGET: Record<VmAction, 'virtualmachines' | 'virtualmachineinstances'> = {
  start: 'virtualmachines',
  stop: 'virtualmachines',
  restart: 'virtualmachines',
  migrate: 'virtualmachines',
  pause: 'virtualmachineinstances',
  unpause: 'virtualmachineinstances',
};

async function invoke(deps: DomainDeps, vm: KObject, action: VmAction, body?: unknown): Promise<void> {
  const namespace = vm.metadata.namespace ?? '';
  const name = vm.metadata.name ?? '';
  if (action === 'start' && (asString(asDict(vm.spec).runStrategy) === 'Always' || asDict(vm.spec).running === true)) {
    // runStrategy Always without a VMI (e.g. after the guest halted under Manual semantics): KubeVirt refuses a
    // manual start, so express the intent on the spec instead.
    await deps.cluster.patch('VirtualMachine', namespace, name, { spec: { runStrategy: 'Always', running: null } });
    return;
  }
  await deps.cluster.subresource(VERB_TARGET[action], namespace, name, action, body);
}

export async function vmAction(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  action: VmAction,
): Promise<string> {
  if (action === 'migrate') return migrateVm(deps, caller, namespace, name, undefined);
  const vm = requireVm(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const why = refusal(action, vm, vmi);
  if (why) throw new CorralError('CONFLICT', why);
  // Resolves with the task's id (bulk actions report it per VM).
  return runAsTask(deps.journal, action, `${namespace}/${name}`, caller.identity.login, async (task) => {
    await invoke(deps, vm, action);
    task.done(`${action} accepted`);
    return task.id;
  });
}

const MIGRATION_PROGRESS: Record<string, number> = {
  Pending: 10,
  Scheduling: 20,
  Scheduled: 35,
  PreparingTarget: 50,
  TargetReady: 65,
  Running: 80,
};

/**
 * Triggers synchronously (so refusals come back at once), then follows the VMIM to its end as a task. A stopped VM
 * with a target node migrates offline: it is pinned there (vm-pin.ts).
 */
export async function migrateVm(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  targetNode: string | undefined,
): Promise<string> {
  const vm = requireVm(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  if (targetNode && !vmiActive(vmi) && printableStatus(vm) === 'Stopped')
    return pinVm(deps, caller, namespace, name, targetNode);
  const why = refusal('migrate', vm, vmi);
  if (why) throw new CorralError('CONFLICT', why);
  const source = vmiNode(vmi);
  if (targetNode) {
    if (!deps.cluster.cache.get('Node', undefined, targetNode))
      throw new CorralError('BAD_REQUEST', `targetNode: no node named '${targetNode}'`);
    if (targetNode === source)
      throw new CorralError('CONFLICT', `VM ${namespace}/${name} already runs on ${targetNode}`);
  }
  const inFlight = migrationsOf(deps, namespace, name).find(
    (m) => !m.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(asString(asDict(m.status).phase)),
  );
  if (inFlight)
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name} is already migrating (${inFlight.metadata.name ?? ''}, ${asString(asDict(inFlight.status).phase) || 'Pending'})`,
    );
  const before = new Set(migrationsOf(deps, namespace, name).map((m) => m.metadata.uid));
  const task = deps.journal.start('migrate', `${namespace}/${name}`, caller.identity.login);
  try {
    await deps.cluster.subresource(
      'virtualmachines',
      namespace,
      name,
      'migrate',
      targetNode ? { addedNodeSelector: { 'kubernetes.io/hostname': targetNode } } : {},
    );
  } catch (err) {
    // KubeVirt's webhook answers a second migration with a 500 "in-flight migration detected": a state conflict.
    const mapped =
      err instanceof CorralError && /in-flight migration/i.test(err.message)
        ? new CorralError('CONFLICT', `VM ${namespace}/${name} is already migrating`, { cause: err })
        : err;
    task.fail(mapped);
    throw mapped;
  }
  task.log(`migration of ${namespace}/${name} from ${source || '?'} requested${targetNode ? ` to ${targetNode}` : ''}`);
  task.progress(5);
  void followMigration(deps, namespace, name, before, task);
  return task.id;
}

function migrationsOf(deps: DomainDeps, namespace: string, vm: string): KObject[] {
  return deps.cluster.cache
    .list('VirtualMachineInstanceMigration', namespace)
    .filter((m) => asString(asDict(m.spec).vmiName) === vm);
}

async function followMigration(
  deps: DomainDeps,
  namespace: string,
  name: string,
  before: Set<string | undefined>,
  task: ReturnType<DomainDeps['journal']['start']>,
): Promise<void> {
  // Event-driven: re-check on every cache change of this VM's migrations; a timer bounds the wait.
  await new Promise<void>((resolve) => {
    let lastPhase = '';
    const check = () => {
      const vmim = migrationsOf(deps, namespace, name).find((m) => !before.has(m.metadata.uid));
      if (!vmim) return false;
      const status = asDict(vmim.status);
      const phase = asString(status.phase);
      if (phase && phase !== lastPhase) {
        lastPhase = phase;
        task.log(`migration ${vmim.metadata.name}: ${phase}`);
        task.progress(MIGRATION_PROGRESS[phase] ?? 5);
      }
      if (phase === 'Succeeded') {
        const state = asDict(status.migrationState);
        task.done(
          `migrated to ${asString(state.targetNode) || vmiNode(deps.cluster.cache.get('VirtualMachineInstance', namespace, name))}`,
        );
        return true;
      }
      if (phase === 'Failed') {
        task.fail(
          new Error(
            `migration ${vmim.metadata.name} failed${asString(asDict(status.migrationState).failureReason) ? `: ${asString(asDict(status.migrationState).failureReason)}` : ''}`,
          ),
        );
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
      if (e.kind === 'VirtualMachineInstanceMigration' && e.object.metadata.namespace === namespace && check())
        finish();
    });
    const timer = setTimeout(() => {
      if (!task.finished)
        task.fail(
          new Error(
            `migration of ${namespace}/${name} did not finish in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
          ),
        );
      finish();
    }, deps.config.waitTimeoutMs);
    timer.unref?.();
    if (check()) finish();
  });
}
