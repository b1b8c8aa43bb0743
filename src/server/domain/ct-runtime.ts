/**
 * What a running container is doing, read from the watch cache and the cluster layer's metrics sample (no cluster
 * call): since when its pod runs, and the CPU and memory its `main` container uses. The Proxmox `lxc` rows read these;
 * undefined usage means "not measured" (stopped, no metrics-server, or not sampled since it started).
 */
import type { KObject, ResourceUsage } from './cluster-port';
import type { DomainDeps } from './deps';
import { CT_CONTAINER, dataClaimName, type CtSpec } from './ct-spec';
import { podPhase } from './ct-rows';

export interface CtUsage extends ResourceUsage {
  /** cpuCores as a fraction of the CT's CPU limit (Proxmox's `cpu`), 0..1. */
  cpuFraction: number;
}

/** True while the CT's pod runs (not while it is created, pulled or deleted). */
export function ctRunning(pod: KObject | undefined): boolean {
  return podPhase(pod) === 'Running';
}

/**
 * Epoch ms since the CT's pod is Running: its Ready condition's transition, else the pod's start time; 0 when it is
 * not running. A Stop/Start makes a new pod, so the count restarts as a container's uptime does.
 */
export function ctRunningSince(pod: KObject | undefined): number {
  if (!pod || !ctRunning(pod)) return 0;
  const conditions = Array.isArray(pod.status?.conditions) ? (pod.status.conditions as Record<string, unknown>[]) : [];
  const ready = conditions.find((c) => c.type === 'Ready' && c.status === 'True');
  const at = Date.parse(
    typeof ready?.lastTransitionTime === 'string'
      ? ready.lastTransitionTime
      : typeof pod.status?.startTime === 'string'
        ? pod.status.startTime
        : '',
  );
  return Number.isFinite(at) ? at : 0;
}

export function ctUsage(deps: DomainDeps, spec: CtSpec, pod: KObject | undefined): CtUsage | undefined {
  const metrics = deps.cluster.metrics;
  if (!metrics || metrics.sampledAt() === 0 || !ctRunning(pod)) return undefined;
  const usage = metrics.pod(spec.namespace, spec.name, CT_CONTAINER);
  if (!usage) return undefined;
  return { ...usage, cpuFraction: Math.min(1, Math.max(0, usage.cpuCores / Math.max(spec.cpu, 0.001))) };
}

/**
 * Bytes used on the CT's data volume, as the kubelet mounting it measured it (the same reading as the `/api/cts` row's
 * `diskUsage`); 0 when it is not running or not measured yet.
 */
export function ctDiskUsed(deps: DomainDeps, spec: CtSpec, pod: KObject | undefined): number {
  if (!ctRunning(pod)) return 0;
  return deps.cluster.metrics?.volume?.(spec.namespace, dataClaimName(spec.name))?.usedBytes ?? 0;
}
