/**
 * Resource usage of VMs and nodes, read from the cluster layer's metrics sample (metrics.k8s.io, refreshed on a
 * timer — see src/server/cluster/metrics-sampler.ts). A VM's usage is its virt-launcher pod's `compute` container
 * (where QEMU runs; the sidecars are not the guest). Every reading is O(1) and never calls the cluster; undefined
 * means "not measured" (no metrics-server, VM not running, or not sampled since it started).
 */
import type { KObject, ResourceUsage } from './cluster-port';
import type { DomainDeps } from './deps';
import { asDict, asString } from './vm-facts';

/** The container KubeVirt runs QEMU in. */
const COMPUTE_CONTAINER = 'compute';

export interface VmUsage extends ResourceUsage {
  /** cpuCores as a fraction of the VM's vCPUs (Proxmox's `cpu`), 0..1. */
  cpuFraction: number;
}

/** vCPUs of a VMI: sockets × cores × threads (KubeVirt defaults each to 1). */
export function vmiVcpus(vmi: KObject): number {
  const cpu = asDict(asDict(asDict(vmi.spec).domain).cpu);
  const n = (v: unknown) => (typeof v === 'number' && v > 0 ? v : 1);
  return n(cpu.sockets) * n(cpu.cores) * n(cpu.threads);
}

/** The launcher pod running the VMI now: on the VMI's node when a migration briefly leaves two. */
export function launcherPod(deps: DomainDeps, vmi: KObject): KObject | undefined {
  const namespace = vmi.metadata.namespace ?? '';
  const node = asString(asDict(vmi.status).nodeName);
  const pods = deps.cluster.cache
    .ofVm('Pod', namespace, vmi.metadata.name ?? '')
    .filter(
      (p) => p.metadata.labels?.['kubevirt.io'] === 'virt-launcher' && asString(asDict(p.status).phase) === 'Running',
    );
  return pods.find((p) => asString(asDict(p.spec).nodeName) === node) ?? pods[0];
}

/** Usage of a VM; pass its VMI when the caller already holds it (the list paths do, 10,000 times per request). */
export function vmUsage(deps: DomainDeps, namespace: string, name: string, vmi?: KObject): VmUsage | undefined {
  const metrics = deps.cluster.metrics;
  // No sample (no metrics-server): skip the pod lookup entirely.
  if (!metrics || metrics.sampledAt() === 0) return undefined;
  const instance = vmi ?? deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  if (!instance) return undefined;
  const pod = launcherPod(deps, instance);
  if (!pod) return undefined;
  const usage = metrics.pod(namespace, pod.metadata.name ?? '', COMPUTE_CONTAINER);
  if (!usage) return undefined;
  return { ...usage, cpuFraction: Math.min(1, Math.max(0, usage.cpuCores / vmiVcpus(instance))) };
}

export function nodeUsage(deps: DomainDeps, node: string): ResourceUsage | undefined {
  return deps.cluster.metrics?.node(node);
}
