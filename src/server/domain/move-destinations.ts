/**
 * Cross-cluster move (ADR-0010), part 1: which served clusters can receive a VM, and why the others cannot.
 * A destination is every served kube context (the backend `kubevirt`); it is refused when it does not answer,
 * when it lacks CDI's upload proxy (the disks arrive through it), or when it is the source's own cluster and
 * namespace. The source side (its cluster answering, KubeVirt's export gate) is checked here too: without it no
 * destination can receive.
 */
import { CorralError } from '../errors';
import type { MoveDestination, MoveDestinations } from '../schemas/move';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { depsFor } from './deps';
import { enabledGates } from './doctor-kubevirt';
import { KUBEVIRT_BACKEND, formatRef, parseRef, type MemberRef } from './pools-path';
import { asDict, asString } from './vm-facts';

/** The VM a move names: its ref, its cluster's deps and its object (404 for an unknown context or VM). */
export interface MoveSource {
  ref: MemberRef;
  deps: DomainDeps;
  vm: KObject;
}

/** Every served cluster's deps, in configured order (this one alone when it serves one). */
export function servedClusters(deps: DomainDeps): DomainDeps[] {
  return deps.peers?.all() ?? [deps];
}

/** The deps of `context` (404 naming it and the served ones when Corral does not serve it). */
export function clusterOf(deps: DomainDeps, context: string, field: string): DomainDeps {
  const found = depsFor(deps, context);
  if (!found)
    throw new CorralError(
      'NOT_FOUND',
      `${field}: context ${context} is not served by this Corral (contexts: ${servedClusters(deps)
        .map((d) => d.cluster.info.context)
        .join(', ')})`,
    );
  return found;
}

export function resolveSource(deps: DomainDeps, refText: string): MoveSource {
  const ref = parseRef(refText, 'ref');
  const source = clusterOf(deps, ref.context, 'ref');
  const vm = source.cluster.cache.get('VirtualMachine', ref.namespace, ref.name);
  if (!vm)
    throw new CorralError('NOT_FOUND', `ref: VM ${ref.namespace}/${ref.name} not found in context ${ref.context}`);
  return { ref, deps: source, vm };
}

/** Why `deps`'s cluster cannot take part now ('' when it answers). */
export function unreachable(deps: DomainDeps): string {
  if (deps.cluster.isReady()) return '';
  const why = deps.cluster.readinessProblems?.() ?? [];
  return `context ${deps.cluster.info.context} does not answer (stale)${why.length ? `: ${why[0]}` : ''}`;
}

/** Why CDI cannot receive an upload in this cluster ('' when it publishes its upload proxy). */
export async function uploadProblem(deps: DomainDeps): Promise<string> {
  const context = deps.cluster.info.context;
  const config = await deps.cluster.fetch('CDIConfig', undefined, 'config').catch(() => undefined);
  if (!config) return `context ${context} has no CDI (CDIConfig config is missing): the disks cannot be uploaded`;
  if (!asString(asDict(config.status).uploadProxyURL))
    return `CDI in context ${context} publishes no upload proxy URL (CDIConfig status.uploadProxyURL)`;
  return '';
}

/** Why KubeVirt cannot export this cluster's disks ('' when the VMExport gate is on). */
export async function exportProblem(deps: DomainDeps): Promise<string> {
  const crs = await deps.cluster.fetchList('KubeVirt').catch(() => [] as KObject[]);
  const cr = crs[0];
  if (!cr) return `context ${deps.cluster.info.context} has no KubeVirt CR: its disks cannot be exported`;
  return enabledGates(cr).has('VMExport')
    ? ''
    : `the KubeVirt "VMExport" feature gate is off in context ${deps.cluster.info.context}: its disks cannot be exported`;
}

/** `GET /api/move/destinations?ref=…`: every served cluster, with why it cannot receive this VM. */
export async function moveDestinations(deps: DomainDeps, refText: string): Promise<MoveDestinations> {
  return destinationsFor(deps, resolveSource(deps, refText));
}

/** Every served cluster as a destination for a resolved source (a VM, or a CT: the checks are the same). */
export async function destinationsFor(
  deps: DomainDeps,
  source: { ref: MemberRef; deps: DomainDeps },
): Promise<MoveDestinations> {
  const sourceWhy = [unreachable(source.deps), await exportProblem(source.deps)].filter(Boolean);
  const destinations = await Promise.all(
    servedClusters(deps).map(async (d, i): Promise<MoveDestination> => {
      const context = d.cluster.info.context;
      const reasons = [...sourceWhy];
      const down = unreachable(d);
      if (down && d !== source.deps) reasons.push(down);
      else if (!down) {
        const upload = await uploadProblem(d);
        if (upload) reasons.push(upload);
      }
      // The source's own cluster receives only into another namespace (the preflight's toNamespace).
      if (d === source.deps)
        reasons.push(
          `same cluster and namespace as the source (${source.ref.namespace}): within ${context} a move needs another namespace (toNamespace)`,
        );
      return {
        backend: KUBEVIRT_BACKEND,
        context,
        name: d.cluster.info.name,
        default: i === 0,
        ok: reasons.length === 0,
        reasons,
      };
    }),
  );
  return { ref: formatRef(source.ref), destinations };
}
