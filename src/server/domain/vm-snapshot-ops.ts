/**
 * Corral's own snapshot view over vm-snapshots.ts (the implementation /api2/json uses too): api.md's row shape, the
 * preconditions a snapshot needs checked up front (a 409 that names what to install rather than a snapshot that
 * hangs in InProgress), and a restore that brings the VM back to the power state it had.
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, vmiActive, vmVolumes } from './vm-facts';
import { createSnapshot, deleteSnapshot, listSnapshots, restoreSnapshot } from './vm-snapshots';

export interface SnapshotView {
  name: string;
  phase: string;
  creationTime: string;
  description?: string;
  size?: string;
  ready: boolean;
  error?: string;
}

export const SNAPSHOT_GATE_HINT =
  'the KubeVirt "Snapshot" feature gate is off: add it to spec.configuration.developerConfiguration.featureGates of the KubeVirt CR';
const SNAPSHOTTER_HINT =
  'install the CSI external-snapshotter (VolumeSnapshot CRDs and snapshot-controller) and a VolumeSnapshotClass for your storage driver';

/** A 404 from a list of a kind whose CRD is not installed means "none"; every other failure propagates. */
async function listOrNone(deps: DomainDeps, kind: 'VolumeSnapshotClass' | 'StorageClass'): Promise<KObject[]> {
  try {
    return await deps.cluster.fetchList(kind);
  } catch (err) {
    if (err instanceof CorralError && err.code === 'NOT_FOUND') return [];
    throw err;
  }
}

/** Claims behind the VM's disks (PVC and DataVolume volumes: what a VirtualMachineSnapshot includes). */
export function vmClaims(vm: KObject): string[] {
  return vmVolumes(vm)
    .filter((v) => (v.kind === 'dataVolume' || v.kind === 'persistentVolumeClaim') && v.claim)
    .map((v) => v.claim);
}

/**
 * Refuses (409) when no VolumeSnapshotClass can snapshot the VM's disks, naming the class or driver that lacks one.
 * The Snapshot feature gate cannot be read without cluster-admin rights; its refusal is translated where it happens.
 */
export async function requireSnapshotSupport(deps: DomainDeps, namespace: string, name: string): Promise<void> {
  const vm = requireVm(deps, namespace, name);
  const classes = await listOrNone(deps, 'VolumeSnapshotClass');
  if (classes.length === 0)
    throw new CorralError('CONFLICT', `no VolumeSnapshotClass in the cluster: ${SNAPSHOTTER_HINT}`);
  const drivers = new Set(classes.map((c) => asString(c.driver)));
  const storageClasses = await listOrNone(deps, 'StorageClass');
  for (const claim of vmClaims(vm)) {
    const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, claim);
    const scName = asString(asDict(pvc?.spec).storageClassName);
    const sc = storageClasses.find((c) => c.metadata.name === scName);
    const provisioner = asString(sc?.provisioner);
    if (sc && provisioner && !drivers.has(provisioner))
      throw new CorralError(
        'CONFLICT',
        `no VolumeSnapshotClass for storage class ${scName} (driver ${provisioner}) of disk ${claim}: create one with driver: ${provisioner}`,
      );
  }
}

/** KubeVirt's admission refuses snapshot/restore/clone objects while the gate is off: say what to change. */
export function translateGateRefusal(err: unknown): never {
  if (err instanceof CorralError && err.code === 'UNPROCESSABLE' && /feature gate/i.test(err.message))
    throw new CorralError('CONFLICT', SNAPSHOT_GATE_HINT, { cause: err });
  throw err;
}

/** Total capacity of the VM's claims named by the snapshot's included volumes, as a quantity. */
function snapshotSize(deps: DomainDeps, namespace: string, vm: KObject, snapshot: KObject | undefined): string {
  const included = asArray(asDict(asDict(snapshot?.status).snapshotVolumes).includedVolumes).map(asString);
  if (!snapshot || included.length === 0) return '';
  let bytes = 0;
  for (const v of vmVolumes(vm)) {
    if (!included.includes(v.volume) || !v.claim) continue;
    const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, v.claim);
    const capacity = asString(asDict(asDict(pvc?.status).capacity).storage);
    bytes += quantityToNumber(capacity || asString(asDict(asDict(asDict(pvc?.spec).resources).requests).storage));
  }
  if (!bytes) return '';
  const gi = bytes / 2 ** 30;
  return Number.isInteger(gi) ? `${gi}Gi` : `${Math.ceil(bytes / 2 ** 20)}Mi`;
}

/** api.md rows, oldest first. A cluster without KubeVirt's snapshot CRDs is a 409 naming them. */
export async function snapshotRows(deps: DomainDeps, namespace: string, name: string): Promise<SnapshotView[]> {
  const vm = requireVm(deps, namespace, name);
  // The VM exists (checked above), so a 404 here is the snapshot CRD itself.
  const [rows, objects] = await Promise.all([
    listSnapshots(deps, namespace, name),
    deps.cluster.fetchList('VirtualMachineSnapshot', { namespace }),
  ]).catch((err: unknown) => {
    if (err instanceof CorralError && err.code === 'NOT_FOUND')
      throw new CorralError(
        'CONFLICT',
        `KubeVirt's snapshot API (snapshot.kubevirt.io) is not installed: install KubeVirt with the Snapshot feature gate`,
      );
    throw err;
  });
  return rows.map((r) => {
    const size = snapshotSize(
      deps,
      namespace,
      vm,
      objects.find((o) => o.metadata.name === r.object),
    );
    return {
      name: r.name,
      phase: r.phase,
      creationTime: r.creationTime,
      ...(r.description ? { description: r.description } : {}),
      ...(size ? { size } : {}),
      ready: r.readyToUse,
      ...(r.error ? { error: r.error } : {}),
    };
  });
}

/** `snap-20261201-161500` (UTC), the name of a snapshot taken without one. */
export function defaultSnapshotName(now = new Date()): string {
  const iso = now.toISOString();
  return `snap-${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}`;
}

/**
 * Takes a snapshot as a task. Online when the VM runs: KubeVirt freezes the guest's filesystems through the guest
 * agent when one is connected (the task log says which), and snapshots crash-consistently otherwise.
 */
export async function takeSnapshot(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  display: string | undefined,
  description: string | undefined,
): Promise<{ name: string; task: string }> {
  await requireSnapshotSupport(deps, namespace, name);
  const snapName = display ?? defaultSnapshotName();
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const agent = asArray(asDict(vmi?.status).conditions)
    .map(asDict)
    .some((c) => c.type === 'AgentConnected' && c.status === 'True');
  const task = await createSnapshot(deps, caller, namespace, name, snapName, description ?? '', (t) => {
    if (vmiActive(vmi))
      t.log(
        agent
          ? 'online snapshot: the guest agent freezes the filesystems'
          : 'online snapshot without a guest agent: crash-consistent',
      );
  }).catch(translateGateRefusal);
  return { name: snapName, task };
}

/** Restores as a task: stops the VM if it runs, restores, and starts it again if it was running. */
export async function restoreAndResume(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  snap: string,
): Promise<string> {
  requireVm(deps, namespace, name);
  const wasRunning = vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name));
  return restoreSnapshot(deps, caller, namespace, name, snap, { startAfter: wasRunning }, (t) =>
    t.log(wasRunning ? 'the VM runs: it is stopped, restored and started again' : 'the VM is stopped: restoring'),
  ).catch(translateGateRefusal);
}

export async function removeSnapshot(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  snap: string,
): Promise<string> {
  return deleteSnapshot(deps, caller, namespace, name, snap);
}
