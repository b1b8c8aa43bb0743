/**
 * kube-scheduler's filter and score, reduced to what a homelab sees: Ready and schedulable nodes, nodeSelector
 * and required node affinity, allocatable CPU/memory/pods; the least-allocated node wins. When nothing fits the
 * answer is the scheduler's own `0/N nodes are available: …` message.
 */
import type { KObject } from '../store/types.js';
import type { NodeUsage } from './pod-index.js';
import { podRequests } from './pod-index.js';
import type { Json } from './objects.js';
import { digArray, digRecord, findCondition } from './objects.js';
import { cpuMillis, memoryBytes } from './quantity.js';

export type ScheduleResult = { node: KObject } | { message: string };

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

function matchesRequirement(labels: Record<string, string>, req: Requirement): boolean {
  const value = labels[req.key];
  switch (req.operator) {
    case 'In':
      return value !== undefined && (req.values ?? []).includes(value);
    case 'NotIn':
      return value === undefined || !(req.values ?? []).includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    default:
      return false;
  }
}

function matchesNodeSelection(pod: KObject, node: KObject): boolean {
  const labels = node.metadata.labels ?? {};
  const selector = (digRecord(pod, 'spec', 'nodeSelector') ?? {}) as Record<string, string>;
  for (const [key, value] of Object.entries(selector)) if (labels[key] !== value) return false;
  const terms = digArray(
    pod,
    'spec',
    'affinity',
    'nodeAffinity',
    'requiredDuringSchedulingIgnoredDuringExecution',
    'nodeSelectorTerms',
  );
  if (terms.length === 0) return true;
  // Terms are ORed, expressions inside a term ANDed.
  return terms.some((term: Json) =>
    (digArray(term, 'matchExpressions') as unknown as Requirement[]).every((req) => matchesRequirement(labels, req)),
  );
}

function isReady(node: KObject): boolean {
  return findCondition(node, 'Ready')?.status === 'True';
}

function allocatable(node: KObject): { cpuMillis: number; memoryBytes: number; pods: number } {
  const a = (digRecord(node, 'status', 'allocatable') ?? {}) as Record<string, string>;
  return { cpuMillis: cpuMillis(a.cpu ?? '0'), memoryBytes: memoryBytes(a.memory ?? '0'), pods: Number(a.pods ?? 110) };
}

export function schedule(pod: KObject, nodes: KObject[], usageOf: (node: string) => NodeUsage): ScheduleResult {
  const want = podRequests(pod);
  const reasons = new Map<string, number>();
  const bump = (reason: string) => reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
  let best: { node: KObject; score: number } | undefined;
  for (const node of nodes) {
    if (!isReady(node)) {
      bump('node(s) had untolerated taint {node.kubernetes.io/not-ready: }');
      continue;
    }
    if ((node.spec as Json | undefined)?.unschedulable === true) {
      bump('node(s) were unschedulable');
      continue;
    }
    if (!matchesNodeSelection(pod, node)) {
      bump("node(s) didn't match Pod's node affinity/selector");
      continue;
    }
    const cap = allocatable(node);
    const used = usageOf(node.metadata.name);
    let fits = true;
    if (used.pods + 1 > cap.pods) {
      bump('Too many pods');
      fits = false;
    }
    if (used.cpuMillis + want.cpuMillis > cap.cpuMillis) {
      bump('Insufficient cpu');
      fits = false;
    }
    if (used.memoryBytes + want.memoryBytes > cap.memoryBytes) {
      bump('Insufficient memory');
      fits = false;
    }
    if (!fits) continue;
    // LeastAllocated: the node with the most free memory and CPU (fractions) after placing the pod.
    const score =
      (cap.memoryBytes - used.memoryBytes - want.memoryBytes) / Math.max(1, cap.memoryBytes) +
      (cap.cpuMillis - used.cpuMillis - want.cpuMillis) / Math.max(1, cap.cpuMillis);
    if (!best || score > best.score) best = { node, score };
  }
  if (best) return { node: best.node };
  const total = nodes.length;
  const detail = [...reasons.entries()]
    .map(([reason, count]) => `${count} ${reason}`)
    .sort()
    .join(', ');
  const message =
    total === 0
      ? 'no nodes available to schedule pods'
      : `0/${total} nodes are available: ${detail}. preemption: 0/${total} nodes are available: ${total} Preemption is not helpful for scheduling.`;
  return { message };
}
