/**
 * Clone and template flag for Corral's own API, over the implementations /api2/json uses (vm-clone.ts,
 * vm-hardware.ts's setTemplateFlag): the preconditions are checked here so a refusal is a 409 saying why. A clone
 * into another namespace goes through CDI cross-namespace DataVolumes instead (vm-clone-namespace.ts).
 */
import { CorralError } from '../errors';
import type { Caller, DomainDeps } from './deps';
import { requireVm } from './vm-actions';
import { cloneVm } from './vm-clone';
import { cloneVmToNamespace } from './vm-clone-namespace';
import { asArray, asDict, printableStatus, vmiActive } from './vm-facts';
import { setTemplateFlag } from './vm-hardware';
import { requireSnapshotSupport, translateGateRefusal } from './vm-snapshot-ops';

/**
 * A running VM can be cloned online only when KubeVirt can freeze its filesystems, i.e. its guest agent is
 * connected; otherwise the copy could be torn, so it must be stopped first.
 */
export function onlineCloneRefusal(deps: DomainDeps, namespace: string, name: string): string | undefined {
  const vm = requireVm(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  if (!vmiActive(vmi)) return undefined;
  const agent = asArray(asDict(vmi?.status).conditions)
    .map(asDict)
    .some((c) => c.type === 'AgentConnected' && c.status === 'True');
  return agent
    ? undefined
    : `VM ${namespace}/${name} is ${printableStatus(vm)} without a connected guest agent to freeze its disks: stop it first`;
}

export async function cloneForApi(
  deps: DomainDeps,
  caller: Caller,
  input: { namespace: string; name: string; target: string; targetNamespace?: string; start?: boolean },
): Promise<{ target: string; namespace: string; task: string }> {
  const { namespace, name, target } = input;
  const vm = requireVm(deps, namespace, name);
  const targetNamespace = input.targetNamespace ?? namespace;
  if (targetNamespace !== namespace) {
    // No snapshot needed: CDI copies each disk straight from the source PVC (vm-clone-namespace.ts).
    const task = await cloneVmToNamespace(deps, caller, namespace, name, targetNamespace, target, {
      start: input.start === true,
    });
    return { target, namespace: targetNamespace, task };
  }
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `VM ${namespace}/${name} is being deleted`);
  const why = onlineCloneRefusal(deps, namespace, name);
  if (why) throw new CorralError('CONFLICT', why);
  if (deps.cluster.cache.get('VirtualMachine', namespace, target))
    throw new CorralError('CONFLICT', `VM ${namespace}/${target} already exists`);
  await requireSnapshotSupport(deps, namespace, name);
  const task = await cloneVm(deps, caller, namespace, name, target, { start: input.start === true }).catch(
    translateGateRefusal,
  );
  return { target, namespace, task };
}

export async function setTemplate(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  on: boolean,
): Promise<{ isTemplate: boolean; task: string }> {
  const vm = requireVm(deps, namespace, name);
  if (on && vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name)))
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name} is ${printableStatus(vm)}: stop it before making it a template`,
    );
  const task = await setTemplateFlag(deps, caller, namespace, name, on);
  return { isTemplate: on, task };
}
