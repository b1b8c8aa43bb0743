/**
 * UPIDs ↔ Corral's task journal. Every journal task gets a UPID the first time a Proxmox client sees it (a task
 * started through this API gets it at once, naming the Proxmox user and vmid); the UPID's `pid` is the CRC-32 of
 * the task id, `pstart` the server's start time, `starttime` the task's start. A UPID this process did not mint (one
 * from before a restart, or from another replica) still resolves: pid and starttime name the task in the durable
 * journal, and the UPID's own fields say the rest.
 */
import { crc32 } from '@/server/domain/crc32';
import type { Task } from '@/server/schemas/tasks';
import { formatUpid, parseUpid, upidNode, type Upid } from './translate/upid';

/** Corral journal actions in Proxmox task-type words (the ones bpg and Ansible know). */
const TYPE_OF_ACTION: Record<string, string> = {
  create: 'qmcreate',
  start: 'qmstart',
  stop: 'qmstop',
  shutdown: 'qmshutdown',
  restart: 'qmreboot',
  reset: 'qmreset',
  pause: 'qmpause',
  unpause: 'qmresume',
  delete: 'qmdestroy',
  migrate: 'qmigrate',
  snapshot: 'qmsnapshot',
  'snapshot-delete': 'qmdelsnapshot',
  rollback: 'qmrollback',
  config: 'qmconfig',
  template: 'qmtemplate',
  clone: 'qmclone',
  resize: 'resize',
  'disk-move': 'qmmove',
  'disk-add': 'qmconfig',
  'disk-detach': 'qmconfig',
  vncproxy: 'vncproxy',
  // PVE's storage upload (storage-upload.ts) is an imgcopy task.
  upload: 'imgcopy',
  'image-delete': 'imgdel',
  // PVE runs a qemu termproxy session as a `vncproxy` task too.
  termproxy: 'vncproxy',
  // Containers: PVE's lxc task types.
  'ct-create': 'vzcreate',
  'ct-start': 'vzstart',
  'ct-stop': 'vzstop',
  'ct-restart': 'vzreboot',
  'ct-delete': 'vzdestroy',
  'ct-scale': 'vzconfig',
  'ct-config': 'vzconfig',
};

export function taskType(action: string): string {
  return TYPE_OF_ACTION[action] ?? (action.replace(/[^A-Za-z0-9_-]/g, '') || 'task');
}

export interface TaskMeta {
  node: string;
  vmid?: number;
  user: string;
  /** The PVE task type when the journal action alone does not say it (a CT's `shutdown` is the domain's stop). */
  type?: string;
}

interface Entry {
  taskId: string;
  upid: string;
  parsed: Upid;
}

/** The journal task a UPID's pid and starttime name (durable-journal lookup for UPIDs minted elsewhere). */
export type UpidLookup = (pid: number, starttime: number) => string | undefined;

export const upidPid = (taskId: string): number => crc32(taskId);

export class UpidRegistry {
  private readonly byPid = new Map<number, Entry>();
  private readonly byTask = new Map<string, Entry>();
  readonly pstart: number;

  constructor(
    private readonly capacity = 2000,
    bootSeconds = Math.floor(Date.now() / 1000),
    private readonly lookup?: UpidLookup,
  ) {
    this.pstart = bootSeconds;
  }

  /** The UPID of a journal task, minting one (with `meta`) on first sight. */
  upidFor(task: Pick<Task, 'id' | 'action' | 'startedAt'>, meta: TaskMeta): string {
    const known = this.byTask.get(task.id);
    if (known) return known.upid;
    const parsed: Upid = {
      node: upidNode(meta.node),
      pid: upidPid(task.id),
      pstart: this.pstart,
      starttime: Math.floor(Date.parse(task.startedAt) / 1000) || this.pstart,
      type: meta.type ?? taskType(task.action),
      id: meta.vmid !== undefined ? String(meta.vmid) : '',
      user: meta.user.replace(/[:\s]/g, '_') || 'root@pam',
    };
    const entry: Entry = { taskId: task.id, upid: formatUpid(parsed), parsed };
    this.byPid.set(parsed.pid, entry);
    this.byTask.set(task.id, entry);
    while (this.byPid.size > this.capacity) {
      const oldest = this.byPid.values().next().value;
      if (!oldest) break;
      this.byPid.delete(oldest.parsed.pid);
      this.byTask.delete(oldest.taskId);
    }
    return entry.upid;
  }

  /** The journal task id a UPID names, if it is one of ours and still remembered. */
  resolve(upid: string): { taskId: string; upid: Upid } | undefined {
    const parsed = parseUpid(upid);
    if (!parsed) return undefined;
    const entry = this.byPid.get(parsed.pid);
    if (entry && entry.upid === upid) return { taskId: entry.taskId, upid: entry.parsed };
    if (entry && parsed.pstart === this.pstart) return undefined; // ours, but not this spelling of it
    const taskId = this.lookup?.(parsed.pid, parsed.starttime);
    return taskId ? { taskId, upid: parsed } : undefined;
  }
}

/** `GET /nodes/{node}/tasks/{upid}/status`. */
export function taskStatus(task: Task, upid: Upid, upidText: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    upid: upidText,
    node: upid.node,
    pid: upid.pid,
    pstart: upid.pstart,
    starttime: upid.starttime,
    type: upid.type,
    id: upid.id,
    user: upid.user.split('!')[0],
    status: task.status === 'running' ? 'running' : 'stopped',
  };
  if (upid.user.includes('!')) out.tokenid = upid.user.split('!')[1];
  if (task.status === 'done') out.exitstatus = 'OK';
  if (task.status === 'error') out.exitstatus = exitStatusOf(task);
  return out;
}

/** A failed task's exit status: PVE's own words for a task someone stopped, else the error. */
function exitStatusOf(task: Task): string {
  return task.cancelledBy !== undefined ? INTERRUPTED : task.error || 'unknown error';
}

/** What PVE's worker reports when its task was stopped (`DELETE /nodes/{node}/tasks/{upid}`). */
export const INTERRUPTED = 'interrupted by signal';

/** `GET /nodes/{node}/tasks/{upid}/log`: numbered lines, ending in PVE's `TASK OK` / `TASK ERROR: …`. */
export function taskLog(task: Task, start = 0, limit = 50): { n: number; t: string }[] {
  const lines = task.log ? task.log.split('\n') : [];
  if (task.status === 'done') lines.push('TASK OK');
  if (task.status === 'error') lines.push(`TASK ERROR: ${exitStatusOf(task)}`);
  return lines.slice(start, start + limit).map((t, i) => ({ n: start + i + 1, t }));
}

/** A row of `GET /nodes/{node}/tasks`. */
export function taskListRow(task: Task, upid: Upid, upidText: string): Record<string, unknown> {
  const row: Record<string, unknown> = {
    upid: upidText,
    node: upid.node,
    pid: upid.pid,
    pstart: upid.pstart,
    starttime: upid.starttime,
    type: upid.type,
    id: upid.id,
    user: upid.user,
  };
  if (task.status !== 'running') {
    row.status = task.status === 'done' ? 'OK' : exitStatusOf(task);
    row.endtime = Math.floor(Date.parse(task.endedAt ?? task.startedAt) / 1000);
  }
  return row;
}

/** The filters of `GET /nodes/{node}/tasks`, as PVE 8 defines them. */
export interface TaskFilter {
  node: string;
  vmid?: number;
  /** Only tasks of exactly this type (`qmstart`, `qmigrate`, …). */
  typefilter?: string;
  /** Only tasks whose user contains this text (case-insensitive), as PVE matches it. */
  userfilter?: string;
  /** Only failed tasks. */
  errors?: boolean;
  /** `archive` (PVE's default): ended tasks; `active`: running ones; `all`: both. */
  source?: 'archive' | 'active' | 'all';
  /** Start times (epoch seconds) bounds, inclusive. */
  since?: number;
  until?: number;
  /** PVE's normalized status types: `ok`, `error`, `warning`, `unknown`. */
  statusfilter?: ReadonlySet<string>;
}

/** PVE's `upid_normalize_status_type`: what a finished task's status counts as. */
export function statusType(task: Pick<Task, 'status'>): 'ok' | 'error' | 'running' {
  return task.status === 'done' ? 'ok' : task.status === 'error' ? 'error' : 'running';
}

export function taskMatches(task: Task, upid: Upid, f: TaskFilter): boolean {
  if (upid.node !== f.node) return false;
  const source = f.source ?? 'archive';
  const running = task.status === 'running';
  if (source === 'archive' && running) return false;
  if (source === 'active' && !running) return false;
  if (f.vmid !== undefined && upid.id !== String(f.vmid)) return false;
  if (f.typefilter && upid.type !== f.typefilter) return false;
  if (f.userfilter && !upid.user.toLowerCase().includes(f.userfilter.toLowerCase())) return false;
  if (f.since !== undefined && upid.starttime < f.since) return false;
  if (f.until !== undefined && upid.starttime > f.until) return false;
  const type = statusType(task);
  if (f.errors && type !== 'error') return false;
  if (f.statusfilter && type !== 'running' && !f.statusfilter.has(type)) return false;
  return true;
}
