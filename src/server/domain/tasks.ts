/**
 * The task journal: every mutation is a task with an id, the caller, progress and a log. Bounded in memory
 * (oldest evicted first) because it is a UI activity feed, not an audit store.
 */
import type { Task } from '../schemas/tasks';
import { describeError } from '../errors';

export interface TaskHandle {
  readonly id: string;
  log(line: string): void;
  progress(percent: number): void;
  done(line?: string): void;
  fail(err: unknown): void;
  readonly finished: boolean;
}

interface Entry {
  task: Task;
  lines: string[];
}

export class TaskJournal {
  private readonly entries = new Map<string, Entry>(); // insertion order = age
  private readonly listeners = new Set<(task: Task) => void>();
  private seq = 0;

  constructor(
    private readonly capacity = 500,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Starts a task. The id reads like api.md's (`bootc-web-1712345678`) and stays unique within the process. */
  start(action: string, target: string, caller: string): TaskHandle {
    const shortTarget = target.split('/').pop() ?? target;
    const id = `${action}-${shortTarget}-${Math.floor(this.now().getTime() / 1000)}-${++this.seq}`;
    const entry: Entry = {
      lines: [],
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
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    this.publish(entry);
    const update = (mutate: () => void) => {
      if (entry.task.status !== 'running') return;
      mutate();
      entry.task = { ...entry.task, log: entry.lines.join('\n') };
      this.publish(entry);
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
        }),
      get finished() {
        return entry.task.status !== 'running';
      },
    };
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

  private publish(entry: Entry): void {
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
