/**
 * A node's uptime as Kubernetes records it: the seconds since its `Ready` condition last turned True (the kubelet
 * came up, or came back after a NotReady spell). Kubernetes keeps no boot time, so this is "up and serving" rather
 * than "since boot"; a Ready condition without a transition time falls back to the Node's creation time. A node
 * that is not Ready has uptime 0 (Proxmox shows an offline node with 0 too). Read from the watch cache, O(1).
 */
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { asArray, asDict, asString } from './vm-facts';

/** Epoch ms since which the node has been Ready, 0 when it is not Ready (or the times are unknown). */
export function nodeReadySince(node: KObject): number {
  const ready = asArray(asDict(node.status).conditions)
    .map(asDict)
    .find((c) => c.type === 'Ready');
  if (!ready || ready.status !== 'True') return 0;
  const since = Date.parse(asString(ready.lastTransitionTime) || node.metadata.creationTimestamp || '');
  return Number.isFinite(since) ? since : 0;
}

export function nodeUptimeSeconds(deps: DomainDeps, name: string, now = Date.now()): number {
  const node = deps.cluster.cache.get('Node', undefined, name);
  const since = node ? nodeReadySince(node) : 0;
  return since > 0 ? Math.max(0, Math.floor((now - since) / 1000)) : 0;
}
