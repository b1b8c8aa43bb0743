/**
 * Guest filesystem freeze through KubeVirt's VMI `freeze`/`unfreeze` subresources (which call the guest agent's
 * guest-fsfreeze-freeze/-thaw) and the freeze state KubeVirt records on the VMI (`status.fsFreezeStatus`). These are
 * the only guest-agent writes KubeVirt exposes; exec, file access and password changes have no subresource.
 */
import type { DomainDeps } from './deps';
import { asDict, asString } from './vm-facts';
import { guestFilesystems, requireGuestAgent } from './vm-guest';

export type FreezeState = 'frozen' | 'thawed';

export function guestFreezeState(deps: DomainDeps, namespace: string, name: string): FreezeState {
  requireGuestAgent(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  return asString(asDict(vmi?.status).fsFreezeStatus) === 'frozen' ? 'frozen' : 'thawed';
}

/**
 * Freezes (or thaws) the guest's filesystems. Resolves with how many filesystems the agent reports mounted — what
 * qemu-ga's freeze and thaw answer — since KubeVirt's verb itself returns nothing.
 */
export async function setGuestFrozen(
  deps: DomainDeps,
  namespace: string,
  name: string,
  frozen: boolean,
): Promise<number> {
  requireGuestAgent(deps, namespace, name);
  const filesystems = await guestFilesystems(deps, namespace, name);
  await deps.cluster.subresource('virtualmachineinstances', namespace, name, frozen ? 'freeze' : 'unfreeze', {});
  return filesystems.length;
}
