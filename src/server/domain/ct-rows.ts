/**
 * CT rows, read from the watch cache only: the CT PVCs come from the label index, each one's pod by name. A list of
 * N CTs is N map lookups; nothing is asked of the apiserver per request.
 */
import { CorralError } from '../errors';
import type { DomainDeps } from './deps';
import type { KObject, VolumeUsage } from './cluster-port';
import { dataClaimName, LABEL_CT, specOfClaim, type CtSpec } from './ct-spec';

export interface CtRow {
  /** The kube context (cluster) the CT is on. */
  context: string;
  name: string;
  namespace: string;
  node: string;
  phase: string;
  ready: boolean;
  image: string;
  cpu: number;
  mem: string;
  privileged: boolean;
  disk: string;
  storageClass: string;
  ip: string;
  createdAt: string;
  /** Why the pod is not running (image pull failure, unschedulable), '' when nothing is wrong. */
  reason: string;
  /** How full the data volume is, as the kubelet mounting it measured it; null when unknown (stopped, no reading). */
  diskUsage: { usedBytes: number; totalBytes: number } | null;
}

type Dict = Record<string, unknown>;
const dict = (v: unknown): Dict => (v && typeof v === 'object' ? (v as Dict) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The pod's phase as a user reads it: `Stopping` while it is being deleted. */
export function podPhase(pod: KObject | undefined): string {
  if (!pod) return 'Stopped';
  if (pod.metadata.deletionTimestamp) return 'Stopping';
  return str(pod.status?.phase) || 'Pending';
}

function podReady(pod: KObject | undefined): boolean {
  const conditions = Array.isArray(pod?.status?.conditions) ? (pod.status.conditions as Dict[]) : [];
  return !pod?.metadata.deletionTimestamp && conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** The waiting reason and message of a container that cannot start, or the scheduler's complaint. */
export function podTrouble(pod: KObject | undefined): string {
  if (!pod) return '';
  const statuses = [
    ...(Array.isArray(pod.status?.initContainerStatuses) ? (pod.status.initContainerStatuses as Dict[]) : []),
    ...(Array.isArray(pod.status?.containerStatuses) ? (pod.status.containerStatuses as Dict[]) : []),
  ];
  for (const s of statuses) {
    const waiting = dict(dict(s.state).waiting);
    const reason = str(waiting.reason);
    if (reason && reason !== 'ContainerCreating' && reason !== 'PodInitializing')
      return `${reason}: ${str(waiting.message)}`.replace(/: $/, '');
  }
  const conditions = Array.isArray(pod.status?.conditions) ? (pod.status.conditions as Dict[]) : [];
  const unscheduled = conditions.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  return unscheduled ? `${str(unscheduled.reason)}: ${str(unscheduled.message)}` : '';
}

export function ctRow(spec: CtSpec, pvc: KObject, pod: KObject | undefined, usage?: VolumeUsage, context = ''): CtRow {
  const live = pod !== undefined && !pod.metadata.deletionTimestamp;
  return {
    context,
    name: spec.name,
    namespace: spec.namespace,
    node: pod && !pod.metadata.deletionTimestamp ? str(pod.spec?.nodeName) : '',
    phase: podPhase(pod),
    ready: podReady(pod),
    image: spec.image,
    cpu: spec.cpu,
    mem: spec.mem,
    privileged: spec.privileged,
    disk: str(dict(dict(pvc.status).capacity).storage) || spec.disk,
    storageClass: str(pvc.spec?.storageClassName) || spec.storageClass,
    ip: pod && !pod.metadata.deletionTimestamp ? str(pod.status?.podIP) : '',
    createdAt: pvc.metadata.creationTimestamp ?? '',
    reason: podTrouble(pod),
    // A reading is only about a mounted volume: a stopped CT's last one would be stale by the time anyone looks.
    diskUsage: live && usage ? { usedBytes: usage.usedBytes, totalBytes: usage.capacityBytes } : null,
  };
}

/** A CT's row with the data volume usage of the last metrics round (no cluster call). */
export function ctRowOf(deps: DomainDeps, { spec, pvc, pod }: CtState): CtRow {
  return ctRow(
    spec,
    pvc,
    pod,
    deps.cluster.metrics?.volume?.(spec.namespace, dataClaimName(spec.name)),
    deps.cluster.info.context,
  );
}

/** A CT as the cache holds it: its PVC (identity and spec) and its pod, when one exists. */
export interface CtState {
  spec: CtSpec;
  pvc: KObject;
  pod: KObject | undefined;
}

export function findCt(deps: DomainDeps, namespace: string, name: string): CtState | undefined {
  const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, dataClaimName(name));
  if (!pvc || pvc.metadata.labels?.[LABEL_CT] !== 'true') return undefined;
  const spec = specOfClaim(pvc);
  if (!spec || spec.name !== name) return undefined;
  return { spec, pvc, pod: deps.cluster.cache.get('Pod', namespace, name) };
}

export function requireCt(deps: DomainDeps, namespace: string, name: string): CtState {
  const ct = findCt(deps, namespace, name);
  if (!ct) throw new CorralError('NOT_FOUND', `CT ${namespace}/${name} not found`);
  return ct;
}

export function listCts(deps: DomainDeps, namespace?: string): CtRow[] {
  const rows: CtRow[] = [];
  for (const pvc of deps.cluster.cache.withLabel('PersistentVolumeClaim', LABEL_CT, 'true')) {
    if (namespace && pvc.metadata.namespace !== namespace) continue;
    const spec = specOfClaim(pvc);
    if (!spec || dataClaimName(spec.name) !== pvc.metadata.name) continue;
    rows.push(ctRowOf(deps, { spec, pvc, pod: deps.cluster.cache.get('Pod', spec.namespace, spec.name) }));
  }
  return rows.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
}
