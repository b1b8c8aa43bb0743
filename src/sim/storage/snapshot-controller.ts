/**
 * The CSI snapshotter (VolumeSnapshot → readyToUse) and KubeVirt's VirtualMachineSnapshot controller
 * [src: KubeVirt pkg/storage/snapshot/snapshot.go]: lock the source VM, write a VirtualMachineSnapshotContent
 * `vmsnapshot-content-<uid>` and one VolumeSnapshot `vmsnapshot-<uid>-volume-<volume>` per PVC volume, and report
 * Succeeded/readyToUse once every VolumeSnapshot is ready. Ownership (snapshot → content → VolumeSnapshots) lets
 * the garbage collector delete the chain with deletionPolicy Delete.
 */
import type { KObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { activeVmi, vmSpecClaims } from './consumers.js';
import { featureGateEnabled } from './feature-gates.js';
import { DISK_CONTENT_ANNOTATION, S } from './keys.js';
import { capacityStorage, requestedStorage } from './pvc-controller.js';
import type { ObjectStore } from '../store/object-store.js';
import { objId, storeView, type Runtime, type StoreView } from './runtime.js';
import { snapshotClassForPvc } from './storage-classes.js';
import {
  arr,
  conditionStatus,
  nowTimestamp,
  ownerRef,
  parseDuration,
  rec,
  setCondition,
  spec,
  status,
  statusOf,
  str,
} from './util.js';

const SNAPSHOT_CONTROLLER = 'virt-controller';
const DEFAULT_FAILURE_DEADLINE_MS = 5 * 60_000;

export function contentName(snapshot: KObject): string {
  return `vmsnapshot-content-${snapshot.metadata.uid}`;
}

export function volumeSnapshotName(snapshot: KObject, volume: string): string {
  return `vmsnapshot-${snapshot.metadata.uid}-volume-${volume}`;
}

interface VolumePlan {
  included: { volume: string; claim: KObject; snapshotClass: string }[];
  excluded: string[];
  /** Per-volume reasons a snapshot cannot include a volume it must (VM `status.volumeSnapshotStatuses`). */
  statuses: { name: string; enabled: boolean; reason?: string }[];
  blocking: string[];
}

/** Which VM volumes a snapshot takes and whether each can be snapshotted at all. */
export function planVolumes(rt: StoreView, vm: KObject): VolumePlan {
  const template = rec(rec(spec(vm).template).spec);
  const claims = new Map(vmSpecClaims(template).map((c) => [c.volume, c.claim]));
  const plan: VolumePlan = { included: [], excluded: [], statuses: [], blocking: [] };
  for (const v of arr(template.volumes)) {
    const volume = str(rec(v).name);
    if (!volume) continue;
    const claimName = claims.get(volume);
    if (!claimName) {
      plan.excluded.push(volume);
      plan.statuses.push({
        name: volume,
        enabled: false,
        reason: `Snapshot is not supported for this volumeSource type [${volume}]`,
      });
      continue;
    }
    const claim = rt.get(S.pvcs, vm.metadata.namespace, claimName);
    if (!claim) {
      plan.blocking.push(`PersistentVolumeClaim ${claimName} of volume ${volume} does not exist`);
      plan.statuses.push({ name: volume, enabled: false, reason: `PVC not found` });
      continue;
    }
    const vsc = snapshotClassForPvc(rt, claim);
    if (!vsc) {
      const sc = str(spec(claim).storageClassName) ?? '';
      const reason = `No VolumeSnapshotClass: Volume snapshots are not configured for this StorageClass [${sc}] [${volume}]`;
      plan.statuses.push({ name: volume, enabled: false, reason });
      plan.blocking.push(reason);
      continue;
    }
    plan.statuses.push({ name: volume, enabled: true });
    plan.included.push({ volume, claim, snapshotClass: vsc.metadata.name });
  }
  return plan;
}

/**
 * VM `status.volumeSnapshotStatuses` as KubeVirt computes it: a PVC volume is snapshot-able only when a
 * VolumeSnapshotClass matches its StorageClass's provisioner. The VM status belongs to the KubeVirt VM controller,
 * which may call this; the snapshot controller never writes the field itself (two writers would fight).
 */
export function volumeSnapshotStatuses(store: ObjectStore, vm: KObject): VolumePlan['statuses'] {
  return planVolumes(storeView(store), vm).statuses;
}

export function startSnapshotControllers(rt: Runtime): void {
  const enqueueSnapshot = (ns: string | undefined, name: string) =>
    rt.enqueue(`vmsnapshot:${ns ?? ''}/${name}`, () => reconcileSnapshot(rt, ns, name));
  if (rt.serves(S.volumeSnapshots)) {
    const enqueueVs = (o: KObject) =>
      rt.enqueue(`vs:${o.metadata.namespace}/${o.metadata.name}`, () =>
        reconcileVolumeSnapshot(rt, o.metadata.namespace, o.metadata.name),
      );
    rt.on(S.volumeSnapshots, (ev) => {
      if (ev.type !== 'DELETED') enqueueVs(ev.object);
      const content = ev.object.metadata.ownerReferences?.find((r) => r.kind === 'VirtualMachineSnapshotContent');
      const snapshotName = content && ev.object.metadata.labels?.['snapshot.kubevirt.io/vmsnapshot-name'];
      if (snapshotName) enqueueSnapshot(ev.object.metadata.namespace, snapshotName);
    });
    for (const vs of rt.list(S.volumeSnapshots)) enqueueVs(vs);
  }
  if (!rt.serves(S.vmSnapshots)) return;
  rt.on(S.vmSnapshots, (ev) => {
    if (ev.type === 'DELETED') {
      rt.cancelAll(objId('vmsnapshot', ev.object));
      rt.enqueue(`vmsnapshot-unlock:${ev.object.metadata.uid}`, () => unlockVm(rt, ev.object));
    } else {
      enqueueSnapshot(ev.object.metadata.namespace, ev.object.metadata.name);
    }
  });
  // A VM or PVC appearing may unblock a snapshot that was waiting for it.
  const retryWaiting = (ns: string | undefined) => {
    for (const s of rt.list(S.vmSnapshots, ns))
      if (status(s).phase === 'InProgress' || !status(s).phase) enqueueSnapshot(ns, s.metadata.name);
  };
  rt.on(S.vms, (ev) => retryWaiting(ev.object.metadata.namespace));
  rt.on(S.pvcs, (ev) => retryWaiting(ev.object.metadata.namespace));
  for (const s of rt.list(S.vmSnapshots)) enqueueSnapshot(s.metadata.namespace, s.metadata.name);
}

// --- VolumeSnapshot (CSI external-snapshotter) -------------------------------------------------------------

function reconcileVolumeSnapshot(rt: Runtime, ns: string | undefined, name: string): void {
  const vs = rt.get(S.volumeSnapshots, ns, name);
  if (!vs || vs.metadata.deletionTimestamp || status(vs).readyToUse === true) return;
  const id = `${objId('vs', vs)}:ready`;
  if (rt.hasTimer(id)) return;
  const claimName = str(rec(spec(vs).source).persistentVolumeClaimName);
  const claim = claimName ? rt.get(S.pvcs, ns, claimName) : undefined;
  const className = str(spec(vs).volumeSnapshotClassName);
  const problem = !claim
    ? `Failed to create snapshot: failed to get input parameters to create snapshot ${name}: "persistentvolumeclaim \\"${claimName ?? ''}\\" not found"`
    : className && !rt.get(S.volumeSnapshotClasses, undefined, className)
      ? `Failed to get snapshot class with error volumesnapshotclass.snapshot.storage.k8s.io "${className}" not found`
      : undefined;
  if (problem) {
    rt.store.mutate(S.volumeSnapshots, ns, name, (o) => {
      const st = statusOf(o);
      if (rec(st.error).message === problem) return false;
      st.readyToUse = false;
      st.error = { message: problem, time: nowTimestamp() };
    });
    return;
  }
  rt.after(id, rt.between(1000, 5000), () => {
    const current = rt.get(S.volumeSnapshots, ns, name);
    const source = claimName ? rt.get(S.pvcs, ns, claimName) : undefined;
    if (!current || current.metadata.deletionTimestamp || !source) return;
    rt.store.mutate(S.volumeSnapshots, ns, name, (o) => {
      const content = source.metadata.annotations?.[DISK_CONTENT_ANNOTATION];
      if (content) o.metadata.annotations = { ...o.metadata.annotations, [DISK_CONTENT_ANNOTATION]: content };
      const st = statusOf(o);
      delete st.error;
      st.boundVolumeSnapshotContentName = `snapcontent-${o.metadata.uid}`;
      st.creationTime = nowTimestamp();
      st.readyToUse = true;
      st.restoreSize = capacityStorage(source) ?? requestedStorage(source) ?? '0';
    });
  });
}

// --- VirtualMachineSnapshot --------------------------------------------------------------------------------

function patchSnapshotStatus(rt: Runtime, snapshot: KObject, change: (st: Record<string, unknown>) => void): void {
  rt.store.mutate(S.vmSnapshots, snapshot.metadata.namespace, snapshot.metadata.name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function patchVmStatus(
  rt: Runtime,
  namespace: string | undefined,
  name: string,
  change: (st: Record<string, unknown>) => void,
): void {
  rt.store.mutate(S.vms, namespace, name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function failSnapshot(rt: Runtime, snapshot: KObject, message: string): void {
  patchSnapshotStatus(rt, snapshot, (st) => {
    st.phase = 'Failed';
    st.readyToUse = false;
    st.error = { message, time: nowTimestamp() };
    setCondition(st, { type: 'Progressing', status: 'False', reason: 'Operation failed' }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: 'Operation failed' }, { probe: true });
    setCondition(st, { type: 'Failure', status: 'True', reason: message }, { probe: true });
  });
  recordEvent(rt.store, snapshot, 'VirtualMachineSnapshotFailed', message, {
    type: 'Warning',
    component: SNAPSHOT_CONTROLLER,
  });
  unlockVm(rt, snapshot);
}

function unlockVm(rt: Runtime, snapshot: KObject): void {
  const vmName = str(rec(spec(snapshot).source).name);
  if (!vmName || !rt.get(S.vms, snapshot.metadata.namespace, vmName)) return;
  patchVmStatus(rt, snapshot.metadata.namespace, vmName, (st) => {
    if (st.snapshotInProgress === snapshot.metadata.name) delete st.snapshotInProgress;
  });
}

/** Online / GuestAgent / NoGuestAgent / Paused, as KubeVirt reports how consistent a snapshot is. */
function indications(rt: Runtime, vm: KObject): string[] {
  const vmi = activeVmi(rt, vm);
  if (!vmi) return [];
  const out = ['Online'];
  out.push(conditionStatus(vmi, 'AgentConnected') === 'True' ? 'GuestAgent' : 'NoGuestAgent');
  if (conditionStatus(vmi, 'Paused') === 'True') out.push('Paused');
  return out;
}

function reconcileSnapshot(rt: Runtime, ns: string | undefined, name: string): void {
  const snapshot = rt.get(S.vmSnapshots, ns, name);
  if (!snapshot || snapshot.metadata.deletionTimestamp) return;
  const phase = status(snapshot).phase;
  if (phase === 'Succeeded' || phase === 'Failed') return;
  const id = objId('vmsnapshot', snapshot);
  if (!featureGateEnabled(rt, 'Snapshot')) {
    failSnapshot(rt, snapshot, 'snapshot feature gate not enabled');
    return;
  }
  const source = rec(spec(snapshot).source);
  if (source.kind !== 'VirtualMachine' || (source.apiGroup !== undefined && source.apiGroup !== 'kubevirt.io')) {
    failSnapshot(rt, snapshot, `spec.source: Invalid value: only VirtualMachine (kubevirt.io) sources are supported`);
    return;
  }
  const deadline =
    spec(snapshot).failureDeadline === undefined
      ? DEFAULT_FAILURE_DEADLINE_MS
      : parseDuration(spec(snapshot).failureDeadline);
  if (deadline === undefined) {
    failSnapshot(rt, snapshot, `spec.failureDeadline: Invalid value: "${String(spec(snapshot).failureDeadline)}"`);
    return;
  }
  if (deadline > 0) {
    rt.after(`${id}:deadline`, deadline, () => {
      const current = rt.get(S.vmSnapshots, ns, name);
      if (current && status(current).phase !== 'Succeeded' && status(current).phase !== 'Failed') {
        const why = str(rec(status(current).error).message);
        failSnapshot(
          rt,
          current,
          why
            ? `snapshot failed to complete within its failure deadline: ${why}`
            : 'snapshot failed to complete within its failure deadline',
        );
      }
    });
  }
  const vmName = str(source.name) ?? '';
  const vm = rt.get(S.vms, ns, vmName);
  if (!vm) {
    patchSnapshotStatus(rt, snapshot, (st) => {
      st.phase = 'InProgress';
      st.readyToUse = false;
      setCondition(st, { type: 'Progressing', status: 'False', reason: 'Source does not exist' }, { probe: true });
      setCondition(st, { type: 'Ready', status: 'False', reason: 'Not ready' }, { probe: true });
    });
    return;
  }
  const plan = planVolumes(rt, vm);
  if (plan.blocking.length) {
    // Real KubeVirt never completes such a snapshot; it fails at the deadline (what Corral's canSnapshot guards).
    patchSnapshotStatus(rt, snapshot, (st) => {
      st.phase = 'InProgress';
      st.readyToUse = false;
      st.sourceUID = vm.metadata.uid;
      st.error = { message: plan.blocking.join('; '), time: rec(st.error).time ?? nowTimestamp() };
      setCondition(st, { type: 'Progressing', status: 'False', reason: 'Source not locked' }, { probe: true });
      setCondition(st, { type: 'Ready', status: 'False', reason: 'Not ready' }, { probe: true });
    });
    return;
  }
  const contentKey = contentName(snapshot);
  const content = rt.get(S.vmSnapshotContents, ns, contentKey);
  if (!content) {
    if (status(vm).snapshotInProgress && status(vm).snapshotInProgress !== name) return; // another snapshot holds the lock
    lockAndCapture(rt, snapshot, vm, plan);
    return;
  }
  if (status(content).readyToUse === true) return;
  const backups = arr(spec(content).volumeBackups).map((b) => rec(b));
  const snapshots = backups.map((b) => rt.get(S.volumeSnapshots, ns, str(b.volumeSnapshotName) ?? ''));
  if (snapshots.some((vs) => !vs || status(vs).readyToUse !== true)) return;
  complete(rt, snapshot, vm, content, plan, snapshots as KObject[]);
}

function lockAndCapture(rt: Runtime, snapshot: KObject, vm: KObject, plan: VolumePlan): void {
  const ns = snapshot.metadata.namespace ?? 'default';
  const online = activeVmi(rt, vm) !== undefined;
  patchVmStatus(rt, ns, vm.metadata.name, (st) => {
    st.snapshotInProgress = snapshot.metadata.name;
  });
  patchSnapshotStatus(rt, snapshot, (st) => {
    st.phase = 'InProgress';
    st.readyToUse = false;
    st.sourceUID = vm.metadata.uid;
    delete st.error;
    st.indications = indications(rt, vm);
    setCondition(st, { type: 'Progressing', status: 'True', reason: 'Source locked' }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: 'Not ready' }, { probe: true });
  });
  const id = objId('vmsnapshot', snapshot);
  // An online snapshot freezes the guest file systems first (through the agent, when there is one).
  rt.after(`${id}:capture`, online ? rt.between(1000, 3000) : 0, () => {
    const current = rt.get(S.vmSnapshots, ns, snapshot.metadata.name);
    const currentVm = rt.get(S.vms, ns, vm.metadata.name);
    if (
      !current ||
      current.metadata.deletionTimestamp ||
      !currentVm ||
      rt.get(S.vmSnapshotContents, ns, contentName(current))
    )
      return;
    createContent(rt, current, currentVm, plan);
  });
}

function createContent(rt: Runtime, snapshot: KObject, vm: KObject, plan: VolumePlan): void {
  const ns = snapshot.metadata.namespace ?? 'default';
  const retain = spec(snapshot).deletionPolicy === 'Retain';
  const content = rt.store.create(S.vmSnapshotContents, {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshotContent',
    metadata: {
      name: contentName(snapshot),
      namespace: ns,
      ...(retain ? {} : { ownerReferences: [ownerRef(snapshot)] }),
    },
    spec: {
      virtualMachineSnapshotName: snapshot.metadata.name,
      source: {
        virtualMachine: {
          apiVersion: vm.apiVersion,
          kind: vm.kind,
          metadata: {
            name: vm.metadata.name,
            namespace: ns,
            uid: vm.metadata.uid,
            generation: vm.metadata.generation,
            ...(vm.metadata.labels ? { labels: vm.metadata.labels } : {}),
            ...(vm.metadata.annotations ? { annotations: vm.metadata.annotations } : {}),
          },
          spec: structuredClone(spec(vm)),
        },
      },
      volumeBackups: plan.included.map((v) => ({
        volumeName: v.volume,
        persistentVolumeClaim: {
          metadata: {
            name: v.claim.metadata.name,
            namespace: ns,
            ...(v.claim.metadata.labels ? { labels: v.claim.metadata.labels } : {}),
            ...(v.claim.metadata.annotations ? { annotations: v.claim.metadata.annotations } : {}),
          },
          spec: structuredClone(spec(v.claim)),
        },
        volumeSnapshotName: volumeSnapshotName(snapshot, v.volume),
      })),
    },
    status: { readyToUse: false },
  });
  recordEvent(
    rt.store,
    snapshot,
    'SuccessfulVirtualMachineSnapshotContentCreate',
    `Successfully created VirtualMachineSnapshotContent ${content.metadata.name}`,
    {
      component: SNAPSHOT_CONTROLLER,
    },
  );
  for (const v of plan.included) {
    const vsName = volumeSnapshotName(snapshot, v.volume);
    if (rt.get(S.volumeSnapshots, ns, vsName)) continue;
    rt.store.create(S.volumeSnapshots, {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshot',
      metadata: {
        name: vsName,
        namespace: ns,
        labels: {
          'snapshot.kubevirt.io/source-vm-name': vm.metadata.name,
          'snapshot.kubevirt.io/vmsnapshot-name': snapshot.metadata.name,
        },
        ownerReferences: [ownerRef(content)],
      },
      spec: { source: { persistentVolumeClaimName: v.claim.metadata.name }, volumeSnapshotClassName: v.snapshotClass },
    });
    recordEvent(rt.store, content, 'SuccessfulVolumeSnapshotCreate', `Successfully created VolumeSnapshot ${vsName}`, {
      component: SNAPSHOT_CONTROLLER,
    });
  }
  // A VM without PVC volumes has nothing to wait for.
  if (!plan.included.length)
    rt.enqueue(`vmsnapshot:${ns}/${snapshot.metadata.name}`, () => reconcileSnapshot(rt, ns, snapshot.metadata.name));
}

function complete(
  rt: Runtime,
  snapshot: KObject,
  vm: KObject,
  content: KObject,
  plan: VolumePlan,
  snapshots: KObject[],
): void {
  const now = nowTimestamp();
  rt.store.mutate(S.vmSnapshotContents, content.metadata.namespace, content.metadata.name, (o) => {
    const st = statusOf(o);
    st.creationTime = now;
    st.readyToUse = true;
    st.volumeSnapshotStatus = snapshots.map((vs) => ({
      volumeSnapshotName: vs.metadata.name,
      creationTime: status(vs).creationTime,
      readyToUse: true,
    }));
  });
  patchSnapshotStatus(rt, snapshot, (st) => {
    st.phase = 'Succeeded';
    st.readyToUse = true;
    st.creationTime = now;
    st.sourceUID = vm.metadata.uid;
    st.virtualMachineSnapshotContentName = content.metadata.name;
    st.snapshotVolumes = { includedVolumes: plan.included.map((v) => v.volume), excludedVolumes: plan.excluded };
    setCondition(st, { type: 'Progressing', status: 'False', reason: 'Operation complete' }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'True', reason: 'Operation complete' }, { probe: true });
  });
  recordEvent(
    rt.store,
    snapshot,
    'VirtualMachineSnapshotReady',
    `Successfully completed VirtualMachineSnapshot ${snapshot.metadata.name}`,
    {
      component: SNAPSHOT_CONTROLLER,
    },
  );
  unlockVm(rt, snapshot);
}
