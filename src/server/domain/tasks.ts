/**
 * The task journal: every mutation is a task with an id, the caller, progress and a log. This is the in-memory view
 * every read is served from (newest `capacity` tasks, oldest evicted first). With a TaskStore attached
 * (task-store.ts) it is also durable and shared: this replica's tasks are written to the cluster in batches, and
 * other replicas' tasks (and this replica's from before a restart) are adopted from a watch.
 */
import type { Task } from '../schemas/tasks';
import { CorralError, describeError } from '../errors';
import type { Identity } from './identity';

export interface TaskHandle {
  readonly id: string;
  log(line: string): void;
  progress(percent: number): void;
  done(line?: string): void;
  /** Ends the task in error; a `TaskCancelled` ends it as cancelled (`error: cancelled by <login>`). */
  fail(err: unknown): void;
  /**
   * Makes the task cancellable (TaskJournal.cancel) until the returned function is called: `cancel` runs once,
   * with the canceller's login, when someone cancels it. The task then stops what it does, undoes it, and ends with
   * `fail(new TaskCancelled(by))`. A task that never registers one refuses a cancel.
   */
  onCancel(cancel: (by: string) => void): () => void;
  readonly finished: boolean;
}

/** What a cancelled task fails with: its error reads `cancelled by <login>`. */
export class TaskCancelled extends Error {
  constructor(readonly by: string) {
    super(`cancelled by ${by}`);
    this.name = 'TaskCancelled';
  }
}

interface Entry {
  task: Task;
  lines: string[];
  /** Lines dropped from the head to keep the log bounded. */
  dropped: number;
  /** Started by this process (its handle writes it; the cluster copy only ever ends it). */
  local: boolean;
  /** The cancel handlers the running task registered (TaskHandle.onCancel); none = it cannot be cancelled. */
  cancel?: Set<(by: string) => void>;
}

export interface TaskJournalOptions {
  /** Tasks kept in memory (default 1000, the cluster journal's default retention). */
  capacity?: number;
  now?: () => Date;
  /** Makes ids unique across replicas and restarts (a short random tag per process); '' in unit tests. */
  idTag?: string;
  /** Log lines kept per task (oldest dropped first, default 1000) ... */
  maxLogLines?: number;
  /** ... and characters (default 64 KiB): a task's log must fit its ConfigMap with room to spare. */
  maxLogChars?: number;
}

export class TaskJournal {
  private readonly entries = new Map<string, Entry>(); // insertion order = age
  private readonly listeners = new Set<(task: Task) => void>();
  private readonly localListeners = new Set<(task: Task) => void>();
  private seq = 0;
  private readonly capacity: number;
  private readonly now: () => Date;
  private readonly idTag: string;
  private readonly maxLogLines: number;
  private readonly maxLogChars: number;

  constructor(capacityOrOptions: number | TaskJournalOptions = {}, now?: () => Date) {
    const o = typeof capacityOrOptions === 'number' ? { capacity: capacityOrOptions } : capacityOrOptions;
    this.capacity = o.capacity ?? 1000;
    this.now = now ?? o.now ?? (() => new Date());
    this.idTag = o.idTag ?? '';
    this.maxLogLines = o.maxLogLines ?? 1000;
    this.maxLogChars = o.maxLogChars ?? 64 * 1024;
  }

  /** Starts a task. The id reads like api.md's (`bootc-web-1712345678-1`) and is unique across replicas. */
  start(action: string, target: string, caller: string): TaskHandle {
    const shortTarget = target.split('/').pop() ?? target;
    const id = `${action}-${shortTarget}-${Math.floor(this.now().getTime() / 1000)}-${this.idTag}${++this.seq}`;
    const entry: Entry = {
      lines: [],
      dropped: 0,
      local: true,
      task: {
        id,
        action,
        target,
        caller,
        status: 'running',
        progress: 0,
        log: '',
        error: '',
        startedAt: this.now().toISOString(),
        endedAt: null,
      },
    };
    this.entries.set(id, entry);
    this.evict();
    this.publish(entry, true);
    const update = (mutate: () => void) => {
      if (entry.task.status !== 'running') return;
      mutate();
      this.bound(entry);
      entry.task = { ...entry.task, log: this.logOf(entry) };
      if (entry.task.status !== 'running') {
        entry.cancel = undefined;
        delete entry.task.cancellable;
      }
      this.publish(entry, true);
    };
    const stamp = (line: string) => `${this.now().toISOString().slice(11, 19)} ${line}`;
    return {
      id,
      log: (line) => update(() => entry.lines.push(stamp(line))),
      progress: (p) =>
        update(() => (entry.task.progress = Math.max(entry.task.progress, Math.min(100, Math.round(p))))),
      done: (line) =>
        update(() => {
          if (line) entry.lines.push(stamp(line));
          entry.task.status = 'done';
          entry.task.progress = 100;
          entry.task.endedAt = this.now().toISOString();
        }),
      fail: (err) =>
        update(() => {
          const message = describeError(err);
          entry.lines.push(stamp(`error: ${message}`));
          entry.task.status = 'error';
          entry.task.error = message;
          entry.task.endedAt = this.now().toISOString();
          if (err instanceof TaskCancelled) entry.task.cancelledBy = err.by;
        }),
      onCancel: (cancel) => {
        if (entry.task.status !== 'running') return () => undefined;
        const handlers = (entry.cancel ??= new Set());
        handlers.add(cancel);
        this.setCancellable(entry);
        return () => {
          handlers.delete(cancel);
          this.setCancellable(entry);
        };
      },
      get finished() {
        return entry.task.status !== 'running';
      },
    };
  }

  /**
   * Takes in a task as the cluster journal holds it (another replica's, or ours from before a restart, or ours
   * marked interrupted by a survivor). A task that ended stays ended: an older running copy never revives it.
   */
  adopt(task: Task): void {
    const known = this.entries.get(task.id);
    if (known) {
      if (known.task.status !== 'running' && task.status === 'running') return;
      // Our own running task: the cluster copy trails the handle; it only matters when a survivor ended it.
      if (known.local && (known.task.status !== 'running' || task.status === 'running')) return;
      known.task = task;
      known.lines = task.log ? task.log.split('\n') : [];
      known.dropped = 0;
      this.publish(known, false);
      return;
    }
    const entry: Entry = { task, lines: task.log ? task.log.split('\n') : [], dropped: 0, local: false };
    const last = [...this.entries.values()].at(-1);
    this.entries.set(task.id, entry);
    // Keep insertion order = age: a task older than the newest we hold (the first list, a late watch event) is
    // put in its place.
    if (last && last.task.startedAt > task.startedAt) this.resort();
    this.evict();
    if (this.entries.has(task.id)) this.publish(entry, false);
  }

  /**
   * Cancels a running task (`POST /api/tasks/{id}/cancel`, PVE's stop-task): its cancel handlers run and the task
   * goes on to undo what it did and end as cancelled. Only who started it or an admin may; a task that ended, one
   * that registered no handler (it cannot stop part-way) or one another replica runs is a 409; unknown is a 404.
   * Cancelling a task already being cancelled answers it again.
   */
  cancel(id: string, by: Identity): Task {
    const entry = this.entries.get(id);
    if (!entry) throw new CorralError('NOT_FOUND', `task ${id} not found`);
    const { task } = entry;
    if (!by.admin && (by.readOnlyReason !== undefined || by.login !== task.caller))
      throw new CorralError(
        'FORBIDDEN',
        `${by.login} may not cancel task ${id}: only who started it (${task.caller}) or an admin may`,
      );
    if (task.status !== 'running')
      throw new CorralError('CONFLICT', `task ${id} has already ended (${task.status === 'done' ? 'OK' : 'failed'})`);
    if (task.cancelledBy !== undefined) return task;
    if (!entry.local)
      throw new CorralError(
        'CONFLICT',
        `task ${id} cannot be cancelled here: another Corral replica runs it (ask that replica, or wait for it)`,
      );
    if (!entry.cancel?.size)
      throw new CorralError(
        'CONFLICT',
        `task ${id} cannot be cancelled (a ${task.action} task does not stop part-way)`,
      );
    const handlers = [...entry.cancel];
    entry.cancel = undefined;
    const at = this.now().toISOString();
    entry.lines.push(`${at.slice(11, 19)} cancel requested by ${by.login}`);
    this.bound(entry);
    const { cancellable: _off, ...rest } = task;
    entry.task = { ...rest, cancelledBy: by.login, log: this.logOf(entry) };
    this.publish(entry, true);
    for (const h of handlers) h(by.login);
    return entry.task;
  }

  /** Tasks this process started that are still running (what a graceful shutdown waits for). */
  runningLocal(): Task[] {
    return [...this.entries.values()].filter((e) => e.local && e.task.status === 'running').map((e) => e.task);
  }

  /** Ends every task this process still runs as failed with `reason` (shutdown past its grace period). */
  interruptLocal(reason: string): number {
    const at = this.now().toISOString();
    let n = 0;
    for (const entry of this.entries.values()) {
      if (!entry.local || entry.task.status !== 'running') continue;
      entry.lines.push(`${at.slice(11, 19)} error: ${reason}`);
      this.bound(entry);
      const { cancellable: _off, ...task } = entry.task;
      entry.task = { ...task, status: 'error', error: reason, endedAt: at, log: this.logOf(entry) };
      entry.cancel = undefined;
      this.publish(entry, true);
      n++;
    }
    return n;
  }

  /** Whether this process started the task (and so owns writing it). */
  isLocal(id: string): boolean {
    return this.entries.get(id)?.local === true;
  }

  /** Forgets a task the cluster journal no longer holds (retention removed it). */
  forget(id: string): void {
    const entry = this.entries.get(id);
    if (entry && entry.task.status !== 'running') this.entries.delete(id);
  }

  get(id: string): Task | undefined {
    return this.entries.get(id)?.task;
  }

  /** Newest first. */
  list(limit = 100): Task[] {
    return [...this.entries.values()]
      .reverse()
      .slice(0, limit)
      .map((e) => e.task);
  }

  /** The newest task of `action` on `target`, if the journal still holds one. */
  latest(action: string, target: string): Task | undefined {
    let found: Task | undefined;
    for (const e of this.entries.values()) if (e.task.action === action && e.task.target === target) found = e.task;
    return found;
  }

  subscribe(listener: (task: Task) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every change of a task started by this process (what the cluster journal writes). */
  subscribeLocal(listener: (task: Task) => void): () => void {
    this.localListeners.add(listener);
    return () => this.localListeners.delete(listener);
  }

  private setCancellable(entry: Entry): void {
    const now = entry.task.status === 'running' && (entry.cancel?.size ?? 0) > 0;
    if ((entry.task.cancellable === true) === now) return;
    const { cancellable: _was, ...rest } = entry.task;
    entry.task = now ? { ...rest, cancellable: true } : rest;
    this.publish(entry, true);
  }

  private logOf(entry: Entry): string {
    const head = entry.dropped ? [`… ${entry.dropped} earlier line(s) dropped`] : [];
    return [...head, ...entry.lines].join('\n');
  }

  private bound(entry: Entry): void {
    let chars = entry.lines.reduce((n, l) => n + l.length + 1, 0);
    while (entry.lines.length > 1 && (entry.lines.length > this.maxLogLines || chars > this.maxLogChars)) {
      chars -= (entry.lines.shift()?.length ?? 0) + 1;
      entry.dropped++;
    }
    const only = entry.lines[0];
    if (only !== undefined && only.length > this.maxLogChars) entry.lines[0] = `${only.slice(0, this.maxLogChars)}…`;
  }

  private resort(): void {
    const sorted = [...this.entries.entries()].sort(([, a], [, b]) =>
      a.task.startedAt < b.task.startedAt ? -1 : a.task.startedAt > b.task.startedAt ? 1 : 0,
    );
    this.entries.clear();
    for (const [id, e] of sorted) this.entries.set(id, e);
  }

  private evict(): void {
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }

  private publish(entry: Entry, local: boolean): void {
    if (local) for (const l of this.localListeners) l(entry.task);
    for (const l of this.listeners) l(entry.task);
  }
}

/** Runs `body` as a task and returns its result; the task records success or the error, which is re-thrown. */
export async function runAsTask<T>(
  journal: TaskJournal,
  action: string,
  target: string,
  caller: string,
  body: (task: TaskHandle) => Promise<T>,
): Promise<T> {
  const task = journal.start(action, target, caller);
  try {
    const result = await body(task);
    if (!task.finished) task.done();
    return result;
  } catch (err) {
    task.fail(err);
    throw err;
  }
}
