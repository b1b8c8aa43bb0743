/**
 * Whether a bootc source can be built here. Corral builds bootc images inside the cluster, never on its own host: a
 * Job runs bootc-image-builder (privileged) and writes the raw disk into a blank CDI DataVolume (vm-spec.ts
 * buildBootcJob). So podman/buildah on Corral's PATH is irrelevant; what matters is that the cluster can run that Job:
 *
 * 1. CDI serves DataVolumes (the build's output disk is one);
 * 2. a ready node whose architecture bootc-image-builder ships for (amd64, arm64);
 * 3. the target namespace does not enforce a Pod Security level below `privileged` (the builder needs it);
 * 4. the bootc extension is installed: the Job runs as its ServiceAccount (extensions-catalog.ts), and a Job whose
 *    ServiceAccount is missing never gets a pod.
 *
 * Each refusal is reported as a reason; `bootc` is true when there is none. Read fresh each time (one small list and
 * one get; the UI asks once per page load).
 */
import { CorralError } from '../errors';
import type { DomainDeps } from './deps';
import { BOOTC_BUILDER_SA } from './extensions-catalog';
import { asDict } from './vm-facts';

const BUILDER_ARCHES = new Set(['amd64', 'arm64']);

export async function bootcBlockers(deps: DomainDeps): Promise<string[]> {
  const reasons: string[] = [];
  const namespace = deps.config.defaultNamespace;
  try {
    await deps.cluster.listPage('DataVolume', { namespace, limit: 1 });
  } catch (err) {
    if (!(err instanceof CorralError && err.code === 'NOT_FOUND')) throw err;
    reasons.push('CDI is not installed (no DataVolume API) — the build writes its disk into a DataVolume');
  }
  const nodes = deps.cluster.cache.list('Node');
  const usable = nodes.some((n) => {
    const status = asDict(n.status);
    const arch = String(asDict(status.nodeInfo).architecture ?? n.metadata.labels?.['kubernetes.io/arch'] ?? '');
    const conditions = Array.isArray(status.conditions) ? status.conditions.map(asDict) : [];
    const ready = conditions.some((c) => c.type === 'Ready' && c.status === 'True');
    const cordoned = asDict(n.spec).unschedulable === true;
    return ready && !cordoned && BUILDER_ARCHES.has(arch);
  });
  if (!usable) reasons.push('no ready, schedulable amd64 or arm64 node to run bootc-image-builder on');
  const ns = await deps.cluster.fetch('Namespace', undefined, namespace);
  const level = ns?.metadata.labels?.['pod-security.kubernetes.io/enforce'];
  if (level && level !== 'privileged') {
    reasons.push(`namespace ${namespace} enforces Pod Security "${level}"; bootc-image-builder runs privileged`);
  }
  if (!(await deps.cluster.fetch('ServiceAccount', namespace, BOOTC_BUILDER_SA))) {
    reasons.push(
      `the bootc extension is not installed (no ServiceAccount ${namespace}/${BOOTC_BUILDER_SA} for the build Job) — install it under Datacenter → Extensions`,
    );
  }
  return reasons;
}
