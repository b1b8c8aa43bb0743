/**
 * What a running VM looks like from its VirtualMachineInstance: since when it runs, its guest memory, whether
 * its guest agent answers, the interfaces and addresses it reports, and what it uses (metrics.k8s.io). All from
 * memory — the watch cache and the metrics sample — O(1) per VM.
 */
import type { DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { vmUsage } from './usage';
import { asArray, asDict, asString, vmiActive } from './vm-facts';

export interface GuestInterface {
  name: string;
  mac: string;
  ips: string[];
}

export interface VmRuntime {
  active: boolean;
  /** Seconds since the instance reached Running (0 when not running). */
  uptimeSeconds: number;
  /** When the instance reached Running (epoch ms), 0 when unknown or not running. */
  runningSince: number;
  /** Guest memory currently plugged, bytes (0 when not running). */
  guestMemoryBytes: number;
  /** The guest agent is connected (KubeVirt's AgentConnected condition). */
  agentConnected: boolean;
  interfaces: GuestInterface[];
  node: string;
  /** CPU in use as a fraction of the VM's vCPUs (0..1); 0 when not running or not measured. */
  cpuUsage: number;
  /** Memory the VM's QEMU uses, bytes (its launcher's compute container); 0 when not running or not measured. */
  memoryUsedBytes: number;
}

const NOT_RUNNING: VmRuntime = {
  active: false,
  uptimeSeconds: 0,
  runningSince: 0,
  guestMemoryBytes: 0,
  agentConnected: false,
  interfaces: [],
  node: '',
  cpuUsage: 0,
  memoryUsedBytes: 0,
};

export function vmRuntime(deps: DomainDeps, namespace: string, name: string, now = Date.now()): VmRuntime {
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  if (!vmi || !vmiActive(vmi)) return NOT_RUNNING;
  const status = asDict(vmi.status);
  const runningSince = asArray(status.phaseTransitionTimestamps)
    .map(asDict)
    .filter((t) => t.phase === 'Running')
    .map((t) => Date.parse(asString(t.phaseTransitionTimestamp)))
    .filter(Number.isFinite)
    .pop();
  const since =
    runningSince ?? (asString(status.phase) === 'Running' ? Date.parse(vmi.metadata.creationTimestamp ?? '') : NaN);
  const memory = quantityToNumber(asString(asDict(status.memory).guestCurrent));
  const usage = vmUsage(deps, namespace, name, vmi);
  return {
    active: true,
    uptimeSeconds: Number.isFinite(since) ? Math.max(0, Math.floor((now - since) / 1000)) : 0,
    runningSince: Number.isFinite(since) ? since : 0,
    guestMemoryBytes: Number.isFinite(memory) ? Math.round(memory) : 0,
    agentConnected: asArray(status.conditions).some(
      (c) => asDict(c).type === 'AgentConnected' && asDict(c).status === 'True',
    ),
    interfaces: asArray(status.interfaces).map((raw) => {
      const i = asDict(raw);
      const ips = asArray(i.ipAddresses).map(asString).filter(Boolean);
      const ip = asString(i.ipAddress);
      return {
        name: asString(i.interfaceName) || asString(i.name),
        mac: asString(i.mac),
        ips: ips.length ? ips : ip ? [ip] : [],
      };
    }),
    node: asString(status.nodeName),
    cpuUsage: usage?.cpuFraction ?? 0,
    memoryUsedBytes: usage?.memoryBytes ?? 0,
  };
}
