/**
 * What a finished move changes beyond the guest itself: its pool membership (ADR-0008). Called once by a move's
 * commit after it succeeded (VMs: move-commit.ts; CTs may call it the same way), never on a rollback.
 *
 * Pools are Corral's own and live in the default cluster's ConfigMap (pools-store.ts), members named by ref. The
 * moved instance is a new ref (`kubevirt/<to context>/<ns>/<name>`), so it is filed in the pool the source was in;
 * with `deleteSource` the source's ref leaves that pool, otherwise both stay (two instances, one pool). The write
 * is the pool store's read-modify-write under a resourceVersion precondition, so a concurrent pool edit is never
 * lost. A failure here does not undo the move: the task logs it and how to file the VM by hand.
 */
import { describeError } from '../errors';
import type { MovePlan } from '../schemas/move';
import type { DomainDeps } from './deps';
import { formatRef, type MemberRef } from './pools-path';
import { FolderStore, type FolderDoc } from './pools-store';
import type { TaskHandle } from './tasks';

export interface MoveOutcome {
  source: MemberRef;
  destination: MemberRef;
  /** The source was deleted (or its delete started): its ref leaves the pool. */
  sourceDeleted: boolean;
}

/** What `followPool` did to the pools document: nothing (the source was in no pool), or the pool and the change. */
export type PoolChange =
  | { kind: 'none' }
  | { kind: 'filed'; path: string; added: boolean; removed: boolean }
  | { kind: 'elsewhere'; path: string; other: string; removed: boolean };

/** Where a ref is filed ('' for nowhere). */
function poolOf(doc: FolderDoc, ref: string): string {
  for (const [path, f] of Object.entries(doc)) if (f.members.includes(ref)) return path;
  return '';
}

/**
 * The pure part: files `to` in the pool `from` is in (mutating `doc`), and with `dropSource` takes `from` out.
 * A `to` already filed in another pool (a stale ref of an earlier VM of that name) stays where it is, since an
 * instance is in one pool at most.
 */
export function followPool(doc: FolderDoc, from: string, to: string, dropSource: boolean): PoolChange {
  const path = poolOf(doc, from);
  if (!path) return { kind: 'none' };
  const folder = doc[path]!;
  const removed = dropSource && from !== to;
  if (removed) folder.members = folder.members.filter((r) => r !== from);
  const other = poolOf(doc, to);
  if (other && other !== path) return { kind: 'elsewhere', path, other, removed };
  const added = other === '';
  if (added) folder.members.push(to);
  return { kind: 'filed', path, added, removed };
}

/** The cluster whose ConfigMap holds the pools: the default (first served) one. */
function poolsHome(deps: DomainDeps): DomainDeps {
  return deps.peers?.all()[0] ?? deps;
}

/**
 * After a successful move: the moved instance joins the source's pool (and the source leaves it when deleted),
 * logged on the move's task. Never throws.
 */
export async function settleMovedPool(deps: DomainDeps, task: TaskHandle, outcome: MoveOutcome): Promise<void> {
  const from = formatRef(outcome.source);
  const to = formatRef(outcome.destination);
  try {
    const change = await new FolderStore(poolsHome(deps)).update((doc) =>
      followPool(doc, from, to, outcome.sourceDeleted),
    );
    if (change.kind === 'none') return;
    const left = change.removed ? `; ${from} removed from it` : '';
    task.log(
      change.kind === 'elsewhere'
        ? `pool: ${to} is already in pool '${change.other}', so it was not added to '${change.path}'${left}`
        : `pool: ${to} ${change.added ? 'added to' : 'already in'} pool '${change.path}'${left}`,
    );
  } catch (err) {
    task.log(`pool: could not file ${to} in the source's pool: ${describeError(err)}; add it by hand`);
  }
}

/**
 * The last step of a move that has happened: the source is kept (stopped) or, with `deleteSource`, deleted through
 * `remove` (a failure there leaves a finished move and says so); the pool follows (settleMovedPool) and the task
 * ends done. `noun` names the guest in the log ('VM' or 'CT').
 */
export async function settleSource(
  deps: DomainDeps,
  task: TaskHandle,
  plan: Pick<MovePlan, 'source' | 'destination' | 'deleteSource'>,
  noun: 'VM' | 'CT',
  remove: () => Promise<{ task: string }>,
): Promise<void> {
  const { source, destination } = plan;
  const what = `the source ${noun} ${source.namespace}/${source.name}`;
  let sourceDeleted = false;
  if (plan.deleteSource) {
    try {
      const removed = await remove();
      task.log(`deleting ${what} in ${source.context} (task ${removed.task})`);
      sourceDeleted = true;
    } catch (err) {
      task.log(`the ${noun} moved, but the source could not be deleted: ${describeError(err)}; delete it by hand`);
    }
  } else task.log(`${what} stays in ${source.context}, stopped`);
  await settleMovedPool(deps, task, { source, destination, sourceDeleted });
  task.done(`moved ${noun === 'CT' ? 'CT ' : ''}${formatRef(source)} to ${formatRef(destination)}`);
}
