/**
 * Cross-cluster move of a container (CT; ADR-0010 and ADR-0005): the preflight. A CT is a bare Pod plus its data
 * PVC `<ct>-data`, whose labels and `corral.ct/spec` annotation make it a CT, so moving one moves that volume: its
 * bytes are exported at the source and uploaded into a claim at the destination that carries the same spec (under
 * the new name and namespace), and the pod is built again there from it. Reads both clusters, never writes; a
 * refused move is an answer (200), only bad input (400) and an unknown ref or context (404) throw. The checks a VM's
 * move makes too (the clusters, the namespace, the StorageClass, …) are move-checks.ts's.
 */
import { CorralError } from '../errors';
import type { MoveDestinations, MoveInput, MovePlan } from '../schemas/move';
import type { DomainDeps } from './deps';
import { findCt, type CtState } from './ct-rows';
import { dataClaimName, LABEL_CT_NAME, type CtSpec } from './ct-spec';
import { LABEL_VMID } from './labels';
import {
  answerLists,
  busyRefusals,
  clusterDestination,
  clusterRefusals,
  namespaceRefusal,
  planSource,
  storageClassRefusal,
} from './move-checks';
import { clusterOf, destinationsFor } from './move-destinations';
import type { MoveDisk, MovePlanned } from './move-preflight';
import { KUBEVIRT_BACKEND, formatRef, parseRef, type MemberRef } from './pools-path';
import { asDict, asString, claimSize } from './vm-facts';

/** The task action of a CT move (a VM's is `move`): both are filed under `<namespace>/<name>` in the source's journal. */
export const CT_MOVE_ACTION = 'ct-move';

/** The CT a move names: its ref, its cluster's deps and what the cache holds of it (404 when unknown). */
export interface CtMoveSource {
  ref: MemberRef;
  deps: DomainDeps;
  ct: CtState;
}

/** The preflight's answer and what the commit needs beside it. */
export interface CtMovePlanned {
  preflight: MovePlanned['preflight'];
  source: DomainDeps;
  target: DomainDeps;
  ct: CtState;
  /** The data volume: the source claim and the claim it becomes at the destination. */
  disk: MoveDisk;
  /** The CT's spec at the destination (as recorded on the moved claim). */
  spec: CtSpec;
  /** The pod ran (or was starting) when planned: the move stops it and starts the moved CT. */
  running: boolean;
}

export function resolveCtSource(deps: DomainDeps, refText: string): CtMoveSource {
  const ref = parseRef(refText, 'ref');
  const source = clusterOf(deps, ref.context, 'ref');
  const ct = findCt(source, ref.namespace, ref.name);
  if (!ct)
    throw new CorralError('NOT_FOUND', `ref: CT ${ref.namespace}/${ref.name} not found in context ${ref.context}`);
  return { ref, deps: source, ct };
}

/** `GET /api/move/destinations?kind=ct&ref=…`: every served cluster, with why it cannot receive this CT. */
export async function ctMoveDestinations(deps: DomainDeps, refText: string): Promise<MoveDestinations> {
  return destinationsFor(deps, resolveCtSource(deps, refText));
}

/** A CT moves between served clusters only: no Proxmox VE backend, none of its fields (400 naming the field). */
export function requireCtMoveFields(input: MoveInput): void {
  if (input.toBackend !== KUBEVIRT_BACKEND)
    throw new CorralError('BAD_REQUEST', 'kind: a CT moves only between served clusters (toBackend kubevirt)');
  for (const k of ['vmid', 'toNode', 'toStorage', 'bridge'] as const)
    if (input[k] !== undefined)
      throw new CorralError('BAD_REQUEST', `${k}: only for a VM moved to a Proxmox VE host (toBackend pve)`);
}

/** The pod counts as running from its creation until Stop deletes it (a Pending pod was asked to run). */
export function ctPodLive(ct: CtState): boolean {
  return ct.pod !== undefined && !ct.pod.metadata.deletionTimestamp;
}

export async function planCtMove(deps: DomainDeps, input: MoveInput): Promise<CtMovePlanned> {
  requireCtMoveFields(input);
  const { ref, deps: source, ct } = resolveCtSource(deps, input.ref);
  const { toContext, target, toNamespace, name, at } = clusterDestination(deps, input, ref);
  const { refusals, warnings, dropped, refuse } = answerLists();

  const targetDown = await clusterRefusals(source, target, ref, toNamespace, refuse);
  const reachable = !targetDown;
  busyRefusals(source, ref, 'CT', CT_MOVE_ACTION, !!ct.pvc.metadata.deletionTimestamp, refuse);

  // The destination: namespace, and the CT's three names (the CT, its claim, its pod) free there.
  if (reachable) await namespaceRefusal(target, toNamespace, refuse);
  const to = dataClaimName(name);
  const rename = 'give the moved CT another name (name)';
  if (findCt(target, toNamespace, name))
    refuse(`a CT ${toNamespace}/${name} already exists in ${at}`, `${rename}, or delete that CT first`);
  else {
    if (
      target.cluster.cache.get('PersistentVolumeClaim', toNamespace, to) ||
      target.cluster.cache.get('DataVolume', toNamespace, to)
    )
      refuse(`a volume ${toNamespace}/${to} already exists in ${at}`, `${rename}, or delete that volume first`);
    if (target.cluster.cache.get('Pod', toNamespace, name))
      refuse(`a pod ${toNamespace}/${name} already exists in ${at}`, `${rename}, or delete that pod first`);
  }

  // The data volume: Bound, on a class the destination has.
  const pvc = ct.pvc;
  const claim = pvc.metadata.name ?? dataClaimName(ref.name);
  if (asDict(pvc.status).phase !== 'Bound')
    refuse(`the CT's volume ${ref.namespace}/${claim} is not bound yet: nothing to export`, 'wait until it is Bound');
  const storageClass = asString(asDict(pvc.spec).storageClassName);
  if (reachable)
    await storageClassRefusal(
      target,
      storageClass,
      "the CT's volume",
      'create the CT again on a class both clusters have',
      refuse,
    );
  const size = asString(asDict(asDict(pvc.status).capacity).storage) || claimSize(pvc) || ct.spec.disk;
  const disk: MoveDisk = { volume: 'data', claim, size, storageClass, to };

  // What changes and what stays behind.
  const live = ctPodLive(ct);
  warnings.push(`IP address changes: the CT's pod gets an address from ${toContext}'s pod network`);
  warnings.push(`the image ${ct.spec.image} is pulled by ${toContext}: it must be reachable from there`);
  // KubeVirt exports a CT's claim (a plain filesystem) only as its files, which CDI unpacks as its own user.
  warnings.push(
    "the volume travels as its files (a tar): their owners are not kept (they arrive as CDI's upload user's) and device nodes cannot be made",
  );
  if (live) warnings.push('the CT is running: it is stopped for the move and started again at the destination');
  if (input.deleteSource) warnings.push('the source CT and its volume are deleted once the moved CT is verified');
  const services = await source.cluster
    .fetchList('Service', { namespace: ref.namespace, labelSelector: `${LABEL_CT_NAME}=${ref.name}` })
    .catch(() => []);
  for (const s of services)
    dropped.push(`Service ${ref.namespace}/${s.metadata.name ?? '?'}: it stays with the source (create it again)`);
  if (pvc.metadata.labels?.[LABEL_VMID])
    dropped.push(`vmid ${pvc.metadata.labels[LABEL_VMID]}: ${toContext} gives the CT a vmid of its own`);

  const spec: CtSpec = { ...ct.spec, name, namespace: toNamespace, disk: ct.spec.disk || size };
  const plan: MovePlan = {
    source: planSource(ref, live),
    destination: { backend: KUBEVIRT_BACKEND, context: toContext, namespace: toNamespace, name },
    disks: [{ ...disk }],
    secrets: [],
    scratch: input.scratch ?? false,
    deleteSource: input.deleteSource ?? false,
    steps: [
      ...(live ? [`stop CT ${ref.namespace}/${ref.name}`] : []),
      `export volume ${claim} from ${ref.context}`,
      `upload it (${size}) into ${toNamespace}/${to} in ${toContext}, carrying the CT's spec`,
      `verify: CT ${toNamespace}/${name} exists in ${toContext} with its volume Bound`,
      ...(live ? [`start CT ${toNamespace}/${name}`] : []),
      input.deleteSource
        ? `delete CT ${ref.namespace}/${ref.name} in ${ref.context}`
        : `keep ${formatRef(ref)} (stopped)`,
    ],
  };
  return {
    preflight: { ok: refusals.length === 0, refusals, warnings, dropped, plan },
    source,
    target,
    ct,
    disk,
    spec,
    running: live,
  };
}
