/**
 * The status of a running VMI as virt-handler reports it. Shared by the VMI controller (after it boots a guest)
 * and the fleet seeder (which writes 10,000 running VMIs directly in their final state).
 */
import { guestCloudInit } from './cloud-init.js';
import type { ObjectStore } from '../store/object-store.js';
import { nowTimestamp } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import type { GuestImage } from './guest-images.js';
import { LAUNCHER_IMAGE } from './keys.js';
import type { Json } from './objects.js';
import { digArray, digRecord, digString, hash32, macFor, setCondition, status } from './objects.js';
import { formatBytes, memoryBytes } from './quantity.js';
import { sizingOf } from './sizing.js';
import { bootVolumeStatus, hasLocalDisks, migratability } from './volumes.js';

export const FINAL_PHASES = new Set(['Succeeded', 'Failed']);

export function vmiPhase(vmi: KObject | undefined): string | undefined {
  return digString(vmi, 'status', 'phase');
}

export function isFinal(vmi: KObject | undefined): boolean {
  return FINAL_PHASES.has(vmiPhase(vmi) ?? '');
}

export function appendPhaseTransition(vmi: KObject, phase: string): void {
  const st = status(vmi);
  st.phase = phase;
  const list = digArray(st, 'phaseTransitionTimestamps');
  st.phaseTransitionTimestamps = [...list, { phase, phaseTransitionTimestamp: nowTimestamp() }];
}

interface NicSpec {
  name: string;
  mac: string;
  podNetwork: boolean;
}

export function nicsOf(vmi: KObject): NicSpec[] {
  const networks = digArray(vmi, 'spec', 'networks');
  const interfaces = digArray(vmi, 'spec', 'domain', 'devices', 'interfaces');
  const key = `${vmi.metadata.namespace}/${vmi.metadata.name}`;
  // KubeVirt attaches the pod network with masquerade when a VMI declares no interfaces at all.
  if (interfaces.length === 0) return [{ name: 'default', mac: macFor(`${key}/default`), podNetwork: true }];
  return interfaces.map((iface) => {
    const name = String(iface.name);
    const network = networks.find((n) => n.name === name);
    return {
      name,
      mac: typeof iface.macAddress === 'string' ? iface.macAddress : macFor(`${key}/${name}`),
      podNetwork: !network || network.pod !== undefined,
    };
  });
}

/**
 * `status.interfaces`: the pod IP from the domain at once; agent names and extra IPs when the agent is there. An
 * address cloud-init's network-config gave `ethN` (`staticIps`) is what the guest agent reports for that NIC.
 */
export function interfacesStatus(
  vmi: KObject,
  podIp: string | undefined,
  agent: boolean,
  staticIps: Record<string, string[]> = {},
): Json[] {
  return nicsOf(vmi).map((nic, index) => {
    const entry: Json = {
      name: nic.name,
      mac: nic.mac,
      infoSource: agent ? 'domain, guest-agent' : 'domain',
      queueCount: 1,
      linkState: 'up',
    };
    if (nic.podNetwork) {
      entry.podInterfaceName = 'eth0';
      if (podIp) {
        entry.ipAddress = podIp;
        entry.ipAddresses = agent ? [podIp, `fd10:42::${(hash32(podIp) & 0xffff).toString(16)}`] : [podIp];
      }
    } else if (agent) {
      const lanIp = `192.168.1.${20 + (hash32(`${vmi.metadata.namespace}/${vmi.metadata.name}/${nic.name}`) % 200)}`;
      entry.ipAddress = lanIp;
      entry.ipAddresses = [lanIp];
    }
    const configured = staticIps[`eth${index}`];
    if (agent && configured?.length) {
      entry.ipAddress = configured[0];
      entry.ipAddresses = configured;
    }
    if (agent) entry.interfaceName = `eth${index}`;
    return entry;
  });
}

export function guestOsInfoOf(image: GuestImage): Json {
  return { ...image.os };
}

/** Where a VMI runs: its launcher pod's node, address and (once it exists) uid. */
export interface Placement {
  node: string;
  podIp: string | undefined;
  podUid?: string;
}

export function placementOf(pod: KObject): Placement {
  return {
    node: digString(pod, 'spec', 'nodeName') ?? '',
    podIp: digString(pod, 'status', 'podIP'),
    podUid: pod.metadata.uid,
  };
}

/** Fill the status of a VMI that just reached Running at `placement`. */
export function applyRunningStatus(
  store: ObjectStore,
  vmi: KObject,
  placement: Placement,
  agent: GuestImage | undefined,
): void {
  const { node, podIp } = placement;
  const st = status(vmi);
  if (st.phase !== 'Running') appendPhaseTransition(vmi, 'Running');
  st.nodeName = node;
  if (placement.podUid) st.activePods = { [placement.podUid]: node };
  vmi.metadata.labels = { ...(vmi.metadata.labels ?? {}), 'kubevirt.io/nodeName': node };
  const domain = digRecord(vmi, 'spec', 'domain');
  const size = sizingOf(domain);
  st.currentCPUTopology = { sockets: size.sockets, cores: size.cores, threads: size.threads };
  const guest = formatBytes(size.guestBytes);
  st.memory = { guestAtBoot: guest, guestCurrent: guest, guestRequested: guest };
  st.qosClass = 'Burstable';
  st.launcherContainerImageVersion = LAUNCHER_IMAGE;
  st.migrationMethod = hasLocalDisks(vmi) ? 'BlockMigration' : 'LiveMigration';
  st.migrationTransport = 'Unix';
  st.runtimeUser = 107;
  st.selinuxContext = 'none';
  st.machine = { type: 'pc-q35-rhel9.6.0' };
  st.virtualMachineRevisionName = `revision-start-vm-${vmi.metadata.uid}-${vmi.metadata.generation ?? 1}`;
  st.volumeStatus = bootVolumeStatus(store, vmi);
  st.interfaces = interfacesStatus(vmi, podIp, agent !== undefined, guestCloudInit(store, vmi)?.addresses);
  st.guestOSInfo = agent ? guestOsInfoOf(agent) : {};
  setCondition(vmi, { type: 'Ready', status: 'True' });
  const migratable = migratability(store, vmi);
  setCondition(vmi, {
    type: 'LiveMigratable',
    status: migratable.migratable ? 'True' : 'False',
    ...(migratable.reason ? { reason: migratable.reason, message: migratable.message } : {}),
    transition: false,
  });
  setCondition(vmi, { type: 'StorageLiveMigratable', status: 'True', transition: false });
  if (agent) setCondition(vmi, { type: 'AgentConnected', status: 'True', transition: false });
  if (vmi.spec && (vmi.spec as Json).startStrategy === 'Paused') {
    setCondition(vmi, {
      type: 'Paused',
      status: 'True',
      reason: 'PausedByUser',
      message: 'VMI was paused by user',
      probe: true,
    });
  }
}

/** Memory the guest currently sees, for metrics. */
export function guestMemoryBytes(vmi: KObject): number {
  const current = digString(vmi, 'status', 'memory', 'guestCurrent');
  return current ? memoryBytes(current) : sizingOf(digRecord(vmi, 'spec', 'domain')).guestBytes;
}
