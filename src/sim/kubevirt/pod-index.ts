/**
 * What the scheduler and metrics need to know about pods without listing 10,000 of them on every decision:
 * which node each pod is bound to, what it requests, and which pod IPs of each node's CIDR are taken.
 * Kept current synchronously from store events (it only updates memory, never writes).
 */
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { K } from './keys.js';
import { digArray, digString } from './objects.js';
import { cpuMillis, memoryBytes } from './quantity.js';

export interface PodUsage {
  node: string;
  cpuMillis: number;
  memoryBytes: number;
}

export interface NodeUsage {
  cpuMillis: number;
  memoryBytes: number;
  pods: number;
}

/** A quantity the apiserver should have rejected counts as zero here rather than wedging the scheduler. */
function tolerant(parse: (v: string | undefined) => number, value: string | undefined): number {
  try {
    return parse(value);
  } catch {
    return 0;
  }
}

export function podRequests(pod: KObject): { cpuMillis: number; memoryBytes: number } {
  let cpu = 0;
  let memory = 0;
  for (const container of digArray(pod, 'spec', 'containers')) {
    const requests =
      (container.resources as { requests?: Record<string, string>; limits?: Record<string, string> } | undefined) ?? {};
    // Kubernetes defaults requests to limits when only limits are given.
    cpu += tolerant(cpuMillis, requests.requests?.cpu ?? requests.limits?.cpu);
    memory += tolerant(memoryBytes, requests.requests?.memory ?? requests.limits?.memory);
  }
  return { cpuMillis: cpu, memoryBytes: memory };
}

function isTerminal(pod: KObject): boolean {
  const phase = digString(pod, 'status', 'phase');
  return phase === 'Succeeded' || phase === 'Failed';
}

export class PodIndex {
  private readonly usage = new Map<string, PodUsage>();
  private readonly ipsByNode = new Map<string, Map<string, string>>();
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly store: ObjectStore) {}

  start(): void {
    for (const pod of this.store.list(K.pods)) this.track(pod);
    this.unsubscribe = this.store.subscribe((event) => this.onEvent(event));
  }

  stop(): void {
    this.unsubscribe?.();
  }

  nodeUsage(node: string): NodeUsage {
    const total: NodeUsage = { cpuMillis: 0, memoryBytes: 0, pods: 0 };
    for (const u of this.usage.values()) {
      if (u.node !== node) continue;
      total.cpuMillis += u.cpuMillis;
      total.memoryBytes += u.memoryBytes;
      total.pods++;
    }
    return total;
  }

  allNodeUsage(): Map<string, NodeUsage> {
    const out = new Map<string, NodeUsage>();
    for (const u of this.usage.values()) {
      const total = out.get(u.node) ?? { cpuMillis: 0, memoryBytes: 0, pods: 0 };
      total.cpuMillis += u.cpuMillis;
      total.memoryBytes += u.memoryBytes;
      total.pods++;
      out.set(u.node, total);
    }
    return out;
  }

  /** The lowest free address of the node's pod CIDR (`10.42.N.0/24`; .1 is the bridge gateway). */
  allocateIp(node: KObject): string | undefined {
    const cidr = digString(node, 'spec', 'podCIDR');
    if (!cidr) return undefined;
    const prefix = cidr.split('/')[0]!.split('.').slice(0, 3).join('.');
    const taken = this.ipsByNode.get(node.metadata.name) ?? new Map<string, string>();
    for (let host = 2; host < 255; host++) {
      const ip = `${prefix}.${host}`;
      if (!taken.has(ip)) {
        // Reserve now: the pod's status write comes later and two pods may start in the same tick.
        taken.set(ip, `reserved:${ip}`);
        this.ipsByNode.set(node.metadata.name, taken);
        return ip;
      }
    }
    return undefined;
  }

  private onEvent(event: StoreEvent): void {
    if (event.key !== K.pods) return;
    if (event.type === 'DELETED') this.untrack(event.object);
    else this.track(event.object);
  }

  private id(pod: KObject): string {
    return `${pod.metadata.namespace}/${pod.metadata.name}`;
  }

  private track(pod: KObject): void {
    const id = this.id(pod);
    const node = digString(pod, 'spec', 'nodeName');
    if (!node || isTerminal(pod)) {
      this.untrack(pod);
      return;
    }
    this.usage.set(id, { node, ...podRequests(pod) });
    const ip = digString(pod, 'status', 'podIP');
    if (ip) {
      const taken = this.ipsByNode.get(node) ?? new Map<string, string>();
      taken.set(ip, id);
      this.ipsByNode.set(node, taken);
    }
  }

  private untrack(pod: KObject): void {
    const id = this.id(pod);
    const usage = this.usage.get(id);
    this.usage.delete(id);
    const ip = digString(pod, 'status', 'podIP');
    const node = usage?.node ?? digString(pod, 'spec', 'nodeName');
    if (ip && node) this.ipsByNode.get(node)?.delete(ip);
  }
}
