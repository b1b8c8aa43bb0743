/**
 * virt-controller + virt-handler for VirtualMachineInstances: Pending → (launcher pod) Scheduling → (pod running
 * on a node) Scheduled → (domain boots) Running → (agent connects) AgentConnected; on deletion a graceful guest
 * shutdown (3–10 s, 0.5 s with grace 0) to Succeeded, launcher pods removed, finalizer dropped.
 */
import { guestCloudInit } from './cloud-init.js';
import { StageTimers } from './stage-timers.js';
import type { SimContext } from '../module.js';
import { recordEvent } from '../events.js';
import { nowTimestamp } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { guestImageOf } from './guest-images.js';
import type { HotplugVolumes } from './hotplug.js';
import { K, VMI_FINALIZER } from './keys.js';
import { launcherPod } from './launcher-pod.js';
import type { LauncherPods } from './launcher-pods.js';
import type { Json } from './objects.js';
import {
  digArray,
  digRecord,
  digString,
  findCondition,
  hash32,
  removeCondition,
  serves,
  setCondition,
  status,
} from './objects.js';
import {
  appendPhaseTransition,
  applyRunningStatus,
  guestOsInfoOf,
  interfacesStatus,
  isFinal,
  placementOf,
  vmiPhase,
} from './vmi-status.js';
import { WorkQueue } from './work-queue.js';

const LAUNCH_DELAY_MS = 300;
/** Failure injection: a VM with this annotation set to "true" crashes at every boot (CrashLoopBackOff demos/tests). */
export const FAIL_BOOT_ANNOTATION = 'sim.corral.dev/fail-boot';
const AGENT_MIN_MS = 15_000;
const AGENT_SPREAD_MS = 25_000;

type Key = { namespace: string; name: string };

export class VmiController {
  readonly queue: WorkQueue<Key>;
  private readonly timers: StageTimers;

  constructor(
    private readonly ctx: SimContext,
    private readonly pods: LauncherPods,
    private readonly hotplug: HotplugVolumes,
  ) {
    this.timers = new StageTimers(ctx.clock);
    this.queue = new WorkQueue('vmi-controller', (key) => this.reconcile(key));
  }

  start(): void {
    for (const vmi of this.ctx.store.list(K.vmis)) this.enqueue(vmi.metadata.namespace ?? 'default', vmi.metadata.name);
  }

  stop(): void {
    this.queue.stop();
  }

  enqueue(namespace: string, name: string): void {
    this.queue.add(`${namespace}/${name}`, { namespace, name });
  }

  onEvent(event: StoreEvent): void {
    if (event.key === K.vmis && event.type !== 'DELETED') {
      this.enqueue(event.object.metadata.namespace ?? 'default', event.object.metadata.name);
    } else if (event.key === K.pods) {
      const owner = (event.object.metadata.ownerReferences ?? []).find((r) => r.kind === 'VirtualMachineInstance');
      if (owner) this.enqueue(event.object.metadata.namespace ?? 'default', owner.name);
    } else if (event.key === K.dataVolumes) {
      // A VMI held in Scheduling for this DataVolume may go on now.
      const namespace = event.object.metadata.namespace ?? 'default';
      for (const vmi of this.ctx.store.list(K.vmis, namespace)) {
        if (dataVolumeNames(vmi).includes(event.object.metadata.name)) this.enqueue(namespace, vmi.metadata.name);
      }
    }
  }

  /**
   * The first of the VMI's DataVolumes that has not Succeeded. The VM controller lets a VMI be created for a
   * WaitForFirstConsumer DataVolume (its launcher pod is what makes the claim bind, then CDI imports), so the VMI
   * itself must wait for the import before the domain boots from the disk.
   */
  private unreadyDataVolume(vmi: KObject): string | undefined {
    const store = this.ctx.store;
    if (!serves(store, K.dataVolumes)) return undefined;
    return dataVolumeNames(vmi).find(
      (name) => digString(store.get(K.dataVolumes, vmi.metadata.namespace, name), 'status', 'phase') !== 'Succeeded',
    );
  }

  private reconcile({ namespace, name }: Key): void {
    const store = this.ctx.store;
    const vmi = store.get(K.vmis, namespace, name);
    if (!vmi) return;
    if (vmi.metadata.deletionTimestamp) {
      this.reconcileDeletion(vmi);
      return;
    }
    if (!(vmi.metadata.finalizers ?? []).includes(VMI_FINALIZER)) {
      store.mutate(K.vmis, namespace, name, (v) => {
        v.metadata.finalizers = [...(v.metadata.finalizers ?? []), VMI_FINALIZER];
      });
      return;
    }
    const phase = vmiPhase(vmi);
    switch (phase) {
      case undefined:
      case '':
        store.mutate(K.vmis, namespace, name, (v) => appendPhaseTransition(v, 'Pending'));
        return;
      case 'Pending':
        this.timers.once(vmi, 'launch', LAUNCH_DELAY_MS, () => this.createLauncher(namespace, name, vmi.metadata.uid));
        return;
      case 'Scheduling':
        this.followLauncher(vmi);
        return;
      case 'Scheduled':
        this.timers.once(vmi, 'boot', 1000 + (hash32(vmi.metadata.uid) % 1000), () =>
          this.boot(namespace, name, vmi.metadata.uid),
        );
        return;
      case 'Running':
        this.watchRunning(vmi);
        return;
      case 'Succeeded':
      case 'Failed':
        this.completePods(vmi);
        return;
      default:
        return;
    }
  }

  private createLauncher(namespace: string, name: string, uid: string): void {
    const store = this.ctx.store;
    const vmi = store.get(K.vmis, namespace, name);
    if (!vmi || vmi.metadata.uid !== uid || vmiPhase(vmi) !== 'Pending' || vmi.metadata.deletionTimestamp) return;
    const pod = this.pods.launcherOf(vmi) ?? store.create(K.pods, launcherPod(vmi));
    store.mutate(K.vmis, namespace, name, (v) => {
      appendPhaseTransition(v, 'Scheduling');
      status(v).activePods = { [pod.metadata.uid]: '' };
      setCondition(v, {
        type: 'Ready',
        status: 'False',
        reason: 'GuestNotRunning',
        message: 'Guest VM is not reported as running',
      });
    });
  }

  /** Mirror the launcher pod into the VMI: unschedulable, image pull failures, or scheduled + running. */
  private followLauncher(vmi: KObject): void {
    const store = this.ctx.store;
    const pod = this.pods.launcherOf(vmi);
    const { namespace, name } = vmi.metadata as { namespace: string; name: string };
    if (!pod) {
      this.fail(vmi, 'virt-launcher pod disappeared before the VMI was scheduled');
      return;
    }
    const scheduled = findCondition(pod, 'PodScheduled');
    const pullFailure = digArray(pod, 'status', 'containerStatuses')
      .map((c) => ({
        reason: digString(c, 'state', 'waiting', 'reason'),
        message: digString(c, 'state', 'waiting', 'message'),
      }))
      .find((w) => w.reason === 'ErrImagePull' || w.reason === 'ImagePullBackOff');
    const diskPending = this.unreadyDataVolume(vmi) !== undefined;
    store.mutate(K.vmis, namespace, name, (v) => {
      const before = JSON.stringify(v.status);
      if (scheduled?.status === 'False') {
        setCondition(v, {
          type: 'PodScheduled',
          status: 'False',
          reason: scheduled.reason,
          message: scheduled.message,
          probe: true,
        });
      } else {
        removeCondition(v, 'PodScheduled');
      }
      if (pullFailure) {
        setCondition(v, {
          type: 'Synchronized',
          status: 'False',
          reason: pullFailure.reason,
          message: pullFailure.message,
        });
      }
      const node = digString(pod, 'spec', 'nodeName');
      if (node && digString(pod, 'status', 'phase') === 'Running' && !diskPending) {
        appendPhaseTransition(v, 'Scheduled');
        status(v).nodeName = node;
        status(v).activePods = { [pod.metadata.uid]: node };
        v.metadata.labels = { ...(v.metadata.labels ?? {}), 'kubevirt.io/nodeName': node };
        removeCondition(v, 'Synchronized');
      }
      if (JSON.stringify(v.status) === before) return false;
    });
  }

  private boot(namespace: string, name: string, uid: string): void {
    const store = this.ctx.store;
    const vmi = store.get(K.vmis, namespace, name);
    if (!vmi || vmi.metadata.uid !== uid || vmiPhase(vmi) !== 'Scheduled' || vmi.metadata.deletionTimestamp) return;
    const pod = this.pods.launcherOf(vmi);
    if (!pod) {
      this.fail(vmi, 'virt-launcher pod disappeared while the domain was starting');
      return;
    }
    if (this.ownerVm(vmi)?.metadata.annotations?.[FAIL_BOOT_ANNOTATION] === 'true') {
      this.fail(vmi, `the domain crashed while booting (${FAIL_BOOT_ANNOTATION})`);
      return;
    }
    const running = store.mutate(K.vmis, namespace, name, (v) =>
      applyRunningStatus(store, v, placementOf(pod), undefined),
    );
    if (!running) return;
    recordEvent(store, running, 'Created', 'VirtualMachineInstance defined.', { component: 'virt-handler' });
    recordEvent(store, running, 'Started', 'VirtualMachineInstance started.', { component: 'virt-handler' });
    this.scheduleAgent(running);
  }

  private scheduleAgent(vmi: KObject): void {
    const image = guestImageOf(this.ctx.store, vmi, this.preferenceOf(vmi));
    if (!image.hasAgent || findCondition(vmi, 'AgentConnected')) return;
    const delay = AGENT_MIN_MS + (hash32(vmi.metadata.uid) % AGENT_SPREAD_MS);
    this.timers.once(vmi, 'agent', delay, () => {
      const store = this.ctx.store;
      const current = store.get(K.vmis, vmi.metadata.namespace, vmi.metadata.name);
      if (
        !current ||
        current.metadata.uid !== vmi.metadata.uid ||
        vmiPhase(current) !== 'Running' ||
        current.metadata.deletionTimestamp
      )
        return;
      const pod = this.pods.launcherOf(current);
      store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
        setCondition(v, { type: 'AgentConnected', status: 'True', transition: false });
        status(v).guestOSInfo = guestOsInfoOf(image);
        status(v).interfaces = interfacesStatus(
          v,
          digString(pod, 'status', 'podIP') ?? digString(v, 'status', 'interfaces', 0, 'ipAddress'),
          true,
          guestCloudInit(store, v)?.addresses,
        );
      });
    });
  }

  private ownerVm(vmi: KObject): KObject | undefined {
    const owner = (vmi.metadata.ownerReferences ?? []).find((r) => r.kind === 'VirtualMachine');
    return owner ? this.ctx.store.get(K.vms, vmi.metadata.namespace, owner.name) : undefined;
  }

  private preferenceOf(vmi: KObject): string | undefined {
    return digString(this.ownerVm(vmi), 'spec', 'preference', 'name');
  }

  private watchRunning(vmi: KObject): void {
    // A migration switches activePods to the target before the source pod goes, so one pod always remains.
    if (!this.pods.launcherOf(vmi)) {
      this.fail(vmi, 'virt-launcher pod was deleted; the domain is gone');
      return;
    }
    this.scheduleAgent(vmi);
    this.hotplug.reconcile(vmi);
  }

  /** The domain ended (guest poweroff or crash): virt-launcher exits, so its pod completes and frees the node. */
  private completePods(vmi: KObject): void {
    const now = nowTimestamp();
    for (const pod of this.pods.podsOf(vmi)) {
      const phase = digString(pod, 'status', 'phase');
      if (phase === 'Succeeded' || phase === 'Failed' || pod.metadata.deletionTimestamp) continue;
      this.ctx.store.mutate(K.pods, pod.metadata.namespace, pod.metadata.name, (p) => {
        const st = status(p);
        st.phase = vmiPhase(vmi) === 'Failed' ? 'Failed' : 'Succeeded';
        for (const type of ['Ready', 'ContainersReady'])
          setCondition(p, { type, status: 'False', reason: 'PodCompleted' });
        st.containerStatuses = digArray(p, 'status', 'containerStatuses').map((c) => ({
          ...c,
          ready: false,
          started: false,
          state: {
            terminated: {
              exitCode: 0,
              reason: 'Completed',
              startedAt: digString(c, 'state', 'running', 'startedAt') ?? now,
              finishedAt: now,
            },
          },
        }));
      });
    }
  }

  private fail(vmi: KObject, why: string): void {
    const store = this.ctx.store;
    const failed = store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
      if (isFinal(v)) return false;
      appendPhaseTransition(v, 'Failed');
      setCondition(v, { type: 'Ready', status: 'False', reason: 'PodTerminating', message: why });
    });
    if (failed)
      recordEvent(store, failed, 'Stopped', `The VirtualMachineInstance crashed: ${why}`, {
        type: 'Warning',
        component: 'virt-handler',
      });
  }

  private reconcileDeletion(vmi: KObject): void {
    const store = this.ctx.store;
    const { namespace, name, uid } = vmi.metadata as { namespace: string; name: string; uid: string };
    if (!isFinal(vmi)) {
      const phase = vmiPhase(vmi);
      const booted = phase === 'Running' || phase === 'Scheduled';
      const grace = (vmi.spec as Json | undefined)?.terminationGracePeriodSeconds;
      const shutdownMs = !booted
        ? 200
        : grace === 0
          ? 500
          : Math.min(typeof grace === 'number' ? grace * 1000 : Infinity, 3000 + (hash32(uid) % 7000));
      if (booted && !this.timers.pending(uid, 'shutdown')) {
        recordEvent(store, vmi, 'ShuttingDown', 'Signaled Graceful Shutdown', { component: 'virt-handler' });
      }
      this.timers.once(vmi, 'shutdown', shutdownMs, () => {
        const stopped = store.mutate(K.vmis, namespace, name, (v) => {
          if (v.metadata.uid !== uid || isFinal(v)) return false;
          appendPhaseTransition(v, 'Succeeded');
          setCondition(v, {
            type: 'Ready',
            status: 'False',
            reason: 'PodTerminating',
            message: 'virt-launcher pod is terminating',
          });
          removeCondition(v, 'AgentConnected');
        });
        if (stopped && booted)
          recordEvent(store, stopped, 'Stopped', 'The VirtualMachineInstance was shut down.', {
            component: 'virt-handler',
          });
      });
      return;
    }
    const pods = this.pods.podsOf(vmi);
    for (const pod of pods) {
      if (!pod.metadata.deletionTimestamp) store.delete(K.pods, pod.metadata.namespace, pod.metadata.name);
    }
    if (this.pods.podsOf(vmi).length === 0) store.removeFinalizer(K.vmis, namespace, name, VMI_FINALIZER);
  }
}

/** Names of the DataVolumes the VMI boots from (hot-plugged ones attach later and do not hold the start). */
function dataVolumeNames(vmi: KObject): string[] {
  return digArray(vmi, 'spec', 'volumes')
    .filter((v) => v.dataVolume !== undefined && digRecord(v, 'dataVolume')?.hotpluggable !== true)
    .map((v) => digString(v, 'dataVolume', 'name'))
    .filter((name): name is string => name !== undefined);
}
