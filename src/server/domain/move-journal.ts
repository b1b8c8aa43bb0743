/**
 * A move in both clusters' journals. The move is one task in the source cluster's journal (its id is what the
 * commit answers); the destination cluster's journal gets a `move-in` task that follows it line for line — same
 * log, progress and end, and a cancel asked on either one cancels the move — so whoever looks at the destination's
 * tasks (its task panel, `GET /api/tasks?context=<to>`, its Proxmox task list) sees what is arriving and how it went.
 * Each entry names the other's id. A move within one cluster has one journal and one task.
 */
import type { DomainDeps } from './deps';
import { formatRef, type MemberRef } from './pools-path';
import type { TaskHandle } from './tasks';

export interface MirrorFacts {
  /** The destination's `namespace/name` (the mirror's target). */
  target: string;
  /** The source ref and the moving user, for the mirror's first line and caller. */
  from: string;
  caller: string;
}

/**
 * Starts the destination's `move-in` entry for `task` (a move out of `source` into `destination`) and returns a
 * handle that writes both. Without a second journal it returns `task` itself.
 */
export function mirrorInDestination(
  task: TaskHandle,
  source: DomainDeps,
  destination: DomainDeps,
  facts: MirrorFacts,
): TaskHandle {
  if (destination.journal === source.journal) return task;
  const from = source.cluster.info.context;
  const to = destination.cluster.info.context;
  const mirror = destination.journal.start('move-in', facts.target, facts.caller);
  mirror.log(`incoming move of ${facts.from} from ${from}; this entry follows task ${task.id} in ${from}'s journal`);
  task.log(`the move also shows in ${to}'s journal as task ${mirror.id}`);
  const both = [task, mirror];
  return {
    id: task.id,
    log: (line) => both.forEach((t) => t.log(line)),
    progress: (p) => both.forEach((t) => t.progress(p)),
    done: (line) => both.forEach((t) => t.done(line)),
    fail: (err) => both.forEach((t) => t.fail(err)),
    onCancel: (cancel) => {
      let ran = false;
      const once = (by: string) => {
        if (ran) return;
        ran = true;
        cancel(by);
      };
      const offs = both.map((t) => t.onCancel(once));
      return () => offs.forEach((off) => off());
    },
    get finished() {
      return task.finished;
    },
  };
}

/** What starting a move's task needs to know of its preflight. */
export interface MoveStart {
  plan: { source: MemberRef; destination: MemberRef };
  warnings: readonly string[];
  dropped: readonly string[];
}

/**
 * Starts a move's task `action` in the source's journal, mirrored into the destination's (mirrorInDestination):
 * `headline` first (said in the source's entry, whose mirror names it), then the preflight's warnings and what is
 * not carried over.
 */
export function startMoveTask(
  source: DomainDeps,
  destination: DomainDeps,
  action: string,
  caller: string,
  headline: string,
  preflight: MoveStart,
): TaskHandle {
  const { plan } = preflight;
  const started = source.journal.start(action, `${plan.source.namespace}/${plan.source.name}`, caller);
  started.log(headline);
  const task = mirrorInDestination(started, source, destination, {
    target: `${plan.destination.namespace}/${plan.destination.name}`,
    from: formatRef(plan.source),
    caller,
  });
  for (const w of preflight.warnings) task.log(`warning: ${w}`);
  for (const d of preflight.dropped) task.log(`not carried over: ${d}`);
  return task;
}
