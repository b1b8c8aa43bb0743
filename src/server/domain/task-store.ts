/**
 * The durable, shared task journal: one ConfigMap per task in Corral's namespace (`corral-task-<id>`, label
 * `corral.dev/journal=task`), written by the replica that runs the task and followed by every replica through a
 * watch. Why this shape (docs/architecture.md, "Task journal"):
 *
 * - One object per task has one writer (its replica), so writes never contend; a shard holding many tasks would be
 *   rewritten by every replica for every change and its size would grow with the busiest hour.
 * - A task's log is bounded (TaskJournal: 1000 lines / 64 KiB), far under the apiserver's ~1 MiB object limit.
 * - Writes are batched: a task's changes are held for `flushMs` and written as one create or one merge patch; the
 *   final state is written at once. A task that logs 500 lines in a burst costs one or two requests, not 500.
 * - Retention (last `retainCount` tasks, none older than `retainDays`) is enforced by the leader alone, counted
 *   on a fresh list of the journal (prune()).
 * - A running task whose replica's heartbeat Lease (leases.ts) has run out is marked `error: interrupted (replica
 *   gone)` by whichever survivor notices first; the write carries the resourceVersion it read, so only one does.
 */
import type { Task } from '../schemas/tasks';
import { CorralError } from '../errors';
import type { ClusterPort, KObject } from './cluster-port';
import { crc32 } from './crc32';
import { LeaseObserver, REPLICA_LABEL, replicaLeaseName, type LeaseSpec } from './leases';
import type { TaskJournal } from './tasks';

export const JOURNAL_LABEL = 'corral.dev/journal';
export const TASK_STATUS_LABEL = 'corral.dev/task-status';
export const TASK_REPLICA_ANNOTATION = 'corral.dev/replica';
export const INTERRUPTED = 'interrupted (replica gone)';

export interface TaskStoreOptions {
  namespace: string;
  /** This replica's identity (the owner written on its tasks; its heartbeat Lease is named after it). */
  identity: string;
  /** How long a task's changes are held before one write (default 1000 ms). */
  flushMs: number;
  /** Replica heartbeat lease duration: a running task's owner is gone once its lease ran out. */
  leaseSeconds: number;
  retainCount: number;
  retainDays: number;
  log?: (line: string) => void;
}

/** The ConfigMap name of a task id (ids are DNS-safe already; anything else gets a checksum suffix). */
export function taskConfigMapName(id: string): string {
  const safe = id
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, '-')
    .replace(/^[-.]+|[-.]+$/g, '');
  const name = safe === id ? safe : `${safe.slice(0, 220)}-${crc32(id).toString(16)}`;
  return `corral-task-${name}`.slice(0, 253);
}

/** Reads a task back from its ConfigMap; undefined for anything that is not one. */
export function taskFromConfigMap(cm: KObject): Task | undefined {
  const data = (cm.data ?? {}) as Record<string, string>;
  try {
    const meta = JSON.parse(data['task.json'] ?? '') as Omit<Task, 'log'>;
    if (typeof meta.id !== 'string' || typeof meta.startedAt !== 'string') return undefined;
    return { ...meta, log: data.log ?? '' };
  } catch {
    return undefined;
  }
}

function taskData(task: Task): Record<string, string> {
  const { log, ...meta } = task;
  return { 'task.json': JSON.stringify(meta), log };
}

interface Writer {
  name: string;
  /** resourceVersion of our last write (precondition of the next). */
  rv?: string;
  pending?: Task;
  timer?: NodeJS.Timeout;
  inFlight?: Promise<void>;
  /** Failed attempts in a row (the retry backs off: an unreachable apiserver must not be hammered). */
  failures: number;
}

interface Known {
  id: string;
  owner: string;
  rv: string;
  task: Task;
}

const isConflict = (err: unknown) => err instanceof CorralError && err.code === 'CONFLICT';

export class TaskStore {
  private readonly writers = new Map<string, Writer>();
  private readonly known = new Map<string, Known>(); // by ConfigMap name
  private readonly abort = new AbortController();
  private readonly observer = new LeaseObserver();
  private reaperTimer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private synced: Promise<void> | undefined;
  /** Apiserver requests this store made (the journal bench reads it). */
  requests = 0;

  constructor(
    private readonly cluster: ClusterPort,
    private readonly journal: TaskJournal,
    private readonly options: TaskStoreOptions,
  ) {}

  /** Starts writing this replica's tasks and following everyone's; resolves after the first list (or its failure). */
  start(): Promise<void> {
    if (this.synced) return this.synced;
    this.unsubscribe = this.journal.subscribeLocal((task) => this.schedule(task));
    this.synced = this.follow();
    const period = Math.max(200, (this.options.leaseSeconds * 1000) / 3);
    let reaping = false;
    this.reaperTimer = setInterval(() => {
      if (reaping) return;
      reaping = true;
      void this.reap()
        .catch((err: unknown) => this.warn('reaper', err))
        .finally(() => (reaping = false));
    }, period);
    this.reaperTimer.unref?.();
    return this.synced;
  }

  /**
   * Writes everything pending now and waits for it (shutdown, tests). Gives up on a task whose write just failed
   * (its retry stays scheduled), so a shutdown with the apiserver gone is not held up.
   */
  async flush(): Promise<void> {
    for (let pass = 0; pass < 10; pass++) {
      const busy = [...this.writers.values()].filter((w) => w.pending !== undefined || w.inFlight !== undefined);
      if (busy.length === 0) return;
      await Promise.all(busy.map((w) => this.write(w)));
      if (busy.every((w) => w.failures > 0)) return;
    }
  }

  /** Stops following and reaping; pending writes are flushed first. */
  async close(): Promise<void> {
    clearInterval(this.reaperTimer);
    this.unsubscribe?.();
    await this.flush().catch((err: unknown) => this.warn('final flush', err));
    this.abort.abort();
    for (const w of this.writers.values()) clearTimeout(w.timer);
  }

  /** Tasks the cluster journal holds (what retention counts). */
  size(): number {
    return this.known.size;
  }

  private warn(what: string, err: unknown): void {
    this.options.log?.(`task journal ${what}: ${err instanceof Error ? err.message : String(err)}`);
  }

  private schedule(task: Task): void {
    const name = taskConfigMapName(task.id);
    let w = this.writers.get(name);
    if (!w) this.writers.set(name, (w = { name, failures: 0 }));
    w.pending = task;
    if (task.status !== 'running') {
      clearTimeout(w.timer);
      w.timer = undefined;
      void this.write(w);
    } else if (!w.timer && !w.inFlight) {
      w.timer = setTimeout(() => void this.write(w), this.options.flushMs);
      w.timer.unref?.();
    }
  }

  private write(w: Writer): Promise<void> {
    if (w.inFlight) return w.inFlight;
    clearTimeout(w.timer);
    w.timer = undefined;
    const task = w.pending;
    if (!task) return Promise.resolve();
    w.pending = undefined;
    w.inFlight = this.writeOnce(w, task)
      .then(() => void (w.failures = 0))
      .catch((err: unknown) => {
        // Keep the newest state for the next attempt (a flaky apiserver must not lose the task's end).
        w.pending ??= task;
        w.failures++;
        if (w.failures === 1 || w.failures % 10 === 0) this.warn(`write of ${task.id} (attempt ${w.failures})`, err);
      })
      .finally(() => {
        w.inFlight = undefined;
        if (this.abort.signal.aborted && w.failures > 0) return; // closing: the final flush gave up on it
        if (w.pending) {
          const backoff = w.failures ? Math.min(30_000, 250 * 2 ** w.failures) : 0;
          const later = Math.max(backoff, w.pending.status === 'running' ? this.options.flushMs : 0);
          w.timer = setTimeout(() => void this.write(w), later);
          w.timer.unref?.();
        } else if (task.status !== 'running') this.writers.delete(w.name);
      });
    return w.inFlight;
  }

  private async writeOnce(w: Writer, task: Task): Promise<void> {
    const { namespace, identity } = this.options;
    const labels = { [TASK_STATUS_LABEL]: task.status };
    for (let attempt = 0; attempt < 5; attempt++) {
      this.requests++;
      try {
        const written = w.rv
          ? await this.cluster.patch('ConfigMap', namespace, w.name, {
              metadata: { resourceVersion: w.rv, labels },
              data: taskData(task),
            })
          : await this.cluster.create('ConfigMap', {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: {
                name: w.name,
                namespace,
                labels: { 'app.kubernetes.io/managed-by': 'corral', [JOURNAL_LABEL]: 'task', ...labels },
                annotations: { [TASK_REPLICA_ANNOTATION]: identity },
              },
              data: taskData(task),
            });
        w.rv = written.metadata.resourceVersion;
        return;
      } catch (err) {
        if (w.rv && err instanceof CorralError && err.code === 'NOT_FOUND') {
          w.rv = undefined; // deleted under us (by hand, or retention racing a long task): write it anew
          continue;
        }
        if (!isConflict(err)) throw err;
        // Someone else wrote it: a survivor that took us for gone. Its end stands; otherwise write over it.
        this.requests++;
        const current = await this.cluster.fetch('ConfigMap', namespace, w.name);
        const theirs = current && taskFromConfigMap(current);
        if (theirs && theirs.status !== 'running') {
          this.journal.adopt(theirs);
          w.pending = undefined;
          return;
        }
        w.rv = current?.metadata.resourceVersion;
      }
    }
    throw new CorralError('CONFLICT', `task ${task.id} kept changing under 5 attempts to write it`);
  }

  private take(cm: KObject, deleted: boolean): void {
    const name = cm.metadata.name ?? '';
    if (deleted) {
      const k = this.known.get(name);
      this.known.delete(name);
      if (k) this.journal.forget(k.id);
      return;
    }
    const task = taskFromConfigMap(cm);
    if (!task) return;
    this.known.set(name, {
      id: task.id,
      owner: cm.metadata.annotations?.[TASK_REPLICA_ANNOTATION] ?? '',
      rv: cm.metadata.resourceVersion ?? '',
      task,
    });
    this.journal.adopt(task);
  }

  /** List, then watch from the list's version; start over after an expired version or a failure (with back-off). */
  private follow(): Promise<void> {
    const { namespace } = this.options;
    const labelSelector = `${JOURNAL_LABEL}=task`;
    const signal = this.abort.signal;
    let answered: (() => void) | undefined;
    const first = new Promise<void>((r) => (answered = r));
    const loop = async () => {
      let backoffMs = 0;
      while (!signal.aborted) {
        let delivered = false;
        let since = Number.POSITIVE_INFINITY;
        try {
          const page = await this.cluster.listPage('ConfigMap', { namespace, labelSelector });
          const names = new Set(page.items.map((cm) => cm.metadata.name ?? ''));
          for (const name of [...this.known.keys()]) if (!names.has(name)) this.take({ metadata: { name } }, true);
          const byAge = [...page.items].sort((a, b) =>
            (taskFromConfigMap(a)?.startedAt ?? '').localeCompare(taskFromConfigMap(b)?.startedAt ?? ''),
          );
          for (const cm of byAge) this.take(cm, false);
          answered?.();
          since = Date.now();
          await this.cluster.watch(
            'ConfigMap',
            { namespace, labelSelector, resourceVersion: page.resourceVersion },
            (change) => {
              delivered = true;
              this.take(change.object, change.type === 'DELETED');
            },
            signal,
          );
        } catch (err) {
          answered?.();
          if (!signal.aborted) this.warn('watch', err);
        }
        const failed = !delivered && Date.now() - since < 1000;
        backoffMs = failed ? Math.min(5_000, Math.max(500, backoffMs * 2)) : 0;
        if (!signal.aborted && backoffMs) await abortableSleep(backoffMs, signal);
      }
    };
    void loop();
    return first;
  }

  /**
   * Marks running tasks whose replica is gone (its heartbeat Lease missing or run out). Every replica looks; the
   * resourceVersion precondition lets exactly one write win.
   */
  async reap(): Promise<number> {
    const running = [...this.known.entries()].filter(
      ([, k]) => k.task.status === 'running' && k.owner !== this.options.identity,
    );
    const leases = await this.cluster.fetchList('Lease', {
      namespace: this.options.namespace,
      labelSelector: REPLICA_LABEL,
    });
    // Observe every replica's lease on every round, so expiry is measured from the first unchanged sighting.
    const alive = new Set<string>();
    for (const lease of leases) {
      const name = lease.metadata.name ?? '';
      if (!this.observer.expired(name, lease.spec as LeaseSpec)) alive.add(name);
    }
    let marked = 0;
    for (const [name, k] of running) {
      if (alive.has(replicaLeaseName(k.owner))) continue;
      const ended = new Date().toISOString();
      const task: Task = {
        ...k.task,
        status: 'error',
        error: INTERRUPTED,
        endedAt: ended,
        log: [k.task.log, `${ended.slice(11, 19)} error: ${INTERRUPTED}`].filter(Boolean).join('\n'),
      };
      try {
        await this.cluster.patch('ConfigMap', this.options.namespace, name, {
          metadata: { resourceVersion: k.rv, labels: { [TASK_STATUS_LABEL]: 'error' } },
          data: taskData(task),
        });
        marked++;
        this.options.log?.(`task ${k.id} of ${k.owner} marked ${INTERRUPTED}`);
      } catch (err) {
        if (!isConflict(err)) throw err; // another survivor, or the owner itself, wrote first
      }
    }
    // Heartbeats of replicas that are gone and own no running task are deleted (any replica may).
    for (const lease of leases) {
      const name = lease.metadata.name ?? '';
      if (alive.has(name)) continue;
      const holder = (lease.spec as LeaseSpec | undefined)?.holderIdentity ?? '';
      if (![...this.known.values()].some((k) => k.owner === holder && k.task.status === 'running')) {
        await this.cluster.remove('Lease', this.options.namespace, name).catch(() => false);
        this.observer.forget(name);
      }
    }
    return marked;
  }

  /**
   * Leader only: deletes finished tasks beyond the newest `retainCount` or older than `retainDays`. The cut is
   * counted on a fresh list of the journal, never on this replica's watch cache: the cache trails the cluster by
   * the tasks other replicas wrote a moment ago, and a cut counted on it keeps that many too many (the retention
   * test once ended at 1,001 of 1,000 that way). Tasks written after the list are newer than every victim, so they
   * only ever make the next round's cut, never this one's wrong.
   */
  async prune(now = Date.now()): Promise<number> {
    this.requests++;
    const page = await this.cluster.listPage('ConfigMap', {
      namespace: this.options.namespace,
      labelSelector: `${JOURNAL_LABEL}=task`,
    });
    const victims = retentionVictims(
      page.items.flatMap((cm) => {
        const task = taskFromConfigMap(cm);
        return task ? [{ name: cm.metadata.name ?? '', task }] : [];
      }),
      { retainCount: this.options.retainCount, retainDays: this.options.retainDays, now },
    );
    let removed = 0;
    for (const name of victims) {
      if (this.abort.signal.aborted) break;
      this.requests++;
      if (await this.cluster.remove('ConfigMap', this.options.namespace, name)) removed++;
    }
    return removed;
  }
}

/**
 * The journal entries retention deletes: finished tasks beyond the newest `retainCount` (running tasks count
 * toward it but are never deleted) or started more than `retainDays` ago. Ties in start time keep the name order,
 * so every replica cuts the same way.
 */
export function retentionVictims(
  entries: readonly { name: string; task: Task }[],
  limits: { retainCount: number; retainDays: number; now: number },
): string[] {
  const finished = entries
    .filter((e) => e.task.status !== 'running')
    .sort((a, b) => b.task.startedAt.localeCompare(a.task.startedAt) || b.name.localeCompare(a.name));
  const running = entries.length - finished.length;
  const cutoff = limits.now - limits.retainDays * 86_400_000;
  return finished
    .filter((e, i) => i + running >= limits.retainCount || Date.parse(e.task.startedAt) < cutoff)
    .map((e) => e.name);
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref?.();
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
