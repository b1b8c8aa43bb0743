/**
 * Volume migration (`spec.updateVolumesStrategy: Migration`, gates VolumesUpdateStrategy and VolumeMigration): when
 * a running VM's template swaps the claim behind a volume and nothing else, KubeVirt points the VMI's volumes at the
 * new claims, lists the pairs in the VMI's `status.migratedVolumes` with a `VolumesChange` condition, and its
 * workload updater creates a migration (`kubevirt-workload-update-…`) that copies the disks while the guest runs.
 * When it succeeds the destination claims hold what the source held and the VMI's status forgets the pairs; the VM
 * keeps the record in `status.volumeUpdateState.volumeMigrationState`. Putting the old claims back into the template
 * before then cancels it: the VMI returns to its source volumes and the migration is aborted.
 */
import type { SimContext } from '../module.js';
import { recordEvent } from '../events.js';
import { DISK_CONTENT_ANNOTATION, EXPORT_BYTES_ANNOTATION } from '../storage/keys.js';
import { nowTimestamp } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { kubevirtConfig } from './config.js';
import { K } from './keys.js';
import type { Json } from './objects.js';
import { dig, digArray, digString, randomSuffix, removeCondition, setCondition, status } from './objects.js';
import { bootVolumeStatus, claimOf, migratability } from './volumes.js';

export const VOLUME_MIGRATION_GATES = ['VolumesUpdateStrategy', 'VolumeMigration'] as const;
export const WORKLOAD_UPDATE_ANNOTATION = 'kubevirt.io/workloadUpdateMigration';
/** Annotations the embedded cluster keeps a disk's data in; a volume migration carries them to the new claim. */
const CONTENT_ANNOTATIONS = [DISK_CONTENT_ANNOTATION, EXPORT_BYTES_ANNOTATION];

export interface ClaimSwap {
  volumeName: string;
  from: string;
  to: string;
}

/** The template with every volume's claim name blanked: equal before and after when only claims were swapped. */
export function withoutClaims(templateSpec: Json): Json {
  const spec = structuredClone(templateSpec);
  spec.volumes = digArray(spec, 'volumes').map((v) => {
    const copy = structuredClone(v);
    if (copy.persistentVolumeClaim || copy.dataVolume) {
      delete copy.persistentVolumeClaim;
      delete copy.dataVolume;
      copy.claim = true;
    }
    return copy;
  });
  return spec;
}

/** Volumes of the running VMI whose claim the template now names differently. */
export function claimSwaps(vmi: KObject, templateSpec: Json): ClaimSwap[] {
  const running = new Map(digArray(vmi, 'spec', 'volumes').map((v) => [String(v.name), claimOf(v)]));
  const swaps: ClaimSwap[] = [];
  for (const v of digArray(templateSpec, 'volumes')) {
    const to = claimOf(v);
    const from = running.get(String(v.name));
    if (to && from && to !== from) swaps.push({ volumeName: String(v.name), from, to });
  }
  return swaps;
}

/** Why the cluster will not migrate volumes (a gate is off), or undefined. */
export function volumeMigrationGateOff(ctx: SimContext): string | undefined {
  const gates = kubevirtConfig(ctx.store).featureGates;
  const off = VOLUME_MIGRATION_GATES.filter((g) => !gates.has(g));
  return off.length
    ? `the ${off.join(' and ')} feature gate${off.length > 1 ? 's are' : ' is'} not enabled`
    : undefined;
}

export function wantsVolumeMigration(vm: KObject): boolean {
  return digString(vm, 'spec', 'updateVolumesStrategy') === 'Migration';
}

function pvcInfo(ctx: SimContext, namespace: string | undefined, claim: string): Json {
  const pvc = ctx.store.get(K.pvcs, namespace, claim);
  return { claimName: claim, volumeMode: digString(pvc, 'spec', 'volumeMode') ?? 'Filesystem' };
}

export class VolumeMigrator {
  constructor(private readonly ctx: SimContext) {}

  /**
   * Start moving the swapped volumes, or — when the template names the VMI's source claims again — cancel the
   * migration in flight. Returns why it cannot start (a destination claim is missing), or undefined.
   */
  apply(vm: KObject, vmi: KObject, templateSpec: Json, swaps: ClaimSwap[]): string | undefined {
    const store = this.ctx.store;
    const { namespace } = vmi.metadata;
    const inFlight = digArray(vmi, 'status', 'migratedVolumes');
    const cancels =
      inFlight.length > 0 &&
      swaps.every((s) =>
        inFlight.some((m) => m.volumeName === s.volumeName && digString(m, 'sourcePVCInfo', 'claimName') === s.to),
      );
    if (cancels) {
      this.cancel(vm, vmi, templateSpec);
      return undefined;
    }
    const missing = swaps.find((s) => !store.get(K.pvcs, namespace, s.to));
    if (missing) return `the destination claim ${missing.to} of volume ${missing.volumeName} does not exist`;
    const migrated = swaps.map((s) => ({
      volumeName: s.volumeName,
      sourcePVCInfo: pvcInfo(this.ctx, namespace, s.from),
      destinationPVCInfo: pvcInfo(this.ctx, namespace, s.to),
    }));
    const wanted = new Map(digArray(templateSpec, 'volumes').map((v) => [String(v.name), v]));
    const updated = store.mutate(K.vmis, namespace, vmi.metadata.name, (v) => {
      if (v.metadata.uid !== vmi.metadata.uid) return false;
      const spec = v.spec as Json;
      spec.volumes = digArray(spec, 'volumes').map((vol) => {
        const swap = swaps.find((s) => s.volumeName === vol.name);
        return swap ? structuredClone(wanted.get(swap.volumeName) ?? vol) : vol;
      });
      status(v).migratedVolumes = migrated;
      setCondition(v, { type: 'VolumesChange', status: 'True', reason: 'VolumesChange', transition: true });
      // Volumes being migrated are copied by the migration itself: only the others must be shared.
      const live = migratability(store, v);
      setCondition(v, {
        type: 'LiveMigratable',
        status: live.migratable ? 'True' : 'False',
        ...(live.reason ? { reason: live.reason, message: live.message } : {}),
        transition: false,
      });
    });
    if (!updated) return undefined;
    store.mutate(K.vms, vm.metadata.namespace, vm.metadata.name, (v) => {
      status(v).volumeUpdateState = { volumeMigrationState: { migratedVolumes: migrated } };
    });
    recordEvent(
      store,
      vm,
      'VolumesChange',
      `volume migration of ${swaps.map((s) => `${s.volumeName} (${s.from} → ${s.to})`).join(', ')} started`,
    );
    store.create(K.vmims, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstanceMigration',
      metadata: {
        name: `kubevirt-workload-update-${randomSuffix(5)}`,
        namespace,
        annotations: { [WORKLOAD_UPDATE_ANNOTATION]: '' },
        labels: { 'kubevirt.io/vmi-name': vmi.metadata.name },
      },
      spec: { vmiName: vmi.metadata.name },
    });
    return undefined;
  }

  /** A migration of this VMI succeeded: its destination claims now hold the data; the VMI forgets the pairs. */
  completed(vmi: KObject): void {
    const store = this.ctx.store;
    const { namespace } = vmi.metadata;
    const migrated = digArray(vmi, 'status', 'migratedVolumes');
    if (!migrated.length) return;
    for (const m of migrated) {
      const source = store.get(K.pvcs, namespace, digString(m, 'sourcePVCInfo', 'claimName') ?? '');
      const carried = Object.fromEntries(
        CONTENT_ANNOTATIONS.flatMap((a) => {
          const value = source?.metadata.annotations?.[a];
          return value === undefined ? [] : [[a, value]];
        }),
      );
      store.mutate(K.pvcs, namespace, digString(m, 'destinationPVCInfo', 'claimName') ?? '', (pvc) => {
        pvc.metadata.annotations = { ...(pvc.metadata.annotations ?? {}), ...carried };
      });
    }
    const done = store.mutate(K.vmis, namespace, vmi.metadata.name, (v) => {
      if (v.metadata.uid !== vmi.metadata.uid) return false;
      delete status(v).migratedVolumes;
      removeCondition(v, 'VolumesChange');
      // The disks' claims changed: volumeStatus names the new ones (hot-plugged entries stay as they are).
      const boot = bootVolumeStatus(store, v);
      const names = new Set(boot.map((b) => b.name));
      status(v).volumeStatus = [...boot, ...digArray(v, 'status', 'volumeStatus').filter((e) => !names.has(e.name))];
      const live = migratability(store, v);
      setCondition(v, {
        type: 'LiveMigratable',
        status: live.migratable ? 'True' : 'False',
        ...(live.reason ? { reason: live.reason, message: live.message } : {}),
        transition: false,
      });
    });
    const owner = (vmi.metadata.ownerReferences ?? []).find((r) => r.kind === 'VirtualMachine');
    if (owner)
      store.mutate(K.vms, namespace, owner.name, (v) => {
        const state = dig(v, 'status', 'volumeUpdateState', 'volumeMigrationState') as Json | undefined;
        if (state) state.endTimestamp = nowTimestamp();
      });
    if (done) recordEvent(store, done, 'VolumesChange', 'volume migration completed');
  }

  private cancel(vm: KObject, vmi: KObject, templateSpec: Json): void {
    const store = this.ctx.store;
    const { namespace } = vmi.metadata;
    const wanted = new Map(digArray(templateSpec, 'volumes').map((v) => [String(v.name), v]));
    store.mutate(K.vmis, namespace, vmi.metadata.name, (v) => {
      if (v.metadata.uid !== vmi.metadata.uid) return false;
      const spec = v.spec as Json;
      spec.volumes = digArray(spec, 'volumes').map((vol) => structuredClone(wanted.get(String(vol.name)) ?? vol));
      delete status(v).migratedVolumes;
      removeCondition(v, 'VolumesChange');
      const live = migratability(store, v);
      setCondition(v, {
        type: 'LiveMigratable',
        status: live.migratable ? 'True' : 'False',
        ...(live.reason ? { reason: live.reason, message: live.message } : {}),
        transition: false,
      });
    });
    store.mutate(K.vms, vm.metadata.namespace, vm.metadata.name, (v) => {
      delete status(v).volumeUpdateState;
    });
    for (const m of store.list(K.vmims, namespace))
      if (
        digString(m, 'spec', 'vmiName') === vmi.metadata.name &&
        m.metadata.annotations?.[WORKLOAD_UPDATE_ANNOTATION] !== undefined &&
        !['Succeeded', 'Failed'].includes(digString(m, 'status', 'phase') ?? '') &&
        !m.metadata.deletionTimestamp
      )
        store.delete(K.vmims, namespace, m.metadata.name);
    recordEvent(store, vm, 'VolumesChange', 'volume migration cancelled: the VM names its source volumes again');
  }
}
