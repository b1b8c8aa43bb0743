/**
 * One run of a schedule: what `corral schedule run <name>` does inside the CronJob's Job (with the runner
 * ServiceAccount's rights) and what "run now" does inside Corral (with Corral's). It reads the schedule's CronJob,
 * finds the matching VMs with live reads (a Job has no watch cache), and then
 * - snapshot: creates a VirtualMachineSnapshot of each VM, labelled `corral.dev/schedule=<name>`, and deletes the
 *   oldest snapshots of that VM carrying the label beyond `keep` (snapshots taken by hand or by another schedule are
 *   never touched);
 * - power: calls KubeVirt's start or stop on each VM not already in that state.
 * A failure on one VM does not stop the others; the run is an error if any VM failed. Every run is appended to the
 * schedule's runs ConfigMap (the last RUNS_KEPT), which Corral reads for the run history and its task log.
 */
import { CorralError, describeError } from '../errors';
import type { ClusterPort, KObject } from './cluster-port';
import { LABEL_TAG_PREFIX, LABEL_VM } from './labels';
import {
  cronJobName,
  definitionOf,
  RUNS_KEPT,
  RUNS_KEY,
  RUNS_LABEL,
  runsConfigMapName,
  SCHEDULE_LABEL,
  SCHEDULED_AT_ANNOTATION,
  type ScheduleDefinition,
} from './schedules-spec';
import { ANNOTATION_SNAPSHOT_NAME, snapshotObjectName } from './vm-snapshots';

export interface ScheduleRun {
  id: string;
  schedule: string;
  /** `schedule` when the CronJob started it, `manual` for run now. */
  trigger: 'schedule' | 'manual';
  by: string;
  startedAt: string;
  endedAt: string;
  status: 'ok' | 'error';
  /** One line summing the run up. */
  message: string;
  lines: string[];
}

const MAX_LINES = 200;

export function runId(schedule: string, at: Date): string {
  return `${schedule}-${at.getTime().toString(36)}-${Math.floor(Math.random() * 36 ** 4).toString(36)}`;
}

/** `20261201-235500-123`: sortable, unique per millisecond, valid in an object name. */
function stamp(at: Date): string {
  const iso = at.toISOString(); // 2026-12-01T23:55:00.123Z
  return `${iso.slice(0, 10).replace(/-/g, '')}-${iso.slice(11, 19).replace(/:/g, '')}-${iso.slice(20, 23)}`;
}

async function matchingVms(cluster: ClusterPort, def: ScheduleDefinition): Promise<KObject[]> {
  if (def.target.kind === 'vm') {
    const vm = await cluster.fetch('VirtualMachine', def.target.namespace, def.target.name);
    return vm ? [vm] : [];
  }
  return cluster.fetchList('VirtualMachine', { labelSelector: `${LABEL_TAG_PREFIX}${def.target.tag}=true` });
}

function targetText(def: ScheduleDefinition): string {
  return def.target.kind === 'vm' ? `VM ${def.target.namespace}/${def.target.name}` : `VMs tagged ${def.target.tag}`;
}

async function snapshotVm(
  cluster: ClusterPort,
  schedule: string,
  keep: number,
  vm: KObject,
  at: Date,
  log: (line: string) => void,
): Promise<void> {
  const namespace = vm.metadata.namespace ?? '';
  const name = vm.metadata.name ?? '';
  const display = `${schedule}-${stamp(at)}`;
  const object = snapshotObjectName(name, display);
  await cluster.create('VirtualMachineSnapshot', {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshot',
    metadata: {
      name: object,
      namespace,
      labels: { [LABEL_VM]: name, [SCHEDULE_LABEL]: schedule },
      annotations: { [ANNOTATION_SNAPSHOT_NAME]: display, [SCHEDULED_AT_ANNOTATION]: at.toISOString() },
    },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name } },
  });
  log(`${namespace}/${name}: created snapshot ${display}`);
  const ours = (
    await cluster.fetchList('VirtualMachineSnapshot', { namespace, labelSelector: `${SCHEDULE_LABEL}=${schedule}` })
  )
    .filter(
      (s) =>
        (s.spec as { source?: { name?: string } } | undefined)?.source?.name === name && !s.metadata.deletionTimestamp,
    )
    .sort((a, b) => takenAt(a).localeCompare(takenAt(b)));
  for (const old of ours.slice(0, Math.max(0, ours.length - keep))) {
    if (await cluster.remove('VirtualMachineSnapshot', namespace, old.metadata.name ?? ''))
      log(
        `${namespace}/${name}: pruned snapshot ${old.metadata.annotations?.[ANNOTATION_SNAPSHOT_NAME] ?? old.metadata.name} (keep ${keep})`,
      );
  }
}

function takenAt(s: KObject): string {
  return s.metadata.annotations?.[SCHEDULED_AT_ANNOTATION] ?? s.metadata.creationTimestamp ?? '';
}

/** Whether KubeVirt has (or is bringing up) an instance: Paused counts as running, as for the start verb. */
function isRunning(vm: KObject): boolean {
  const printable = (vm.status as { printableStatus?: string } | undefined)?.printableStatus;
  if (printable) return printable !== 'Stopped' && printable !== 'Stopping';
  const spec = (vm.spec ?? {}) as { runStrategy?: string; running?: boolean };
  return spec.runStrategy === 'Always' || spec.running === true;
}

async function powerVm(
  cluster: ClusterPort,
  action: 'start' | 'stop',
  vm: KObject,
  log: (line: string) => void,
): Promise<void> {
  const namespace = vm.metadata.namespace ?? '';
  const name = vm.metadata.name ?? '';
  const running = isRunning(vm);
  if (action === 'start' && running) return log(`${namespace}/${name}: already running`);
  if (action === 'stop' && !running) return log(`${namespace}/${name}: already stopped`);
  await cluster.subresource('virtualmachines', namespace, name, action);
  log(`${namespace}/${name}: ${action === 'start' ? 'started' : 'stopped'}`);
}

/**
 * Runs the schedule `name` (its CronJob lives in `namespace`) and records the run. Throws NOT_FOUND when the
 * schedule does not exist; a failure inside the run is recorded as an error run and returned, not thrown.
 */
export async function runSchedule(
  cluster: ClusterPort,
  namespace: string,
  name: string,
  options: {
    trigger: ScheduleRun['trigger'];
    by: string;
    log?: (line: string) => void;
    now?: () => Date;
    /** The run's id, when the caller must know it before the run is recorded (runId). */
    id?: string;
  },
): Promise<ScheduleRun> {
  const now = options.now ?? (() => new Date());
  const cj = await cluster.fetch('CronJob', namespace, cronJobName(name));
  if (!cj) throw new CorralError('NOT_FOUND', `no schedule named ${name}`);
  const def = definitionOf(cj);
  const started = now();
  const lines: string[] = [];
  const log = (line: string) => {
    if (lines.length < MAX_LINES) lines.push(line);
    options.log?.(line);
  };
  let failures = 0;
  let vms: KObject[] = [];
  try {
    if (!def)
      throw new CorralError('CONFLICT', `schedule ${name} has no readable definition (annotation edited by hand?)`);
    vms = await matchingVms(cluster, def);
    log(`${def.type} schedule ${name}: ${vms.length} matching ${targetText(def)}`);
    for (const vm of vms) {
      try {
        if (def.type === 'snapshot') await snapshotVm(cluster, name, def.keep ?? 7, vm, now(), log);
        else await powerVm(cluster, def.action ?? 'stop', vm, log);
      } catch (err) {
        failures++;
        log(`${vm.metadata.namespace}/${vm.metadata.name}: failed: ${describeError(err)}`);
      }
    }
  } catch (err) {
    failures++;
    log(`error: ${describeError(err)}`);
  }
  const run: ScheduleRun = {
    id: options.id ?? runId(name, started),
    schedule: name,
    trigger: options.trigger,
    by: options.by,
    startedAt: started.toISOString(),
    endedAt: now().toISOString(),
    status: failures ? 'error' : 'ok',
    message: failures
      ? `${failures} of ${Math.max(vms.length, 1)} failed`
      : `${vms.length} VM${vms.length === 1 ? '' : 's'} done`,
    lines,
  };
  await recordRun(cluster, namespace, cj, run);
  return run;
}

export function parseRuns(cm: KObject | undefined): ScheduleRun[] {
  const raw = (cm?.data as Record<string, string> | undefined)?.[RUNS_KEY];
  if (!raw) return [];
  try {
    const parsed = JSON.parse(raw) as unknown;
    return Array.isArray(parsed) ? (parsed as ScheduleRun[]) : [];
  } catch {
    return [];
  }
}

/** Appends the run to the schedule's runs ConfigMap (newest first), retrying a concurrent write. */
async function recordRun(cluster: ClusterPort, namespace: string, cj: KObject, run: ScheduleRun): Promise<void> {
  const cmName = runsConfigMapName(run.schedule);
  for (let attempt = 0; ; attempt++) {
    const cm = await cluster.fetch('ConfigMap', namespace, cmName);
    const runs = [run, ...parseRuns(cm)].slice(0, RUNS_KEPT);
    const data = { [RUNS_KEY]: JSON.stringify(runs) };
    try {
      if (!cm) {
        await cluster.create('ConfigMap', {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: cmName,
            namespace,
            labels: { ...cj.metadata.labels, [RUNS_LABEL]: run.schedule },
            ownerReferences: [
              { apiVersion: 'batch/v1', kind: 'CronJob', name: cj.metadata.name ?? '', uid: cj.metadata.uid ?? '' },
            ],
          },
          data,
        });
      } else {
        await cluster.patch('ConfigMap', namespace, cmName, {
          metadata: { resourceVersion: cm.metadata.resourceVersion },
          data,
        });
      }
      return;
    } catch (err) {
      const conflict = err instanceof CorralError && err.code === 'CONFLICT';
      if (!conflict || attempt >= 4) throw err;
    }
  }
}
