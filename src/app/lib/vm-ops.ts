// Snapshots, clone, template flag and disk export: which of them a VM's state allows and why not (shown as the
// disabled control's title and, at phone width, as a visible hint), snapshot ordering and names, the export URL.
// Pure, so the rules are unit-tested; the server checks them again and its 409 has the last word.
import type { ActionState } from './status';
import type { SnapshotRow, TaskRow } from './model';

/** What /api/capabilities' canSnapshot=false and the server's 409 mean. */
export const NO_SNAPSHOT_CLASS = 'no VolumeSnapshotClass in the cluster';
export const STOP_FIRST = 'stop the VM first';

/** Task actions (the journal's) that change a VM's snapshots. */
export const SNAPSHOT_TASKS = new Set(['snapshot', 'snapshot-delete', 'rollback']);

export const EXPORT_FORMATS = [
  { id: 'raw.gz', label: 'raw.gz', hint: 'the raw disk image, gzipped on the fly (no staging)' },
  { id: 'qcow2', label: 'qcow2', hint: 'converted with qemu-img on the Corral server (needs qemu-utils)' },
] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number]['id'];

export interface OpsFacts {
  status: string;
  /** A VM instance exists (Running, Paused, Starting, Migrating, …). */
  running: boolean;
  template: boolean;
  /** The VM's disk is a PVC/DataVolume (a container disk is ephemeral and cannot be exported). */
  hasDisk: boolean;
  /** /api/capabilities canSnapshot; undefined while unknown (then the server decides). */
  canSnapshot?: boolean;
  /** The guest agent is connected (KubeVirt can freeze the disks: a running VM may be cloned). */
  agent?: boolean;
}

const ok: ActionState = { enabled: true, reason: '' };
const no = (reason: string): ActionState => ({ enabled: false, reason });

/**
 * Cloning within the namespace is KubeVirt's VirtualMachineClone (a snapshot: needs a VolumeSnapshotClass, and a
 * guest agent when running); into another namespace CDI copies the stopped VM's disks (no snapshot needed). The
 * menu item is enabled when either is possible; the dialog says which namespace works (cloneTargetProblem).
 */
export function cloneState(f: OpsFacts): ActionState {
  if (f.running && !f.agent) return no(`${STOP_FIRST} (no guest agent to freeze its disks)`);
  if (f.running && f.canSnapshot === false)
    return no(`${NO_SNAPSHOT_CLASS} (stop the VM to clone it into another namespace)`);
  return ok;
}

/** Why a clone of this VM into `targetNs` cannot be made (null when it can); `sourceNs` is the VM's namespace. */
export function cloneTargetProblem(f: OpsFacts, sourceNs: string, targetNs: string): string | null {
  if (targetNs === sourceNs || !targetNs) {
    if (f.canSnapshot === false)
      return `cloning within ${sourceNs} needs a snapshot (${NO_SNAPSHOT_CLASS}): pick another namespace, where CDI copies the disks`;
    if (f.running && !f.agent) return `${STOP_FIRST} (no guest agent to freeze its disks)`;
    return null;
  }
  if (f.running) return `${STOP_FIRST} to clone it into another namespace (its disks are copied while nothing writes)`;
  return null;
}

/** Marking needs a stopped VM; unmarking is always allowed. */
export function templateState(f: OpsFacts): ActionState {
  if (!f.template && f.running) return no(`${STOP_FIRST} (${f.status || 'running'})`);
  return ok;
}

export function exportState(f: OpsFacts): ActionState {
  if (!f.hasDisk) return no('no disk on a PersistentVolumeClaim to export (a container disk is ephemeral)');
  if (f.running) return no(`${STOP_FIRST} (its disk is in use while it runs)`);
  return ok;
}

export function takeSnapshotState(f: OpsFacts, opts: { listError?: string; runningTask?: TaskRow }): ActionState {
  if (f.canSnapshot === false) return no(NO_SNAPSHOT_CLASS);
  if (opts.listError) return no(opts.listError);
  if (opts.runningTask) return no(`wait for the running ${opts.runningTask.action} task`);
  return ok;
}

export function rollbackState(row: SnapshotRow, runningTask?: TaskRow): ActionState {
  if (runningTask) return no(`wait for the running ${runningTask.action} task`);
  if (row.phase === 'Failed') return no(`the snapshot failed${row.error ? `: ${row.error}` : ''}`);
  if (!row.ready) return no(`not ready to restore from yet (${row.phase || 'pending'})`);
  return ok;
}

export function deleteSnapshotState(runningTask?: TaskRow): ActionState {
  return runningTask ? no(`wait for the running ${runningTask.action} task`) : ok;
}

/** Newest first, as the timeline reads; ties keep the server's order. */
export function newestFirst(rows: readonly SnapshotRow[]): SnapshotRow[] {
  return rows
    .map((row, i) => ({ row, i, t: Date.parse(row.creationTime) }))
    .sort((a, b) => (Number.isNaN(b.t) ? 0 : b.t) - (Number.isNaN(a.t) ? 0 : a.t) || b.i - a.i)
    .map((x) => x.row);
}

/** The server's rule for snapshot names (SnapshotName in schemas/vm-ops.ts). */
export function snapshotNameProblem(name: string): string | null {
  if (name === '') return 'Name is required';
  if (name.length > 40) return `At most 40 characters (this is ${name.length})`;
  if (!/^[A-Za-z]/.test(name)) return 'Must start with a letter';
  const bad = /[^A-Za-z0-9_-]/.exec(name);
  if (bad) return `"${bad[0]}" is not allowed: use letters, digits, - and _`;
  if (name === 'current') return "'current' is reserved";
  return null;
}

/** `snap-20261201-161500` in local time: what the name field starts with. */
export function suggestSnapshotName(now = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `snap-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
}

/** The streaming download route (api.md); a plain link, so the browser's own download manager takes it. */
export function exportUrl(namespace: string, name: string, format: ExportFormat, context?: string): string {
  const base = `/api/vms/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/export?format=${encodeURIComponent(format)}`;
  return context ? `${base}&context=${encodeURIComponent(context)}` : base;
}

/** The newest task of `actions` on `namespace/name` started at or after `since` (ms), if any. */
export function latestTask(
  tasks: readonly TaskRow[],
  target: string,
  actions: ReadonlySet<string>,
  since = 0,
): TaskRow | undefined {
  let best: TaskRow | undefined;
  for (const t of tasks) {
    if (t.target !== target || !actions.has(t.action)) continue;
    const started = Date.parse(t.startedAt);
    if (started < since) continue;
    if (!best || started > Date.parse(best.startedAt)) best = t;
  }
  return best;
}
