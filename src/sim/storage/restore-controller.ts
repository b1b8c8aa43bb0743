/**
 * KubeVirt's VirtualMachineRestore controller [src: KubeVirt pkg/storage/snapshot/restore.go]: waits for the
 * target VM to be stopped (per `targetReadinessPolicy`), creates one PVC `restore-<restore uid>-<volume>` per
 * backed-up volume from its VolumeSnapshot, rewrites the VM spec to use them (or creates the VM when the target
 * does not exist — how clones are made), applies `spec.patches`, and reports `complete: true`.
 */
import type { KObject, NewObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { activeVmi } from './consumers.js';
import { featureGateEnabled } from './feature-gates.js';
import { applyJsonPatchStrings } from './json-patch.js';
import { CDI_ANN, DISK_CONTENT_ANNOTATION, S } from './keys.js';
import { objId, type Runtime } from './runtime.js';
import { isWaitForFirstConsumer, storageClass } from './storage-classes.js';
import { arr, nowTimestamp, ownerRef, rec, setCondition, spec, status, statusOf, str } from './util.js';

const COMPONENT = 'virt-controller';
/** WaitGracePeriod: how long a restore waits for a running target to be stopped before failing. */
const TARGET_GRACE_MS = 5 * 60_000;

interface Restored {
  volumeName: string;
  persistentVolumeClaim: string;
  volumeSnapshotName: string;
}

export function restorePvcName(restore: KObject, volume: string): string {
  return `restore-${restore.metadata.uid}-${volume}`;
}

export function startRestoreController(rt: Runtime): void {
  if (!rt.serves(S.vmRestores)) return;
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`vmrestore:${ns ?? ''}/${name}`, () => reconcile(rt, ns, name));
  const pendingIn = (ns: string | undefined) => {
    for (const r of rt.list(S.vmRestores, ns)) if (status(r).complete !== true) enqueue(ns, r.metadata.name);
  };
  rt.on(S.vmRestores, (ev) => {
    if (ev.type === 'DELETED') {
      rt.cancelAll(objId('vmrestore', ev.object));
      rt.enqueue(`vmrestore-unlock:${ev.object.metadata.uid}`, () => unlockTarget(rt, ev.object));
    } else enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  // Snapshots becoming ready, VMs stopping and restore PVCs binding all move a waiting restore on.
  for (const key of [S.vmSnapshots, S.vms, S.vmis, S.pvcs]) rt.on(key, (ev) => pendingIn(ev.object.metadata.namespace));
  for (const r of rt.list(S.vmRestores)) enqueue(r.metadata.namespace, r.metadata.name);
}

function patchStatus(rt: Runtime, restore: KObject, change: (st: Record<string, unknown>) => void): void {
  rt.store.mutate(S.vmRestores, restore.metadata.namespace, restore.metadata.name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function progressing(rt: Runtime, restore: KObject, reason: string, readyReason = reason): void {
  patchStatus(rt, restore, (st) => {
    st.complete ??= false;
    setCondition(st, { type: 'Progressing', status: 'True', reason }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: readyReason }, { probe: true });
  });
}

function isFailed(restore: KObject): boolean {
  return arr(status(restore).conditions).some((c) => rec(c).type === 'Failure' && rec(c).status === 'True');
}

function fail(rt: Runtime, restore: KObject, message: string): void {
  patchStatus(rt, restore, (st) => {
    st.complete = false;
    setCondition(st, { type: 'Progressing', status: 'False', reason: 'Operation failed', message }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: 'Operation failed', message }, { probe: true });
    setCondition(st, { type: 'Failure', status: 'True', reason: 'Operation failed', message }, { probe: true });
  });
  recordEvent(rt.store, restore, 'VirtualMachineRestoreError', message, { type: 'Warning', component: COMPONENT });
  unlockTarget(rt, restore);
}

function targetName(restore: KObject): string {
  return str(rec(spec(restore).target).name) ?? '';
}

function unlockTarget(rt: Runtime, restore: KObject): void {
  const ns = restore.metadata.namespace;
  if (!rt.get(S.vms, ns, targetName(restore))) return;
  rt.store.mutate(S.vms, ns, targetName(restore), (o) => {
    if (status(o).restoreInProgress !== restore.metadata.name) return false;
    delete statusOf(o).restoreInProgress;
  });
}

function reconcile(rt: Runtime, ns: string | undefined, name: string): void {
  const restore = rt.get(S.vmRestores, ns, name);
  if (!restore || restore.metadata.deletionTimestamp || status(restore).complete === true || isFailed(restore)) return;
  const id = objId('vmrestore', restore);
  if (status(restore).complete === undefined) {
    progressing(rt, restore, 'Initializing VirtualMachineRestore');
    return;
  }
  if (!featureGateEnabled(rt, 'Snapshot')) {
    fail(rt, restore, 'snapshot feature gate not enabled');
    return;
  }
  const target = rec(spec(restore).target);
  if (target.kind !== 'VirtualMachine') {
    fail(rt, restore, `spec.target: Invalid value: only VirtualMachine targets are supported`);
    return;
  }
  const snapshotName = str(spec(restore).virtualMachineSnapshotName) ?? '';
  const snapshot = rt.get(S.vmSnapshots, ns, snapshotName);
  if (!snapshot) {
    progressing(rt, restore, `VMSnapshot ${snapshotName} does not exist`, 'Waiting for snapshot');
    return;
  }
  if (status(snapshot).phase === 'Failed') {
    fail(rt, restore, `VMSnapshot ${snapshotName} failed`);
    return;
  }
  const content = rt.get(S.vmSnapshotContents, ns, str(status(snapshot).virtualMachineSnapshotContentName) ?? '');
  if (status(snapshot).readyToUse !== true || !content) {
    progressing(rt, restore, `VMSnapshot ${snapshotName} not ready`, 'Waiting for snapshot');
    return;
  }
  const vmName = str(target.name) ?? '';
  const vm = rt.get(S.vms, ns, vmName);
  if (vm && !targetReady(rt, restore, vm, id)) return;
  if (vm && status(vm).restoreInProgress !== name) {
    rt.store.mutate(S.vms, ns, vmName, (o) => {
      statusOf(o).restoreInProgress = name;
    });
  }
  const restores = arr(status(restore).restores) as unknown as Restored[];
  if (!restores.length && arr(spec(content).volumeBackups).length) {
    createVolumes(rt, restore, content, vm);
    return;
  }
  if (!restores.every((r) => claimUsable(rt, ns, r.persistentVolumeClaim))) return;
  if (rt.hasTimer(`${id}:spec`)) return;
  progressing(rt, restore, 'Updating target spec');
  rt.after(`${id}:spec`, rt.between(1000, 3000), () => {
    const current = rt.get(S.vmRestores, ns, name);
    if (!current || current.metadata.deletionTimestamp || status(current).complete === true) return;
    finish(rt, current, content);
  });
}

/** Whether the target may be restored now; applies `targetReadinessPolicy` while it runs. */
function targetReady(rt: Runtime, restore: KObject, vm: KObject, id: string): boolean {
  if (!activeVmi(rt, vm)) {
    rt.cancel(`${id}:grace`);
    return true;
  }
  const policy = str(spec(restore).targetReadinessPolicy) ?? 'WaitGracePeriod';
  const message = `Waiting for target VirtualMachine ${vm.metadata.name} to be stopped`;
  if (policy === 'FailImmediate') {
    fail(rt, restore, `restore target VirtualMachine ${vm.metadata.name} is running; it must be stopped first`);
    return false;
  }
  if (policy === 'StopTarget' && spec(vm).runStrategy !== 'Halted') {
    rt.store.mutate(S.vms, vm.metadata.namespace, vm.metadata.name, (o) => {
      const vmSpec = rec(o.spec);
      delete vmSpec.running;
      vmSpec.runStrategy = 'Halted';
      o.spec = vmSpec;
    });
    recordEvent(
      rt.store,
      restore,
      'VirtualMachineRestoreStoppingTarget',
      `Stopping VirtualMachine ${vm.metadata.name} to restore it`,
      { component: COMPONENT },
    );
  }
  if (policy === 'WaitGracePeriod') {
    rt.after(`${id}:grace`, TARGET_GRACE_MS, () => {
      const current = rt.get(S.vmRestores, restore.metadata.namespace, restore.metadata.name);
      const currentVm = rt.get(S.vms, vm.metadata.namespace, vm.metadata.name);
      if (current && status(current).complete !== true && currentVm && activeVmi(rt, currentVm)) {
        fail(rt, current, `restore target VirtualMachine ${vm.metadata.name} was not stopped within the grace period`);
      }
    });
  }
  progressing(rt, restore, message, 'Waiting for target to be ready');
  return false;
}

function claimUsable(rt: Runtime, ns: string | undefined, claimName: string): boolean {
  const claim = rt.get(S.pvcs, ns, claimName);
  if (!claim) return false;
  if (status(claim).phase === 'Bound') return true;
  const sc = storageClass(rt, str(spec(claim).storageClassName));
  return sc !== undefined && isWaitForFirstConsumer(sc);
}

/** The VM as it should look after the restore: the snapshot's spec on the new PVCs, with `spec.patches` applied. */
function restoredVm(
  restore: KObject,
  content: KObject,
  current: KObject | undefined,
  restores: Restored[],
): Record<string, unknown> {
  const source = rec(rec(spec(content).source).virtualMachine);
  const sourceMeta = rec(source.metadata);
  const vmSpec = structuredClone(rec(source.spec));
  const template = rec(rec(vmSpec.template).spec);
  const byVolume = new Map(restores.map((r) => [r.volumeName, r.persistentVolumeClaim]));
  const replacedClaims = new Set<string>();
  template.volumes = arr(template.volumes).map((v) => {
    const volume = rec(v);
    const claim = byVolume.get(str(volume.name) ?? '');
    if (!claim) return volume;
    const old = str(rec(volume.persistentVolumeClaim).claimName) ?? str(rec(volume.dataVolume).name);
    if (old) replacedClaims.add(old);
    return { name: volume.name, persistentVolumeClaim: { claimName: claim } };
  });
  const templates = arr(vmSpec.dataVolumeTemplates).filter(
    (t) => !replacedClaims.has(str(rec(rec(t).metadata).name) ?? ''),
  );
  if (templates.length) vmSpec.dataVolumeTemplates = templates;
  else delete vmSpec.dataVolumeTemplates;
  // A restore never starts or stops the VM by itself: an existing target keeps its run strategy, a new one is Halted.
  delete vmSpec.running;
  delete vmSpec.runStrategy;
  if (current) {
    const currentSpec = spec(current);
    if (currentSpec.runStrategy !== undefined) vmSpec.runStrategy = currentSpec.runStrategy;
    if (currentSpec.running !== undefined) vmSpec.running = currentSpec.running;
  } else {
    vmSpec.runStrategy = 'Halted';
  }
  const name = targetName(restore);
  const doc = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace: restore.metadata.namespace,
      labels: current ? (current.metadata.labels ?? {}) : (rec(sourceMeta.labels) as Record<string, string>),
      annotations: current
        ? (current.metadata.annotations ?? {})
        : (rec(sourceMeta.annotations) as Record<string, string>),
    },
    spec: vmSpec,
  };
  const patches = arr(spec(restore).patches).filter((p): p is string => typeof p === 'string');
  return patches.length ? applyJsonPatchStrings(doc, patches) : doc;
}

function createVolumes(rt: Runtime, restore: KObject, content: KObject, vm: KObject | undefined): void {
  const ns = restore.metadata.namespace ?? 'default';
  const backups = arr(spec(content).volumeBackups).map((b) => rec(b));
  const restores: Restored[] = backups.map((b) => ({
    volumeName: str(b.volumeName) ?? '',
    persistentVolumeClaim: restorePvcName(restore, str(b.volumeName) ?? ''),
    volumeSnapshotName: str(b.volumeSnapshotName) ?? '',
  }));
  let owner = vm;
  if (!owner) {
    // Restoring into a VM that does not exist yet creates it (Halted) so the new PVCs have an owner.
    let doc: Record<string, unknown>;
    try {
      doc = restoredVm(restore, content, undefined, restores);
    } catch (err) {
      fail(rt, restore, `invalid spec.patches: ${(err as Error).message}`);
      return;
    }
    owner = rt.store.create(S.vms, doc as unknown as NewObject);
    recordEvent(
      rt.store,
      restore,
      'VirtualMachineRestoreCreatedTarget',
      `Created VirtualMachine ${owner.metadata.name}`,
      { component: COMPONENT },
    );
  }
  for (const [i, backup] of backups.entries()) {
    const r = restores[i]!;
    if (rt.get(S.pvcs, ns, r.persistentVolumeClaim)) continue;
    const source = rec(backup.persistentVolumeClaim);
    const claimSpec = structuredClone(rec(source.spec));
    delete claimSpec.volumeName;
    delete claimSpec.dataSourceRef;
    claimSpec.dataSource = { apiGroup: 'snapshot.storage.k8s.io', kind: 'VolumeSnapshot', name: r.volumeSnapshotName };
    const vs = rt.get(S.volumeSnapshots, ns, r.volumeSnapshotName);
    const contentAnnotation = vs?.metadata.annotations?.[DISK_CONTENT_ANNOTATION];
    // The restored claim keeps the backed-up claim's annotations, among them CDI's content type (a disk image
    // restored from a snapshot still exports as one).
    const contentType = str(rec(rec(source.metadata).annotations)[CDI_ANN.contentType]);
    rt.store.create(S.pvcs, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name: r.persistentVolumeClaim,
        namespace: ns,
        labels: {
          'restore.kubevirt.io/source-vm-name':
            str(rec(rec(rec(spec(content).source).virtualMachine).metadata).name) ?? '',
        },
        annotations: {
          'restore.kubevirt.io/name': restore.metadata.name,
          ...(contentAnnotation ? { [DISK_CONTENT_ANNOTATION]: contentAnnotation } : {}),
          ...(contentType !== undefined ? { [CDI_ANN.contentType]: contentType } : {}),
        },
        ownerReferences: [ownerRef(owner, false)],
      },
      spec: claimSpec,
    });
  }
  patchStatus(rt, restore, (st) => {
    st.restores = restores;
    setCondition(st, { type: 'Progressing', status: 'True', reason: 'Creating new PVCs' }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: 'Waiting for new PVCs' }, { probe: true });
  });
}

function finish(rt: Runtime, restore: KObject, content: KObject): void {
  const ns = restore.metadata.namespace ?? 'default';
  const vmName = targetName(restore);
  const vm = rt.get(S.vms, ns, vmName);
  const restores = arr(status(restore).restores) as unknown as Restored[];
  let doc: Record<string, unknown>;
  try {
    doc = restoredVm(restore, content, vm, restores);
  } catch (err) {
    fail(rt, restore, `invalid spec.patches: ${(err as Error).message}`);
    return;
  }
  const deleted: string[] = [];
  if (!vm) {
    rt.store.create(S.vms, doc as unknown as NewObject);
  } else {
    const keep = new Set(arr(rec(doc.spec).dataVolumeTemplates).map((t) => str(rec(rec(t).metadata).name)));
    for (const t of arr(spec(vm).dataVolumeTemplates)) {
      const dvName = str(rec(rec(t).metadata).name);
      if (dvName && !keep.has(dvName)) deleted.push(dvName);
    }
    const meta = rec(doc.metadata);
    rt.store.mutate(S.vms, ns, vmName, (o) => {
      o.spec = doc.spec;
      o.metadata.labels = rec(meta.labels) as Record<string, string>;
      o.metadata.annotations = rec(meta.annotations) as Record<string, string>;
      delete statusOf(o).restoreInProgress;
    });
    for (const dv of deleted) if (rt.get(S.dataVolumes, ns, dv)) rt.store.delete(S.dataVolumes, ns, dv);
  }
  patchStatus(rt, restore, (st) => {
    st.complete = true;
    st.restoreTime = nowTimestamp();
    if (deleted.length) st.deletedDataVolumes = deleted;
    st.conditions = arr(st.conditions).filter((c) => rec(c).type !== 'Failure');
    setCondition(st, { type: 'Progressing', status: 'False', reason: 'Operation complete' }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'True', reason: 'Operation complete' }, { probe: true });
  });
  recordEvent(
    rt.store,
    restore,
    'VirtualMachineRestoreComplete',
    `Successfully completed VirtualMachineRestore ${restore.metadata.name}`,
    {
      component: COMPONENT,
    },
  );
}
