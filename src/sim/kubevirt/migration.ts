/**
 * Live migration (VirtualMachineInstanceMigration): admission rules of KubeVirt's migration-create-validator,
 * then Pending → Scheduling (target launcher pod, same CPU vendor, never the source node) → Scheduled →
 * PreparingTarget → TargetReady → Running (memory copy ≈ 1 GiB per 3 s) → Succeeded, when the VMI moves to the
 * target node and the source pod goes. Deleting a VMIM mid-flight aborts it; no target in 150 s fails it.
 */
import { guestCloudInit } from './cloud-init.js';
import { StageTimers } from './stage-timers.js';
import type { SimContext } from '../module.js';
import { recordEvent } from '../events.js';
import { ApiError } from '../store/errors.js';
import { nowTimestamp } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { CPU_VENDOR_LABEL_PREFIX, K, VMIM_FINALIZER } from './keys.js';
import { launcherPod, MIGRATION_JOB_LABEL } from './launcher-pod.js';
import type { LauncherPods } from './launcher-pods.js';
import type { VolumeMigrator } from './volume-migration.js';
import type { Json } from './objects.js';
import { digArray, digRecord, digString, findCondition, setCondition, status } from './objects.js';
import { guestMemoryBytes, interfacesStatus, isFinal, vmiPhase } from './vmi-status.js';
import { WorkQueue } from './work-queue.js';

const PROGRESS_TIMEOUT_MS = 150_000;
const FINAL = new Set(['Succeeded', 'Failed']);
const WEBHOOK = 'admission webhook "migration-create-validator.kubevirt.io" denied the request: ';

type Key = { namespace: string; name: string };

function isActive(vmim: KObject): boolean {
  return !FINAL.has(digString(vmim, 'status', 'phase') ?? '');
}

/** Why a VMI cannot be migrated now (the webhook's wording), or undefined. */
export function migrationRefusal(ctx: SimContext, vmi: KObject | undefined, ignoreUid?: string): string | undefined {
  if (!vmi) return 'Cannot migrate VMI: the VMI does not exist';
  if (isFinal(vmi)) return 'Cannot migrate VMI in finalized state.';
  if (vmiPhase(vmi) !== 'Running')
    return `Cannot migrate VMI which does not use masquerade to connect to the pod network or is not running. Current phase: ${vmiPhase(vmi) ?? 'Pending'}`;
  const live = findCondition(vmi, 'LiveMigratable');
  if (live?.status !== 'True') {
    return `Cannot migrate VMI, Reason: ${live?.reason ?? 'NotMigratable'}, Message: ${live?.message ?? 'the VMI is not live-migratable'}`;
  }
  const active = ctx.store
    .list(K.vmims, vmi.metadata.namespace)
    .find(
      (m) =>
        digString(m, 'spec', 'vmiName') === vmi.metadata.name &&
        isActive(m) &&
        m.metadata.uid !== ignoreUid &&
        !m.metadata.deletionTimestamp,
    );
  if (active) {
    return `in-flight migration detected. Active migration job (${active.metadata.uid}) is currently already in progress for VMI ${vmi.metadata.name}.`;
  }
  return undefined;
}

/** The `migrate` verb's rejection as virt-api surfaces a webhook denial: 500 Internal error. */
export function webhookDenial(reason: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${WEBHOOK}${reason}`, {
    causes: [{ message: `${WEBHOOK}${reason}` }],
  });
}

export class MigrationController {
  readonly queue: WorkQueue<Key>;
  private readonly timers: StageTimers;

  constructor(
    private readonly ctx: SimContext,
    private readonly pods: LauncherPods,
    private readonly volumes: VolumeMigrator,
  ) {
    this.timers = new StageTimers(ctx.clock);
    this.queue = new WorkQueue('migration-controller', (key) => this.reconcile(key));
  }

  start(): void {
    for (const m of this.ctx.store.list(K.vmims)) this.enqueue(m);
  }

  stop(): void {
    this.queue.stop();
  }

  private enqueue(vmim: KObject): void {
    const namespace = vmim.metadata.namespace ?? 'default';
    this.queue.add(`${namespace}/${vmim.metadata.name}`, { namespace, name: vmim.metadata.name });
  }

  onEvent(event: StoreEvent): void {
    if (event.key === K.vmims && event.type !== 'DELETED') this.enqueue(event.object);
    if (event.key === K.pods && event.type !== 'DELETED') {
      const job = event.object.metadata.labels?.[MIGRATION_JOB_LABEL];
      if (!job) return;
      for (const m of this.ctx.store.list(K.vmims, event.object.metadata.namespace))
        if (m.metadata.uid === job) this.enqueue(m);
    }
  }

  private setPhase(vmim: KObject, phase: string, extra: (m: KObject) => void = () => {}): KObject | undefined {
    return this.ctx.store.mutate(K.vmims, vmim.metadata.namespace, vmim.metadata.name, (m) => {
      if (m.metadata.uid !== vmim.metadata.uid) return false;
      const st = status(m);
      st.phase = phase;
      st.phaseTransitionTimestamps = [
        ...digArray(st, 'phaseTransitionTimestamps'),
        { phase, phaseTransitionTimestamp: nowTimestamp() },
      ];
      extra(m);
    });
  }

  private reconcile({ namespace, name }: Key): void {
    const store = this.ctx.store;
    const vmim = store.get(K.vmims, namespace, name);
    if (!vmim) return;
    const vmiName = digString(vmim, 'spec', 'vmiName') ?? '';
    const vmi = store.get(K.vmis, namespace, vmiName);
    if (vmim.metadata.deletionTimestamp) {
      if (isActive(vmim)) this.abort(vmim, vmi);
      store.removeFinalizer(K.vmims, namespace, name, VMIM_FINALIZER);
      return;
    }
    if (
      !(vmim.metadata.finalizers ?? []).includes(VMIM_FINALIZER) ||
      vmim.metadata.labels?.['kubevirt.io/vmi-name'] !== vmiName
    ) {
      store.mutate(K.vmims, namespace, name, (m) => {
        m.metadata.finalizers = [...new Set([...(m.metadata.finalizers ?? []), VMIM_FINALIZER])];
        m.metadata.labels = { ...(m.metadata.labels ?? {}), 'kubevirt.io/vmi-name': vmiName };
      });
      return;
    }
    const phase = digString(vmim, 'status', 'phase');
    if (!phase) {
      // Objects created directly (not through the verb) meet the same rules; a refusal fails the job.
      const refusal = migrationRefusal(this.ctx, vmi, vmim.metadata.uid);
      if (refusal) {
        const failed = this.setPhase(vmim, 'Failed', (m) =>
          setCondition(m, { type: 'Failed', status: 'True', reason: 'NotMigratable', message: refusal }),
        );
        if (failed) recordEvent(store, failed, 'FailedMigration', refusal, { type: 'Warning' });
        return;
      }
      this.setPhase(vmim, 'Pending');
      return;
    }
    if (!isActive(vmim)) return;
    if (!vmi || vmiPhase(vmi) !== 'Running' || vmi.metadata.deletionTimestamp) {
      this.fail(vmim, vmi, 'the VMI stopped running during the migration');
      return;
    }
    switch (phase) {
      case 'Pending':
        this.timers.once(vmim, 'target', 500, () => this.createTarget(vmim, vmi));
        this.timers.once(vmim, 'timeout', PROGRESS_TIMEOUT_MS, () => {
          const current = store.get(K.vmims, namespace, name);
          if (
            current &&
            current.metadata.uid === vmim.metadata.uid &&
            ['Pending', 'Scheduling'].includes(digString(current, 'status', 'phase') ?? '')
          ) {
            this.fail(
              current,
              store.get(K.vmis, namespace, vmiName),
              'failed to schedule the target pod within the progress timeout (150s)',
            );
          }
        });
        return;
      case 'Scheduling': {
        const target = this.targetPod(vmim, vmi);
        if (target && digString(target, 'status', 'phase') === 'Running') this.runMigration(vmim, vmi, target);
        return;
      }
      default:
        return;
    }
  }

  private targetPod(vmim: KObject, vmi: KObject): KObject | undefined {
    return this.pods.podsOf(vmi).find((p) => p.metadata.labels?.[MIGRATION_JOB_LABEL] === vmim.metadata.uid);
  }

  private createTarget(vmim: KObject, vmi: KObject): void {
    const store = this.ctx.store;
    const current = store.get(K.vmims, vmim.metadata.namespace, vmim.metadata.name);
    if (!current || current.metadata.uid !== vmim.metadata.uid || digString(current, 'status', 'phase') !== 'Pending')
      return;
    const sourceNode = digString(vmi, 'status', 'nodeName') ?? '';
    const node = store.get(K.nodes, undefined, sourceNode);
    const vendorLabel = Object.keys(node?.metadata.labels ?? {}).find((l) => l.startsWith(CPU_VENDOR_LABEL_PREFIX));
    if (!this.targetPod(vmim, vmi)) {
      store.create(
        K.pods,
        launcherPod(vmi, {
          migration: {
            uid: vmim.metadata.uid,
            sourceNode,
            cpuVendorLabel: vendorLabel,
            addedNodeSelector: digRecord(vmim, 'spec', 'addedNodeSelector') as Record<string, string> | undefined,
          },
        }),
      );
    }
    this.setPhase(current, 'Scheduling');
  }

  /** Scheduled → PreparingTarget → TargetReady → Running → Succeeded, one timer per step. */
  private runMigration(vmim: KObject, vmi: KObject, target: KObject): void {
    const store = this.ctx.store;
    const { namespace } = vmim.metadata;
    const sourcePod = this.pods.launcherOf(vmi);
    const sourceNode = digString(vmi, 'status', 'nodeName') ?? '';
    const targetNode = digString(target, 'spec', 'nodeName') ?? '';
    const targetNodeObj = store.get(K.nodes, undefined, targetNode);
    const targetAddress = digArray(targetNodeObj, 'status', 'addresses').find((a) => a.type === 'InternalIP')?.address;
    const state: Json = {
      migrationUid: vmim.metadata.uid,
      sourceNode,
      targetNode,
      targetPod: target.metadata.name,
      sourcePod: sourcePod?.metadata.name,
      mode: 'PreCopy',
      completed: false,
      failed: false,
    };
    const alive = () => {
      const m = store.get(K.vmims, namespace, vmim.metadata.name);
      const v = store.get(K.vmis, namespace, vmi.metadata.name);
      return m &&
        v &&
        m.metadata.uid === vmim.metadata.uid &&
        v.metadata.uid === vmi.metadata.uid &&
        isActive(m) &&
        !m.metadata.deletionTimestamp &&
        vmiPhase(v) === 'Running'
        ? { m, v }
        : undefined;
    };
    const publish = (phase: string, patch: Json) => {
      Object.assign(state, patch);
      this.setPhase(vmim, phase, (m) => (status(m).migrationState = { ...state }));
      store.mutate(K.vmis, namespace, vmi.metadata.name, (v) => {
        if (v.metadata.uid !== vmi.metadata.uid) return false;
        status(v).migrationState = { ...state };
      });
    };
    this.setPhase(vmim, 'Scheduled');
    const copyMs = Math.max(1000, (guestMemoryBytes(vmi) / 2 ** 30) * 3000);
    this.timers.once(vmim, 'prepare', 1000, () => {
      if (!alive()) return;
      publish('PreparingTarget', {});
      recordEvent(
        store,
        vmi,
        'Migrating',
        `VirtualMachineInstance is migrating from node ${sourceNode} to node ${targetNode}`,
        { component: 'virt-handler' },
      );
      this.timers.once(vmim, 'ready', 1000, () => {
        if (!alive()) return;
        publish('TargetReady', {
          targetNodeDomainDetected: true,
          targetNodeAddress: targetAddress,
          targetNodeDomainReadyTimestamp: nowTimestamp(),
        });
        this.timers.once(vmim, 'run', 1000, () => {
          if (!alive()) return;
          publish('Running', { startTimestamp: nowTimestamp() });
          this.timers.once(vmim, 'finish', copyMs, () => {
            const live = alive();
            if (!live) return;
            this.complete(live.m, live.v, target, state);
          });
        });
      });
    });
  }

  private complete(vmim: KObject, vmi: KObject, target: KObject, state: Json): void {
    const store = this.ctx.store;
    const targetPod = store.get(K.pods, target.metadata.namespace, target.metadata.name) ?? target;
    const node = digString(targetPod, 'spec', 'nodeName') ?? '';
    const sourcePod = this.pods.launcherOf(vmi);
    Object.assign(state, { completed: true, endTimestamp: nowTimestamp() });
    const moved = store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
      const st = status(v);
      st.nodeName = node;
      st.activePods = { [targetPod.metadata.uid]: node };
      st.migrationState = { ...state };
      st.interfaces = interfacesStatus(
        v,
        digString(targetPod, 'status', 'podIP'),
        digArray(st, 'interfaces').some((i) => String(i.infoSource).includes('guest-agent')),
        guestCloudInit(store, v)?.addresses,
      );
      v.metadata.labels = { ...(v.metadata.labels ?? {}), 'kubevirt.io/nodeName': node };
    });
    this.setPhase(vmim, 'Succeeded', (m) => (status(m).migrationState = { ...state }));
    if (sourcePod && sourcePod.metadata.uid !== targetPod.metadata.uid)
      store.delete(K.pods, sourcePod.metadata.namespace, sourcePod.metadata.name);
    if (moved) this.volumes.completed(moved);
    if (moved)
      recordEvent(store, moved, 'Migrated', `The VirtualMachineInstance migrated to node ${node}.`, {
        component: 'virt-handler',
      });
  }

  private fail(vmim: KObject, vmi: KObject | undefined, why: string): void {
    const store = this.ctx.store;
    const target = vmi ? this.targetPod(vmim, vmi) : undefined;
    if (target) store.delete(K.pods, target.metadata.namespace, target.metadata.name);
    const failed = this.setPhase(vmim, 'Failed', (m) => {
      const st = status(m);
      st.migrationState = {
        ...((st.migrationState as Json | undefined) ?? {}),
        completed: false,
        failed: true,
        failureReason: why,
        endTimestamp: nowTimestamp(),
      };
    });
    if (vmi && digRecord(vmi, 'status', 'migrationState')?.migrationUid === vmim.metadata.uid) {
      store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
        status(v).migrationState = {
          ...(digRecord(v, 'status', 'migrationState') ?? {}),
          failed: true,
          completed: false,
          endTimestamp: nowTimestamp(),
          failureReason: why,
        };
      });
    }
    if (failed) recordEvent(store, failed, 'FailedMigration', why, { type: 'Warning' });
  }

  private abort(vmim: KObject, vmi: KObject | undefined): void {
    const store = this.ctx.store;
    const target = vmi ? this.targetPod(vmim, vmi) : undefined;
    if (target) store.delete(K.pods, target.metadata.namespace, target.metadata.name);
    const aborted = { abortStatus: 'Succeeded', failed: true, completed: false, endTimestamp: nowTimestamp() };
    this.setPhase(vmim, 'Failed', (m) => {
      setCondition(m, { type: 'migrationAbortRequested', status: 'True', transition: false });
      status(m).migrationState = { ...((status(m).migrationState as Json | undefined) ?? {}), ...aborted };
    });
    if (vmi && digRecord(vmi, 'status', 'migrationState')?.migrationUid === vmim.metadata.uid) {
      store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
        status(v).migrationState = { ...(digRecord(v, 'status', 'migrationState') ?? {}), ...aborted };
      });
    }
  }
}
