/** NICs of an existing VM: add and remove Multus NICs; the NetworkAttachmentDefinitions there are. */
import { createHash } from 'node:crypto';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { patchVmFrom } from './vm-patch';
import { runAsTask } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, templateSpec, vmiActive } from './vm-facts';
import { requireNetworks } from './vm-networks';
import { buildComposedVm, type NicPlan } from './vm-hw-compose';
import { liveVm, readHardware } from './vm-hw-facts';

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
    await patchVmFrom(deps, vm, {
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

// ---------------------------------------------------------------------------------------------------------------
// Corral's NIC API and the NetworkAttachmentDefinitions a NIC can use.

export type NicModel = 'virtio' | 'e1000' | 'e1000e' | 'rtl8139';

export interface NewNic {
  /** A NetworkAttachmentDefinition: `name` in the VM's namespace, or `namespace/name`. */
  nad: string;
  /** The interface name; default the first free `net<n>` (n ≥ 1), the slot Proxmox clients see it in. */
  iface?: string;
  model?: NicModel;
}

/** A stable, locally administered unicast MAC for a NIC (02:…), so it survives restarts and reads the same in PVE. */
export function nicMac(namespace: string, vm: string, iface: string): string {
  const h = createHash('sha256').update(`${namespace}/${vm}/${iface}`).digest();
  return ['02', ...[0, 1, 2, 3, 4].map((i) => (h[i] ?? 0).toString(16).padStart(2, '0'))].join(':');
}

/** Whether a NIC change waits for the VM's next restart: KubeVirt applies interface edits to a new instance. */
function pendingRestart(deps: DomainDeps, namespace: string, name: string): boolean {
  return vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name));
}

/**
 * Adds a Multus NIC on `nad` to a VM's spec (400 naming a missing NetworkAttachmentDefinition, 409 when the name
 * is taken). A running VM gets it at its next restart: `pending` says so.
 */
export async function addNic(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  req: NewNic,
): Promise<{ iface: string; mac: string; task: string; pending: boolean }> {
  const vm = requireVm(deps, namespace, name);
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `VM ${namespace}/${name} is being deleted`);
  const hw = readHardware(deps, vm);
  let iface = req.iface;
  if (!iface) {
    let n = 1;
    while (hw.nics.some((x) => x.name === `net${n}`)) n++;
    iface = `net${n}`;
  }
  const mac = nicMac(namespace, name, iface);
  const task = await changeNics(
    deps,
    caller,
    namespace,
    name,
    [{ name: iface, model: req.model ?? 'virtio', mac, network: req.nad }],
    [],
  );
  return { iface, mac, task, pending: pendingRestart(deps, namespace, name) };
}

/** Removes the NIC `iface` from a VM's spec (404 when it has none); a running VM lets go of it at its next restart. */
export async function removeNic(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  iface: string,
): Promise<{ task: string; pending: boolean }> {
  const hw = readHardware(deps, requireVm(deps, namespace, name));
  if (!hw.nics.some((n) => n.name === iface))
    throw new CorralError('NOT_FOUND', `VM ${namespace}/${name} has no NIC ${iface}`);
  const task = await changeNics(deps, caller, namespace, name, [], [iface]);
  return { task, pending: pendingRestart(deps, namespace, name) };
}

export interface NadFact {
  name: string;
  namespace: string;
  /** The CNI plugin (`bridge`, `macvlan`, `ovn-k8s-cni-overlay`, …); '' when the config does not say. */
  type: string;
  /** The host bridge, when the config names one. */
  bridge?: string;
  /** The VLAN id, when the config sets one. */
  vlan?: number;
}

/** A NetworkAttachmentDefinition's CNI config, read tolerantly (a single plugin or a `plugins` list). */
export function nadFact(o: KObject): NadFact {
  let config: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(asString(asDict(o.spec).config) || '{}');
    config = asDict(parsed);
  } catch {
    // an unreadable config still lists the network, without details
  }
  const plugin = asDict(asArray(config.plugins)[0] ?? config);
  const bridge = asString(plugin.bridge) || asString(plugin.master);
  const vlan = plugin.vlan ?? plugin.vlanId;
  return {
    name: o.metadata.name ?? '',
    namespace: o.metadata.namespace ?? '',
    type: asString(plugin.type) || asString(config.type),
    ...(bridge ? { bridge } : {}),
    ...(typeof vlan === 'number' && Number.isInteger(vlan) ? { vlan } : {}),
  };
}

/** The NetworkAttachmentDefinitions (of one namespace, or all), sorted; none when Multus is not installed. */
export async function listNads(deps: DomainDeps, namespace?: string): Promise<NadFact[]> {
  const items = await deps.cluster
    .fetchList('NetworkAttachmentDefinition', namespace ? { namespace } : {})
    .catch((err: unknown) => {
      if (err instanceof CorralError && err.code === 'NOT_FOUND') return [];
      throw err;
    });
  return items.map(nadFact).sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}
