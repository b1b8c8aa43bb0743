/** NICs of an existing VM: add and remove Multus NICs; the NetworkAttachmentDefinitions there are. */
import { CorralError } from '../errors';
import type { Caller, DomainDeps } from './deps';
import { runAsTask } from './tasks';
import { asArray, asDict, asString, templateSpec } from './vm-facts';
import { requireNetworks } from './vm-networks';
import { buildComposedVm, type NicPlan } from './vm-hw-compose';
import { liveVm } from './vm-hw-facts';

/**
 * Adds and removes NICs in the VM spec (interfaces + networks, replaced as whole lists under the VM's
 * resourceVersion). A running VM picks them up at its next restart (or live, where KubeVirt hot-plugs them).
 */
export async function changeNics(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  add: NicPlan[],
  remove: string[],
): Promise<string> {
  const vm = await liveVm(deps, namespace, name);
  const tspec = templateSpec(vm);
  const interfaces = asArray(asDict(asDict(tspec.domain).devices).interfaces).map(asDict);
  const networks = asArray(tspec.networks).map(asDict);
  for (const n of add)
    if (interfaces.some((i) => asString(i.name) === n.name))
      throw new CorralError('CONFLICT', `VM ${namespace}/${name} already has a NIC ${n.name}`);
  const missing = remove.filter((r) => !interfaces.some((i) => asString(i.name) === r));
  if (missing.length) throw new CorralError('BAD_REQUEST', `VM ${namespace}/${name} has no NIC ${missing.join(', ')}`);
  if (
    add.filter((n) => n.network === 'pod').length +
      networks.filter((n) => n.pod && !remove.includes(asString(n.name))).length >
    1
  )
    throw new CorralError('BAD_REQUEST', 'only one NIC can be on the pod network');
  await requireNetworks(deps, namespace, add);
  const composed = asDict(
    asDict(
      asDict(
        buildComposedVm({
          name,
          namespace,
          sockets: 1,
          cores: 1,
          memoryBytes: 0,
          disks: [],
          nics: add,
          labels: {},
          annotations: {},
          start: false,
        }).spec,
      ).template,
    ).spec,
  );
  return runAsTask(deps.journal, 'config', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { resourceVersion: vm.metadata.resourceVersion },
      spec: {
        template: {
          spec: {
            domain: {
              devices: {
                interfaces: [
                  ...interfaces.filter((i) => !remove.includes(asString(i.name))),
                  ...asArray(asDict(asDict(composed.domain).devices).interfaces),
                ],
              },
            },
            networks: [...networks.filter((n) => !remove.includes(asString(n.name))), ...asArray(composed.networks)],
          },
        },
      },
    });
    task.done(
      [
        add.length ? `added ${add.map((n) => n.name).join(', ')}` : '',
        remove.length ? `removed ${remove.join(', ')}` : '',
      ]
        .filter(Boolean)
        .join('; '),
    );
    return task.id;
  });
}
