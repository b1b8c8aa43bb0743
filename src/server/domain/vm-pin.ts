/**
 * Offline migration: a stopped VM has no node in KubeVirt until it starts, so "moving" it means pinning its template
 * to the target node (`nodeSelector` kubernetes.io/hostname — the same pin a create with `node` writes). The
 * scheduler then starts it there, and until then Corral shows it on that node (the row's `node`, the Proxmox API's
 * `/nodes/{target}/qemu`, the tree). Its disks stay where they are: a claim on network storage attaches on whichever
 * node the VM starts on, as PVE's shared storage does.
 */
import { CorralError } from '../errors';
import { patchVmFrom } from './vm-patch';
import type { Caller, DomainDeps } from './deps';
import { runAsTask } from './tasks';
import { HOSTNAME_LABEL, pinnedNode, printableStatus, vmiActive } from './vm-facts';

/** States in which the VM has (or is about to get) a VMI, so only a live migration can move it. */
const BUSY = new Set(['Starting', 'Provisioning', 'Migrating', 'Stopping', 'Terminating', 'WaitingForVolumeBinding']);

/** Pins a stopped VM to `node` as a `migrate` task; refusals (unknown node, running, already there) come back at once. */
export async function pinVm(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  node: string,
): Promise<string> {
  const vm = deps.cluster.cache.get('VirtualMachine', namespace, name);
  if (!vm) throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} not found`);
  if (!deps.cluster.cache.get('Node', undefined, node))
    throw new CorralError('BAD_REQUEST', `targetNode: no node named '${node}'`);
  const status = printableStatus(vm);
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `VM ${namespace}/${name} is being deleted`);
  if (vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name)) || BUSY.has(status))
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${name} is ${status}; only a stopped VM is migrated offline (a running one live-migrates)`,
    );
  const from = pinnedNode(vm);
  if (from === node) throw new CorralError('CONFLICT', `VM ${namespace}/${name} is already on ${node}`);
  return runAsTask(deps.journal, 'migrate', `${namespace}/${name}`, caller.identity.login, async (task) => {
    task.log(`offline migration of ${namespace}/${name} from ${from || 'any node'} to ${node}`);
    await patchVmFrom(deps, vm, {
      spec: { template: { spec: { nodeSelector: { [HOSTNAME_LABEL]: node } } } },
    });
    task.log(`pinned to ${node} (nodeSelector ${HOSTNAME_LABEL}); its disks stay on their storage`);
    task.done(`migrated to ${node} (offline: the VM starts there)`);
    return task.id;
  });
}
