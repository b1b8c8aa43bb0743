/**
 * The checks the three move preflights share (a VM to a served cluster, move-preflight.ts; a CT, move-ct-preflight.ts;
 * a VM to a Proxmox VE host, move-pve.ts): the answer's lists, the source's and the destination cluster's state, the
 * thing being deleted or already moving, the destination's namespace and StorageClass, a claim disk's readiness and
 * the snapshots left behind. Each refusal is worded here once, with its remedy; they only read, never write.
 */
import type { MoveInput, MovePlan, MoveRefusal } from '../schemas/move';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { clusterOf, exportProblem, servedClusters, unreachable, uploadProblem } from './move-destinations';
import { KUBEVIRT_BACKEND, type MemberRef } from './pools-path';
import { asDict, asString, type VolumeRef } from './vm-facts';

export type Refuse = (reason: string, remedy: string) => void;

/** A preflight's three lists, and `refuse` that adds to the first. */
export function answerLists(): { refusals: MoveRefusal[]; warnings: string[]; dropped: string[]; refuse: Refuse } {
  const refusals: MoveRefusal[] = [];
  return { refusals, warnings: [], dropped: [], refuse: (reason, remedy) => refusals.push({ reason, remedy }) };
}

/** Where a move between served clusters goes: the input's context (else the first served), namespace and name. */
export function clusterDestination(deps: DomainDeps, input: MoveInput, ref: MemberRef) {
  const toContext = input.toContext ?? servedClusters(deps)[0]!.cluster.info.context;
  return {
    toContext,
    target: clusterOf(deps, toContext, 'toContext'),
    toNamespace: input.toNamespace ?? ref.namespace,
    name: input.name ?? ref.name,
    /** How refusals name the destination: `context <toContext>`. */
    at: `context ${toContext}`,
  };
}

/** The plan's source: always a KubeVirt cluster's. */
export function planSource(ref: MemberRef, running: boolean): MovePlan['source'] {
  return { backend: KUBEVIRT_BACKEND, context: ref.context, namespace: ref.namespace, name: ref.name, running };
}

/** Refuses a source cluster that does not answer; answers why ('' when it does). */
export function sourceDownRefusal(source: DomainDeps, ref: MemberRef, refuse: Refuse): string {
  const sourceDown = unreachable(source);
  if (sourceDown) refuse(sourceDown, `wait until ${ref.context} answers again (GET /api/contexts says why)`);
  return sourceDown;
}

/** Refuses a source whose disks KubeVirt cannot export (the VMExport gate; asked only of a source that answers). */
export async function exportRefusal(source: DomainDeps, refuse: Refuse): Promise<void> {
  const why = await exportProblem(source);
  if (why) refuse(why, 'turn the gate on (Health page: gate-vmexport → Fix), then try again');
}

/**
 * What every move between served clusters checks first (VM or CT): both clusters answering, the source able to
 * export, the destination able to receive (CDI's upload proxy), and not the source's own cluster and namespace.
 * Answers why the destination does not answer ('' when it does).
 */
export async function clusterRefusals(
  source: DomainDeps,
  target: DomainDeps,
  ref: MemberRef,
  toNamespace: string,
  refuse: Refuse,
): Promise<string> {
  const toContext = target.cluster.info.context;
  const sourceDown = sourceDownRefusal(source, ref, refuse);
  const targetDown = target === source ? '' : unreachable(target);
  if (targetDown) refuse(targetDown, `wait until ${toContext} answers again, or pick another destination`);
  if (!sourceDown) await exportRefusal(source, refuse);
  if (!targetDown) {
    const why = await uploadProblem(target);
    if (why) refuse(why, `install CDI in ${toContext} or set spec.uploadProxyURLOverride on its CDIConfig`);
  }
  if (target === source && toNamespace === ref.namespace)
    refuse(
      `same cluster and namespace as the source (${ref.context}, ${ref.namespace})`,
      'pick another cluster, or another namespace (toNamespace) to move within this one',
    );
  return targetDown;
}

/**
 * Refuses moving what is being deleted, or what a move of the same `action` (`move`, `ct-move`) already moves.
 * A VM's running move is named by its namespace/name alone, a CT's with `CT` before it.
 */
export function busyRefusals(
  source: DomainDeps,
  ref: MemberRef,
  kind: 'VM' | 'CT',
  action: string,
  deleting: boolean,
  refuse: Refuse,
): void {
  const what = `${ref.namespace}/${ref.name}`;
  if (deleting) refuse(`${kind} ${what} is being deleted`, 'nothing to move; wait until it is gone');
  const running = source.journal.latest(action, what);
  if (running?.status === 'running')
    refuse(
      `a move of ${kind === 'CT' ? 'CT ' : ''}${what} is already running (task ${running.id})`,
      'wait until it ends',
    );
}

/** Refuses a destination namespace that does not exist (only asked of a destination that answers). */
export async function namespaceRefusal(target: DomainDeps, toNamespace: string, refuse: Refuse): Promise<void> {
  const toContext = target.cluster.info.context;
  if (!(await target.cluster.fetch('Namespace', undefined, toNamespace).catch(() => undefined)))
    refuse(
      `namespace ${toNamespace} does not exist in context ${toContext}`,
      `create it (kubectl --context ${toContext} create namespace ${toNamespace}) or pick another (toNamespace)`,
    );
}

/**
 * Refuses a StorageClass the destination lacks ('' = its default class, never refused; only asked of a destination
 * that answers). `whose` names the volume on it, `otherwise` the remedy besides creating the class there; `known`
 * remembers the answers across a VM's disks.
 */
export async function storageClassRefusal(
  target: DomainDeps,
  storageClass: string,
  whose: string,
  otherwise: string,
  refuse: Refuse,
  known = new Map<string, boolean>(),
): Promise<void> {
  if (!storageClass) return;
  if (!known.has(storageClass))
    known.set(
      storageClass,
      !!(await target.cluster.fetch('StorageClass', undefined, storageClass).catch(() => undefined)),
    );
  const toContext = target.cluster.info.context;
  if (!known.get(storageClass))
    refuse(
      `StorageClass ${storageClass} (${whose}) is missing in context ${toContext}`,
      `create StorageClass ${storageClass} in ${toContext}, or ${otherwise}`,
    );
}

/**
 * A VM's claim disk, ready to export: its claim Bound (else refused, and undefined: nothing to export), and a
 * DataVolume behind it Succeeded (else refused; the claim is still answered, the disk is planned all the same).
 */
export function claimDisk(source: DomainDeps, namespace: string, v: VolumeRef, refuse: Refuse): KObject | undefined {
  const pvc = source.cluster.cache.get('PersistentVolumeClaim', namespace, v.claim);
  if (!pvc || asDict(pvc.status).phase !== 'Bound') {
    refuse(
      `disk ${v.volume} (claim ${v.claim}) is ${pvc ? 'not bound yet' : 'missing'}: nothing to export`,
      pvc ? 'wait until its claim is Bound' : `remove disk ${v.volume} from the VM`,
    );
    return undefined;
  }
  const dvPhase = asString(asDict(source.cluster.cache.get('DataVolume', namespace, v.claim)?.status).phase);
  if (v.kind === 'dataVolume' && dvPhase && dvPhase !== 'Succeeded')
    refuse(`disk ${v.volume} (DataVolume ${v.claim}) is ${dvPhase}`, 'wait until it has Succeeded');
  return pvc;
}

/** What a VM's snapshots become: they stay with the source (undefined when it has none; none read counts as none). */
export async function snapshotsLeft(source: DomainDeps, ref: MemberRef): Promise<string | undefined> {
  const n = (
    await source.cluster.fetchList('VirtualMachineSnapshot', { namespace: ref.namespace }).catch(() => [] as KObject[])
  ).filter((s) => asString(asDict(asDict(s.spec).source).name) === ref.name).length;
  return n > 0 ? `${n} snapshot${n === 1 ? '' : 's'}: they stay with the source` : undefined;
}
