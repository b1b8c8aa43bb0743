/**
 * virt-controller's VirtualMachine loop: keeps a VMI in line with the run strategy and stateChangeRequests,
 * creates DataVolumes from dataVolumeTemplates, waits for volumes, renders the VMI from the template (with the
 * instancetype applied), applies CPU/memory live updates or flags RestartRequired, and derives printableStatus,
 * ready, created, conditions and generations exactly from the VMI it owns.
 */
import type { SimContext } from '../module.js';
import { recordEvent } from '../events.js';
import { ApiError } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { volumeSnapshotStatuses } from '../storage/index.js';
import type { KObject, NewObject, StoreEvent } from '../store/types.js';
import { K, VM_FINALIZER, VMI_FINALIZER } from './keys.js';
import type { Json } from './objects.js';
import {
  dig,
  digArray,
  digRecord,
  digString,
  findCondition,
  isConditionTrue,
  ownerRef,
  serves,
  setCondition,
} from './objects.js';
import type { LiveUpdater } from './live-update.js';
import type { RunStrategy } from './run-strategy.js';
import { runStrategyOf, stateChangeRequests } from './run-strategy.js';
import { expandDomain } from './sizing.js';
import { isFinal, vmiPhase } from './vmi-status.js';
import { claimOf } from './volumes.js';
import { WorkQueue } from './work-queue.js';

type Key = { namespace: string; name: string };

/** Why a VM cannot get a VMI yet, as the printableStatus it shows. */
export interface VolumeBlocker {
  printable:
    'Provisioning' | 'ErrorDataVolumeNotFound' | 'ErrorPvcNotFound' | 'DataVolumeError' | 'WaitingForVolumeBinding';
  message: string;
}

/** VM conditions the controller owns; every other VMI condition is mirrored onto the VM. */
const VM_OWNED_CONDITIONS = new Set(['Ready', 'Failure', 'RestartRequired']);

export class VmController {
  readonly queue: WorkQueue<Key>;
  /** `ns/claim` → VMs (`ns/name`) that wait on it, so a DataVolume or PVC event wakes the right VM. */
  private readonly waitingOn = new Map<string, Set<string>>();
  /** VMs run with `Once` that already had their run. */
  private readonly ranOnce = new Set<string>();

  constructor(
    private readonly ctx: SimContext,
    private readonly live: LiveUpdater,
  ) {
    this.queue = new WorkQueue('vm-controller', (key) => this.reconcile(key));
  }

  start(): void {
    for (const vm of this.ctx.store.list(K.vms)) this.enqueue(vm.metadata.namespace ?? 'default', vm.metadata.name);
  }

  stop(): void {
    this.queue.stop();
  }

  enqueue(namespace: string, name: string): void {
    this.queue.add(`${namespace}/${name}`, { namespace, name });
  }

  onEvent(event: StoreEvent): void {
    const ns = event.object.metadata.namespace ?? 'default';
    if (event.key === K.vms) {
      if (event.type !== 'DELETED') this.enqueue(ns, event.object.metadata.name);
    } else if (event.key === K.vmis) {
      const owner = (event.object.metadata.ownerReferences ?? []).find((r) => r.kind === 'VirtualMachine');
      if (owner) this.enqueue(ns, owner.name);
    } else if (event.key === K.dataVolumes || event.key === K.pvcs) {
      for (const id of this.waitingOn.get(`${ns}/${event.object.metadata.name}`) ?? []) {
        const [namespace, name] = id.split('/') as [string, string];
        this.enqueue(namespace, name);
      }
    }
  }

  private reconcile({ namespace, name }: Key): void {
    const store = this.ctx.store;
    const vm = store.get(K.vms, namespace, name);
    if (!vm) return;
    const owned = store.get(K.vmis, namespace, name);
    const vmi =
      owned && (owned.metadata.ownerReferences ?? []).some((r) => r.uid === vm.metadata.uid) ? owned : undefined;

    if (vm.metadata.deletionTimestamp) {
      if (vmi && !vmi.metadata.deletionTimestamp) this.deleteVmi(vm, vmi);
      if (!vmi) store.removeFinalizer(K.vms, namespace, name, VM_FINALIZER);
      this.writeStatus(vm.metadata.uid, namespace, name, undefined, undefined);
      return;
    }
    if (!(vm.metadata.finalizers ?? []).includes(VM_FINALIZER)) {
      store.mutate(K.vms, namespace, name, (v) => {
        v.metadata.finalizers = [...(v.metadata.finalizers ?? []), VM_FINALIZER];
      });
      return;
    }
    this.ensureDataVolumes(vm);
    const strategy = runStrategyOf(vm);
    const requests = stateChangeRequests(vm);
    const blocker = this.volumeBlocker(vm);
    // A VirtualMachineRestore is rewriting the VM and its volumes: KubeVirt starts no VMI until it is done.
    const restoring = digString(vm, 'status', 'restoreInProgress') !== undefined;
    let failure: string | undefined;

    const first = requests[0];
    if (first?.action === 'Stop') {
      if (vmi && vmi.metadata.uid === (first.uid ?? vmi.metadata.uid) && !vmi.metadata.deletionTimestamp)
        this.deleteVmi(vm, vmi);
      if (!vmi || (first.uid && vmi.metadata.uid !== first.uid)) this.popRequest(vm);
    } else if (first?.action === 'Start') {
      if (vmi && isFinal(vmi) && !vmi.metadata.deletionTimestamp) this.deleteVmi(vm, vmi);
      else if (!vmi && !blocker && !restoring) {
        failure = this.createVmi(vm, first.data?.startPaused === 'true');
        if (!failure) this.popRequest(vm);
      }
    } else if (this.wantsVmi(vm, strategy, vmi)) {
      if (vmi && vmiPhase(vmi) === 'Failed') this.recordStartFailure(vm, vmi);
      if (vmi && isFinal(vmi) && !vmi.metadata.deletionTimestamp) this.deleteVmi(vm, vmi);
      else if (!vmi && !blocker && !restoring && this.backoffOver(vm)) failure = this.createVmi(vm, false);
    } else if (strategy === 'Halted' && vmi && !vmi.metadata.deletionTimestamp) {
      this.deleteVmi(vm, vmi);
    }
    if (vmi && vmiPhase(vmi) === 'Running' && !vmi.metadata.deletionTimestamp) {
      this.live.sync(vm, vmi);
      this.clearStartFailure(vm);
    }
    this.writeStatus(vm.metadata.uid, namespace, name, blocker, failure);
  }

  /** Whether the run strategy alone asks for a (new) VMI right now. */
  private wantsVmi(vm: KObject, strategy: RunStrategy, vmi: KObject | undefined): boolean {
    const phase = vmiPhase(vmi);
    switch (strategy) {
      case 'Always':
        return true;
      case 'RerunOnFailure':
        return !vmi || phase === 'Failed';
      case 'Once':
        return !vmi && !this.ranOnce.has(vm.metadata.uid);
      default:
        return false;
    }
  }

  /**
   * A VMI that failed is a start failure: KubeVirt backs off 10 s, 20 s, 40 s … 300 s before the next VMI and the
   * VM shows CrashLoopBackOff meanwhile. Counted once per failed VMI.
   */
  private recordStartFailure(vm: KObject, vmi: KObject): void {
    const previous = digRecord(vm, 'status', 'startFailure');
    if (previous?.lastFailedVMIUID === vmi.metadata.uid) return;
    const count = (typeof previous?.consecutiveFailCount === 'number' ? previous.consecutiveFailCount : 0) + 1;
    const backoffMs = Math.min(300_000, 10_000 * 2 ** (count - 1));
    const retryAfter = new Date(Date.now() + backoffMs / this.ctx.options.speed)
      .toISOString()
      .replace(/\.\d{3}Z$/, 'Z');
    this.ctx.store.mutate(K.vms, vm.metadata.namespace, vm.metadata.name, (v) => {
      ((v.status ??= {}) as Json).startFailure = {
        consecutiveFailCount: count,
        lastFailedVMIUID: vmi.metadata.uid,
        retryAfterTimestamp: retryAfter,
      };
    });
    recordEvent(
      this.ctx.store,
      vm,
      'FailedCreate',
      `VirtualMachineInstance ${vmi.metadata.name} failed; retrying in ${backoffMs / 1000}s`,
      { type: 'Warning' },
    );
    const { namespace, name } = vm.metadata as { namespace: string; name: string };
    this.ctx.clock.after(backoffMs, () => this.enqueue(namespace, name));
  }

  /** Whether the crash-loop backoff (if any) has passed. */
  private backoffOver(vm: KObject): boolean {
    const retryAfter = digString(vm, 'status', 'startFailure', 'retryAfterTimestamp');
    // Timestamps have second precision: allow the last partial second so a due retry is not missed.
    return !retryAfter || Date.parse(retryAfter) <= Date.now() + 1000;
  }

  private clearStartFailure(vm: KObject): void {
    if (!digRecord(vm, 'status', 'startFailure')) return;
    this.ctx.store.mutate(K.vms, vm.metadata.namespace, vm.metadata.name, (v) => {
      delete (v.status as Json).startFailure;
    });
  }

  private popRequest(vm: KObject): void {
    this.ctx.store.mutate(K.vms, vm.metadata.namespace, vm.metadata.name, (v) => {
      const rest = stateChangeRequests(v).slice(1);
      const st = (v.status ?? {}) as Json;
      if (rest.length) st.stateChangeRequests = rest;
      else delete st.stateChangeRequests;
      v.status = st;
    });
  }

  private deleteVmi(vm: KObject, vmi: KObject): void {
    const store = this.ctx.store;
    store.delete(K.vmis, vmi.metadata.namespace, vmi.metadata.name);
    recordEvent(
      store,
      vm,
      'SuccessfulDelete',
      `Stopped the virtual machine by deleting the virtual machine instance ${vmi.metadata.uid}`,
    );
  }

  /** DataVolumes declared in `dataVolumeTemplates`, created once with the VM as controller owner. */
  private ensureDataVolumes(vm: KObject): void {
    const store = this.ctx.store;
    const templates = digArray(vm, 'spec', 'dataVolumeTemplates');
    if (!templates.length || !serves(store, K.dataVolumes)) return;
    for (const template of templates) {
      const name = digString(template, 'metadata', 'name');
      if (!name || store.get(K.dataVolumes, vm.metadata.namespace, name)) continue;
      const meta = digRecord(template, 'metadata') ?? {};
      const dv: NewObject = {
        apiVersion: 'cdi.kubevirt.io/v1beta1',
        kind: 'DataVolume',
        metadata: {
          name,
          namespace: vm.metadata.namespace,
          labels: { ...((meta.labels as Record<string, string> | undefined) ?? {}), 'corral.dev/vm': vm.metadata.name },
          annotations: (meta.annotations as Record<string, string> | undefined) ?? {},
          ownerReferences: [ownerRef(vm)],
        },
        spec: structuredClone(template.spec ?? {}),
      };
      try {
        store.create(K.dataVolumes, dv);
        recordEvent(store, vm, 'SuccessfulDataVolumeCreate', `Created DataVolume ${name}`);
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 409)) throw err;
      }
    }
  }

  private volumeBlocker(vm: KObject): VolumeBlocker | undefined {
    const store = this.ctx.store;
    const namespace = vm.metadata.namespace ?? 'default';
    const vmId = `${namespace}/${vm.metadata.name}`;
    const templated = new Set(digArray(vm, 'spec', 'dataVolumeTemplates').map((t) => digString(t, 'metadata', 'name')));
    for (const volume of digArray(vm, 'spec', 'template', 'spec', 'volumes')) {
      const claim = claimOf(volume);
      if (!claim) continue;
      const hotpluggable =
        dig(volume, 'persistentVolumeClaim', 'hotpluggable') === true ||
        dig(volume, 'dataVolume', 'hotpluggable') === true;
      const watchKey = `${namespace}/${claim}`;
      const waiters = this.waitingOn.get(watchKey) ?? new Set<string>();
      waiters.add(vmId);
      this.waitingOn.set(watchKey, waiters);
      if (hotpluggable) continue;
      if (volume.dataVolume !== undefined && serves(store, K.dataVolumes)) {
        const dv = store.get(K.dataVolumes, namespace, claim);
        if (!dv) {
          if (templated.has(claim))
            return { printable: 'Provisioning', message: `DataVolume ${claim} is being created` };
          return { printable: 'ErrorDataVolumeNotFound', message: `DataVolume ${claim} not found` };
        }
        const phase = digString(dv, 'status', 'phase');
        if (phase === 'Failed') return { printable: 'DataVolumeError', message: `DataVolume ${claim} failed` };
        if (phase !== 'Succeeded' && phase !== 'WaitForFirstConsumer' && phase !== 'PendingPopulation') {
          return { printable: 'Provisioning', message: `DataVolume ${claim} is not ready (${phase ?? 'Pending'})` };
        }
        continue;
      }
      const pvc = store.get(K.pvcs, namespace, claim);
      if (!pvc)
        return {
          printable: 'ErrorPvcNotFound',
          message: `PVC ${namespace}/${claim} does not exist, waiting for it to appear`,
        };
      if (digString(pvc, 'status', 'phase') !== 'Bound' && !this.bindsOnFirstConsumer(pvc)) {
        return { printable: 'WaitingForVolumeBinding', message: `PVC ${claim} is not bound` };
      }
    }
    return undefined;
  }

  private bindsOnFirstConsumer(pvc: KObject): boolean {
    const className = digString(pvc, 'spec', 'storageClassName');
    const sc =
      className && serves(this.ctx.store, K.storageClasses)
        ? this.ctx.store.get(K.storageClasses, undefined, className)
        : undefined;
    return digString(sc, 'volumeBindingMode') === 'WaitForFirstConsumer';
  }

  /** Render and create the VMI; returns a failure message instead when the VM cannot be started. */
  private createVmi(vm: KObject, paused: boolean): string | undefined {
    const store = this.ctx.store;
    const template = digRecord(vm, 'spec', 'template');
    if (!template) return 'missing virtual machine template.';
    let domain: Json;
    try {
      domain = expandDomain(store, vm, template);
    } catch (err) {
      if (err instanceof ApiError) return err.message;
      throw err;
    }
    const spec = structuredClone(digRecord(template, 'spec') ?? {});
    spec.domain = {
      ...domain,
      firmware: { uuid: vm.metadata.uid, ...((domain.firmware as Json | undefined) ?? {}) },
    };
    spec.architecture ??= 'amd64';
    spec.terminationGracePeriodSeconds ??= 180;
    if (paused) spec.startStrategy = 'Paused';
    const labels = {
      ...((dig(template, 'metadata', 'labels') as Record<string, string> | undefined) ?? {}),
      'kubevirt.io/vm': vm.metadata.name,
    };
    const annotations = {
      ...((dig(template, 'metadata', 'annotations') as Record<string, string> | undefined) ?? {}),
      'kubevirt.io/vm-generation': String(vm.metadata.generation ?? 1),
      'kubevirt.io/latest-observed-api-version': 'v1',
      'kubevirt.io/storage-observed-api-version': 'v1',
    };
    const created = store.create(K.vmis, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      metadata: {
        name: vm.metadata.name,
        namespace: vm.metadata.namespace,
        labels,
        annotations,
        finalizers: [VMI_FINALIZER],
        ownerReferences: [ownerRef(vm)],
      },
      spec,
    });
    this.live.baseline(vm);
    if (runStrategyOf(vm) === 'Once') this.ranOnce.add(vm.metadata.uid);
    recordEvent(
      store,
      vm,
      'SuccessfulCreate',
      `Started the virtual machine by creating the new virtual machine instance ${created.metadata.name}`,
    );
    return undefined;
  }

  private writeStatus(
    uid: string,
    namespace: string,
    name: string,
    blocker: VolumeBlocker | undefined,
    failure: string | undefined,
  ): void {
    const store = this.ctx.store;
    const previous = store.get(K.vms, namespace, name);
    if (!previous || previous.metadata.uid !== uid) return;
    // Re-read the VMI: this reconcile may just have created or deleted it.
    const current = store.get(K.vmis, namespace, name);
    const vmi = current && (current.metadata.ownerReferences ?? []).some((r) => r.uid === uid) ? current : undefined;
    // Compute on a draft carrying only a copy of the status: most reconciles change nothing, and a store write
    // (which clones the whole VM) is then skipped entirely.
    const draft: KObject = { ...previous, status: JSON.parse(JSON.stringify(previous.status ?? {})) as Json };
    applyVmStatus(store, draft, vmi, {
      blocker,
      failure,
      observedGeneration: this.live.observedGeneration(draft, vmi),
    });
    const st = draft.status as Json;
    if (!vmi) this.live.clear(draft);
    if (JSON.stringify(st) === JSON.stringify(previous.status ?? {})) return;
    const updated = store.mutate(K.vms, namespace, name, (vm) => {
      vm.status = st;
    });
    if (updated) {
      const from = digString(previous, 'status', 'printableStatus');
      const to = digString(updated, 'status', 'printableStatus');
      if (from !== to && to && (to.startsWith('Error') || to === 'DataVolumeError')) {
        recordEvent(store, updated, to, blocker?.message ?? to, { type: 'Warning' });
      }
    }
  }
}

/**
 * The VM status virt-controller derives from the VM and its VMI, written into `vm.status` (which the caller owns).
 * Shared with the fleet seeder, which writes VMs with the status the controller would compute.
 */
export function applyVmStatus(
  store: ObjectStore,
  vm: KObject,
  vmi: KObject | undefined,
  opts: { blocker?: VolumeBlocker; failure?: string; observedGeneration: number },
): void {
  vm.status ??= {};
  const st = vm.status as Json;
  st.printableStatus = printableStatus(vm, vmi, opts.blocker);
  st.runStrategy = runStrategyOf(vm);
  st.created = vmi !== undefined;
  st.ready = vmi !== undefined && isConditionTrue(vmi, 'Ready') && vmiPhase(vmi) === 'Running';
  st.desiredGeneration = vm.metadata.generation ?? 1;
  st.observedGeneration = opts.observedGeneration;
  // The storage side knows which StorageClasses have a VolumeSnapshotClass; the VM controller only writes it.
  st.volumeSnapshotStatuses = volumeSnapshotStatuses(store, vm);
  syncConditions(
    vm,
    vmi,
    opts.failure ?? (opts.blocker && isErrorBlocker(opts.blocker) ? opts.blocker.message : undefined),
  );
}

function isErrorBlocker(blocker: VolumeBlocker): boolean {
  return blocker.printable !== 'Provisioning' && blocker.printable !== 'WaitingForVolumeBinding';
}

/** `setPrintableStatus` precedence from KubeVirt's vm.go. */
export function printableStatus(vm: KObject, vmi: KObject | undefined, blocker: VolumeBlocker | undefined): string {
  const strategy = runStrategyOf(vm);
  const requests = stateChangeRequests(vm);
  const phase = vmiPhase(vmi);
  const final = isFinal(vmi);
  if (vm.metadata.deletionTimestamp) return 'Terminating';
  const stopExpected = strategy === 'Halted' || requests[0]?.action === 'Stop';
  if (vmi && !final && (vmi.metadata.deletionTimestamp || stopExpected)) return 'Stopping';
  const migration = digRecord(vmi, 'status', 'migrationState');
  if (vmi && migration && migration.completed !== true && migration.failed !== true) return 'Migrating';
  if (phase === 'Running' && isConditionTrue(vmi, 'Paused')) return 'Paused';
  if (phase === 'Running') return 'Running';
  const startExpected =
    requests.some((r) => r.action === 'Start') ||
    strategy === 'Always' ||
    (strategy === 'RerunOnFailure' && phase !== 'Succeeded') ||
    (strategy === 'Once' && !final);
  if (blocker && startExpected && !vmi) {
    if (
      blocker.printable === 'ErrorPvcNotFound' ||
      blocker.printable === 'ErrorDataVolumeNotFound' ||
      blocker.printable === 'DataVolumeError'
    )
      return blocker.printable;
  }
  const scheduled = findCondition(vmi, 'PodScheduled');
  if (vmi && scheduled?.status === 'False' && scheduled.reason === 'Unschedulable') return 'ErrorUnschedulable';
  if (blocker && startExpected && !vmi) return blocker.printable;
  const sync = findCondition(vmi, 'Synchronized');
  if (vmi && sync?.status === 'False' && (sync.reason === 'ErrImagePull' || sync.reason === 'ImagePullBackOff'))
    return sync.reason;
  const crashLooping = (digRecord(vm, 'status', 'startFailure')?.consecutiveFailCount as number | undefined) ?? 0;
  if (
    crashLooping > 0 &&
    (!vmi || phase === 'Failed') &&
    (strategy === 'Always' || strategy === 'RerunOnFailure' || strategy === 'Once')
  )
    return 'CrashLoopBackOff';
  if (
    (!vmi && startExpected) ||
    phase === 'Pending' ||
    phase === 'Scheduling' ||
    phase === 'Scheduled' ||
    (vmi && !phase)
  )
    return 'Starting';
  if (!vmi || final) return 'Stopped';
  return 'Unknown';
}

function syncConditions(vm: KObject, vmi: KObject | undefined, failure: string | undefined): void {
  const st = vm.status as Json;
  const existing = digArray(st, 'conditions');
  const restartRequired = existing.find((c) => c.type === 'RestartRequired');
  const mirrored = digArray(vmi, 'status', 'conditions').filter((c) => !VM_OWNED_CONDITIONS.has(String(c.type)));
  st.conditions = [...existing.filter((c) => c.type === 'Ready' || c.type === 'Failure'), ...mirrored];
  if (!vmi) {
    setCondition(vm, {
      type: 'Ready',
      status: 'False',
      reason: 'VMINotExists',
      message: 'VMI does not exist',
      probe: true,
    });
  } else {
    const ready = findCondition(vmi, 'Ready');
    if (!ready)
      setCondition(vm, {
        type: 'Ready',
        status: 'False',
        reason: 'VMIConditionMissing',
        message: 'VMI is missing the Ready condition',
        probe: true,
      });
    else setCondition(vm, { type: 'Ready', status: ready.status, reason: ready.reason, message: ready.message });
  }
  if (failure) setCondition(vm, { type: 'Failure', status: 'True', reason: 'FailedCreate', message: failure });
  else st.conditions = digArray(st, 'conditions').filter((c) => c.type !== 'Failure');
  // RestartRequired lives until a new VMI is created from the current template.
  if (restartRequired && vmi) st.conditions = [...digArray(st, 'conditions'), restartRequired];
  // A stable order (VM-owned first), so recomputing an unchanged status yields the same JSON and no write.
  const rank = (c: Json) => (c.type === 'Ready' ? 0 : c.type === 'Failure' ? 1 : c.type === 'RestartRequired' ? 3 : 2);
  st.conditions = digArray(st, 'conditions')
    .map((c, i) => ({ c, i }))
    .sort((a, b) => rank(a.c) - rank(b.c) || a.i - b.i)
    .map(({ c }) => c);
}
