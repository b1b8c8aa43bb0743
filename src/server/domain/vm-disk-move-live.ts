/**
 * Moving a RUNNING VM's disk to another StorageClass the way KubeVirt does it: a blank DataVolume of the same size
 * on the target class, then the VM's `spec.updateVolumesStrategy: Migration` with the volume switched to it (under
 * the VM's resourceVersion). KubeVirt points the VMI at the new claim, lists the pair in the VMI's
 * `status.migratedVolumes` and creates a migration that copies the disk while the guest keeps running; the task
 * follows that migration's phases as progress. When it fails, the VM is switched back to its old claim (which
 * cancels the volume migration) and the blank copy is deleted; the old volume is deleted only when asked.
 * Needs KubeVirt's VolumesUpdateStrategy and VolumeMigration feature gates (beta, on by default, from v1.5).
 */
import { CorralError } from '../errors';
import { patchVmFrom } from './vm-patch';
import type { ChangeEvent, KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import type { TaskHandle } from './tasks';
import { asArray, asDict, asString } from './vm-facts';

export const VOLUME_MIGRATION_GATES = ['VolumesUpdateStrategy', 'VolumeMigration'] as const;

const PHASE_PROGRESS: Record<string, number> = {
  Pending: 20,
  Scheduling: 30,
  Scheduled: 40,
  PreparingTarget: 50,
  TargetReady: 60,
  Running: 70,
};

/** KubeVirt releases from which the volume-migration gates are beta, i.e. on unless disabled. */
function betaByDefault(version: string): boolean {
  const m = /^v?(\d+)\.(\d+)/.exec(version);
  return !!m && (Number(m[1]) > 1 || (Number(m[1]) === 1 && Number(m[2]) >= 5));
}

/** The volume-migration gates the KubeVirt CR leaves off (empty when both are on). */
export async function volumeMigrationGatesOff(deps: DomainDeps): Promise<string[]> {
  const crs = await deps.cluster.fetchList('KubeVirt');
  const cr = crs[0];
  if (!cr) return [...VOLUME_MIGRATION_GATES];
  const dev = asDict(asDict(asDict(cr.spec).configuration).developerConfiguration);
  const listed = new Set(asArray(dev.featureGates).map(asString));
  const disabled = new Set(asArray(dev.disabledFeatureGates).map(asString));
  const beta = betaByDefault(asString(asDict(cr.status).observedKubeVirtVersion));
  return VOLUME_MIGRATION_GATES.filter((g) => disabled.has(g) || !(listed.has(g) || beta));
}

export function gatesOffMessage(off: string[]): string {
  return `moving a running VM's disk needs KubeVirt's ${off.join(' and ')} feature gate${off.length > 1 ? 's' : ''}, which ${off.length > 1 ? 'are' : 'is'} off: enable ${off.length > 1 ? 'them' : 'it'} in the KubeVirt CR (spec.configuration.developerConfiguration.featureGates) or stop the VM first`;
}

export interface LiveMove {
  disk: string;
  from: string;
  copy: string;
  storageClass: string;
  deleteSource: boolean;
  annotations?: Record<string, string>;
}

/** The VM's volumes (and dataVolumeTemplates) with `disk` on `claim` instead of its current claim. */
function switched(vm: KObject, disk: string, claim: string, dropTemplate?: string): Record<string, unknown> {
  const spec = asDict(vm.spec);
  const volumes = asArray(asDict(asDict(spec.template).spec).volumes).map((raw) => {
    const v = asDict(raw);
    return asString(v.name) === disk ? { name: disk, dataVolume: { name: claim } } : v;
  });
  const templates = asArray(spec.dataVolumeTemplates);
  return {
    ...(templates.length && dropTemplate
      ? { dataVolumeTemplates: templates.filter((t) => asString(asDict(asDict(t).metadata).name) !== dropTemplate) }
      : {}),
    template: { spec: { volumes } },
  };
}

/** After the blank copy is ready: switch the running VM to it and follow KubeVirt's volume migration. */
export async function migrateVolume(
  deps: DomainDeps,
  namespace: string,
  name: string,
  vm: KObject,
  move: LiveMove,
  task: TaskHandle,
): Promise<void> {
  const before = new Set(
    deps.cluster.cache
      .list('VirtualMachineInstanceMigration', namespace)
      .filter((m) => asString(asDict(m.spec).vmiName) === name)
      .map((m) => m.metadata.uid),
  );
  await patchVmFrom(deps, vm, {
    metadata: move.annotations ? { annotations: move.annotations } : {},
    spec: { updateVolumesStrategy: 'Migration', ...switched(vm, move.disk, move.copy, move.from) },
  });
  task.log(`VM ${namespace}/${name} now names ${move.copy} for ${move.disk} (updateVolumesStrategy: Migration)`);
  task.progress(15);
  try {
    await followVolumeMigration(deps, namespace, name, move, before, task);
  } catch (err) {
    // Put the VM back on its old claim: KubeVirt cancels the volume migration and the VMI keeps its old disk.
    const current = deps.cluster.cache.get('VirtualMachine', namespace, name);
    const names = asArray(asDict(asDict(asDict(current?.spec).template).spec).volumes).some(
      (v) => asString(asDict(asDict(v).dataVolume).name) === move.copy,
    );
    if (current && names) {
      const templates = asArray(asDict(vm.spec).dataVolumeTemplates);
      await patchVmFrom(deps, current, {
        spec: {
          ...(templates.length ? { dataVolumeTemplates: templates } : {}),
          template: { spec: { volumes: asArray(asDict(asDict(asDict(vm.spec).template).spec).volumes) } },
        },
      })
        .then(() => task.log(`VM ${namespace}/${name} is back on ${move.from}`))
        .catch((e: unknown) =>
          task.log(`could not switch ${move.disk} back to ${move.from}: ${e instanceof Error ? e.message : String(e)}`),
        );
    }
    throw err;
  }
}

function followVolumeMigration(
  deps: DomainDeps,
  namespace: string,
  name: string,
  move: LiveMove,
  before: Set<string | undefined>,
  task: TaskHandle,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let lastPhase = '';
    let started = false;
    const look = (): boolean => {
      const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
      if (!vmi || asString(asDict(vmi.status).phase) !== 'Running') {
        reject(new CorralError('CONFLICT', `VM ${namespace}/${name} stopped running during the volume migration`));
        return true;
      }
      const vmStatus = asDict(deps.cluster.cache.get('VirtualMachine', namespace, name)?.status);
      const restart = asArray(vmStatus.conditions)
        .map(asDict)
        .find(
          (c) =>
            c.type === 'RestartRequired' && c.status === 'True' && /volume migration refused/.test(asString(c.message)),
        );
      if (restart && !started) {
        reject(new CorralError('CONFLICT', `KubeVirt did not start a volume migration: ${asString(restart.message)}`));
        return true;
      }
      const migrated = asArray(asDict(vmi.status).migratedVolumes)
        .map(asDict)
        .find((m) => asString(m.volumeName) === move.disk);
      if (migrated && !started) {
        started = true;
        task.log(`KubeVirt migrates ${move.disk} from ${move.from} to ${move.copy}`);
      }
      const vmim = deps.cluster.cache
        .list('VirtualMachineInstanceMigration', namespace)
        .find((m) => asString(asDict(m.spec).vmiName) === name && !before.has(m.metadata.uid));
      const phase = asString(asDict(vmim?.status).phase);
      if (vmim && phase && phase !== lastPhase) {
        lastPhase = phase;
        task.log(`migration ${vmim.metadata.name}: ${phase}`);
        if (PHASE_PROGRESS[phase]) task.progress(PHASE_PROGRESS[phase]);
      }
      if (phase === 'Failed') {
        const why = asString(asDict(asDict(vmim?.status).migrationState).failureReason);
        reject(
          new CorralError('BAD_GATEWAY', `volume migration ${vmim?.metadata.name} failed${why ? `: ${why}` : ''}`),
        );
        return true;
      }
      const onCopy = asArray(asDict(vmi.spec).volumes).some(
        (v) =>
          asString(asDict(v).name) === move.disk &&
          (asString(asDict(asDict(v).dataVolume).name) === move.copy ||
            asString(asDict(asDict(v).persistentVolumeClaim).claimName) === move.copy),
      );
      if (phase === 'Succeeded' && onCopy && !migrated) {
        resolve();
        return true;
      }
      return false;
    };
    const finish = () => {
      unsubscribe();
      clearTimeout(timer);
    };
    const unsubscribe = deps.cluster.onChange((e: ChangeEvent) => {
      if (e.object.metadata.namespace !== namespace) return;
      if (
        e.kind !== 'VirtualMachineInstanceMigration' &&
        !((e.kind === 'VirtualMachineInstance' || e.kind === 'VirtualMachine') && e.object.metadata.name === name)
      )
        return;
      if (look()) finish();
    });
    const timer = setTimeout(() => {
      finish();
      reject(
        new CorralError(
          'TIMEOUT',
          `the volume migration of ${namespace}/${name} did not finish in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
        ),
      );
    }, deps.config.waitTimeoutMs);
    timer.unref?.();
    if (look()) finish();
  });
}
