/**
 * UPIDs ↔ Corral's task journal. Every journal task gets a UPID the first time a Proxmox client sees it (a task
 * started through this API gets it at once, naming the Proxmox user and vmid); the UPID's `pid` is a sequence
 * number that indexes the registry, `pstart` the server's start time, `starttime` the task's start.
 */
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
  'disk-add': 'qmconfig',
  'disk-detach': 'qmconfig',
  vncproxy: 'vncproxy',
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

export class UpidRegistry {
  private seq = 0;
  private readonly byPid = new Map<number, Entry>();
  private readonly byTask = new Map<string, Entry>();
  readonly pstart: number;

  constructor(
    private readonly capacity = 2000,
    bootSeconds = Math.floor(Date.now() / 1000),
  ) {
    this.pstart = bootSeconds;
  }

  /** The UPID of a journal task, minting one (with `meta`) on first sight. */
  upidFor(task: Pick<Task, 'id' | 'action' | 'startedAt'>, meta: TaskMeta): string {
    const known = this.byTask.get(task.id);
    if (known) return known.upid;
    const parsed: Upid = {
      node: upidNode(meta.node),
      pid: ++this.seq,
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
    if (!parsed || parsed.pstart !== this.pstart) return undefined;
    const entry = this.byPid.get(parsed.pid);
    if (!entry || entry.upid !== upid) return undefined;
    return { taskId: entry.taskId, upid: entry.parsed };
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
  if (task.status === 'error') out.exitstatus = task.error || 'unknown error';
  return out;
}

/** `GET /nodes/{node}/tasks/{upid}/log`: numbered lines, ending in PVE's `TASK OK` / `TASK ERROR: …`. */
export function taskLog(task: Task, start = 0, limit = 50): { n: number; t: string }[] {
  const lines = task.log ? task.log.split('\n') : [];
  if (task.status === 'done') lines.push('TASK OK');
  if (task.status === 'error') lines.push(`TASK ERROR: ${task.error}`);
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
    row.status = task.status === 'done' ? 'OK' : task.error || 'unknown error';
    row.endtime = Math.floor(Date.parse(task.endedAt ?? task.startedAt) / 1000);
  }
  return row;
}
