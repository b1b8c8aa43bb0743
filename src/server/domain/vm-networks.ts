/**
 * Multus networks named by NICs. A NIC on anything but the pod network refers to a NetworkAttachmentDefinition;
 * KubeVirt only finds out that one is missing when it tries to start the VM, so Corral checks when the NIC is
 * planned and says which one is wrong. One live read per named network (they are not in the watch cache).
 */
import { CorralError } from '../errors';
import type { DomainDeps } from './deps';
import type { NicPlan } from './vm-hw-compose';

export interface MissingNetwork {
  /** The NIC that names it. */
  nic: string;
  message: string;
}

/** `name` (in the VM's namespace) or `namespace/name`, as KubeVirt's `multus.networkName` takes it. */
function networkRef(vmNamespace: string, network: string): { namespace: string; name: string } {
  const slash = network.indexOf('/');
  return slash < 0
    ? { namespace: vmNamespace, name: network }
    : { namespace: network.slice(0, slash), name: network.slice(slash + 1) };
}

/** The NICs whose Multus network does not exist (an absent Multus CRD counts as absent networks). */
export async function missingNetworks(
  deps: DomainDeps,
  vmNamespace: string,
  nics: NicPlan[],
): Promise<MissingNetwork[]> {
  const named = nics.filter((n) => n.network !== 'pod');
  const found = await Promise.all(
    named.map((n) => {
      const ref = networkRef(vmNamespace, n.network);
      return deps.cluster.fetch('NetworkAttachmentDefinition', ref.namespace, ref.name);
    }),
  );
  return named
    .filter((_, i) => !found[i])
    .map((n) => {
      const ref = networkRef(vmNamespace, n.network);
      return {
        nic: n.name,
        message: `no NetworkAttachmentDefinition '${ref.name}' in namespace ${ref.namespace} (a NIC off the pod network needs a Multus network of that name)`,
      };
    });
}

/** Throws a 400 naming every NIC whose network is missing. */
export async function requireNetworks(deps: DomainDeps, vmNamespace: string, nics: NicPlan[]): Promise<void> {
  const missing = await missingNetworks(deps, vmNamespace, nics);
  if (missing.length) throw new CorralError('BAD_REQUEST', missing.map((m) => `${m.nic}: ${m.message}`).join('; '));
}
