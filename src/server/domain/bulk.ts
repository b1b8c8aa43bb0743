/**
 * Bulk actions over a mixed selection of VMs and CTs (the Datacenter table's Start/Stop/Restart/Delete): each
 * guest goes through the same domain operation its own route uses, a few at a time, and every guest gets its own
 * result — a refusal (409 "CT tailvm/x is Stopped") is that guest's answer, not the whole request's. The run is
 * itself a task whose log has one line per guest, so the Tasks panel shows what a bulk action did.
 *
 * Every cluster request goes through the cluster's rate limiter (cluster/rate-limiter.ts), so a 1,000-guest run
 * takes about 1,000 / QPS seconds rather than flooding the apiserver; meanwhile the run can be read (`bulkRun`:
 * counts while it runs, every result once it ends) and cancelled (`cancelBulk`): guests not yet sent are reported
 * as cancelled, the few already in flight finish.
 */
import type { BulkAction } from '../schemas/bulk';
import { CorralError, describeError } from '../errors';
import type { Caller, DomainDeps } from './deps';
import { ctAction, deleteCt } from './ct-ops';
import { vmAction } from './vm-actions';
import { deleteVm } from './vm-delete';

export type GuestType = 'vm' | 'ct';

export interface BulkTarget {
  type: GuestType;
  namespace: string;
  name: string;
}

export interface BulkItemResult extends BulkTarget {
  ok: boolean;
  /** What happened ("start accepted", "deleted 3 objects") or why not (the refusal's own message). */
  message: string;
  /** The guest's own task, '' when the request was refused before one existed. */
  task: string;
}

export interface BulkOutcome {
  task: string;
  ok: number;
  failed: number;
  /** Guests never sent because the run was cancelled first (each also a failed result saying so). */
  cancelled: number;
  results: BulkItemResult[];
}

export type BulkStatus = 'running' | 'done' | 'cancelled';

/** What `GET /api/bulk/runs/{task}` answers: counts while the run goes on, every result once it has ended. */
export interface BulkRunView {
  task: string;
  action: BulkAction;
  status: BulkStatus;
  total: number;
  finished: number;
  ok: number;
  failed: number;
  cancelled: number;
  results: BulkItemResult[];
}

interface BulkRun {
  action: BulkAction;
  targets: readonly BulkTarget[];
  results: (BulkItemResult | undefined)[];
  finished: number;
  ok: number;
  cancelled: number;
  status: BulkStatus;
  abort: AbortController;
  log: (line: string) => void;
  done: Promise<BulkOutcome>;
}

/** Runs per services instance (one cluster's deps); the newest finished ones are kept for reading back. */
const RUNS = new WeakMap<DomainDeps, Map<string, BulkRun>>();
const KEEP_FINISHED = 20;

function runsOf(deps: DomainDeps): Map<string, BulkRun> {
  let runs = RUNS.get(deps);
  if (!runs) RUNS.set(deps, (runs = new Map()));
  return runs;
}

function forget(runs: Map<string, BulkRun>): void {
  const finished = [...runs.entries()].filter(([, r]) => r.status !== 'running');
  for (const [id] of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) runs.delete(id);
}

/** How many guests are worked on at once: enough to overlap apiserver round trips, few enough to stay polite. */
const CONCURRENCY = 6;

const label = (t: BulkTarget) => `${t.type.toUpperCase()} ${t.namespace}/${t.name}`;

async function runOne(deps: DomainDeps, caller: Caller, action: BulkAction, t: BulkTarget): Promise<BulkItemResult> {
  if (t.type === 'ct') {
    if (action === 'delete') {
      const { task, removed } = await deleteCt(deps, caller, t.namespace, t.name);
      return { ...t, ok: true, message: `deleted ${removed.length} objects`, task };
    }
    const task = ctAction(deps, caller, t.namespace, t.name, action);
    return { ...t, ok: true, message: `${action} started`, task };
  }
  if (action === 'delete') {
    const { task, removed } = await deleteVm(deps, caller, t.namespace, t.name);
    return { ...t, ok: true, message: `deleted ${removed.length} objects`, task };
  }
  const task = await vmAction(deps, caller, t.namespace, t.name, action);
  return { ...t, ok: true, message: `${action} accepted`, task };
}

/**
 * Starts a bulk run and returns its task id at once; `done` settles with the outcome. Duplicate targets are a 400
 * before anything starts.
 */
export function startBulk(
  deps: DomainDeps,
  caller: Caller,
  action: BulkAction,
  targets: readonly BulkTarget[],
): { task: string; done: Promise<BulkOutcome> } {
  const seen = new Set<string>();
  for (const t of targets) {
    const key = `${t.type}:${t.namespace}/${t.name}`;
    if (seen.has(key)) throw new CorralError('BAD_REQUEST', `targets: ${label(t)} is listed twice`);
    seen.add(key);
  }
  const vms = targets.filter((t) => t.type === 'vm').length;
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  // The target reads "bulk/3-guests" so the task id stays URL-friendly; the first log line says what they are.
  const bulk = deps.journal.start(
    `bulk-${action}`,
    `bulk/${plural(targets.length, 'guest').replace(' ', '-')}`,
    caller.identity.login,
  );
  bulk.log(
    `${action} ${[vms ? plural(vms, 'VM') : '', targets.length > vms ? plural(targets.length - vms, 'CT') : ''].filter(Boolean).join(' and ')}`,
  );
  const run: BulkRun = {
    action,
    targets,
    results: new Array<BulkItemResult | undefined>(targets.length),
    finished: 0,
    ok: 0,
    cancelled: 0,
    status: 'running',
    abort: new AbortController(),
    log: (line) => bulk.log(line),
    done: undefined as unknown as Promise<BulkOutcome>,
  };
  const runs = runsOf(deps);
  runs.set(bulk.id, run);
  let next = 0;
  const settle = (i: number, r: BulkItemResult) => {
    run.results[i] = r;
    run.finished++;
    if (r.ok) run.ok++;
    bulk.progress((run.finished / targets.length) * 100);
  };
  const worker = async () => {
    while (next < targets.length && !run.abort.signal.aborted) {
      const i = next++;
      const t = targets[i] as BulkTarget;
      let r: BulkItemResult;
      try {
        r = await runOne(deps, caller, action, t);
      } catch (err) {
        r = { ...t, ok: false, message: describeError(err), task: '' };
      }
      bulk.log(`${r.ok ? 'ok' : 'failed'}: ${label(t)}: ${r.message}${r.task ? ` (task ${r.task})` : ''}`);
      settle(i, r);
    }
  };
  run.done = (async () => {
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, targets.length) }, worker));
    for (let i = next; i < targets.length; i++) {
      run.cancelled++;
      settle(i, { ...(targets[i] as BulkTarget), ok: false, message: 'cancelled before it was sent', task: '' });
    }
    const failed = run.finished - run.ok;
    const line = `${action}: ${run.ok} ok, ${failed - run.cancelled} failed${run.cancelled ? `, ${run.cancelled} cancelled` : ''}`;
    run.status = run.cancelled ? 'cancelled' : 'done';
    if (failed === 0) bulk.done(line);
    else bulk.fail(new Error(line));
    forget(runs);
    const results = run.results as BulkItemResult[];
    return { task: bulk.id, ok: run.ok, failed, cancelled: run.cancelled, results };
  })();
  return { task: bulk.id, done: run.done };
}

/** Runs the action on every target and answers when all are done (POST /api/bulk). */
export async function runBulk(
  deps: DomainDeps,
  caller: Caller,
  action: BulkAction,
  targets: readonly BulkTarget[],
): Promise<BulkOutcome> {
  return startBulk(deps, caller, action, targets).done;
}

function findRun(deps: DomainDeps, task: string): BulkRun {
  const run = runsOf(deps).get(task);
  if (!run) throw new CorralError('NOT_FOUND', `bulk task ${task} not found (finished runs are kept for a while only)`);
  return run;
}

export function bulkRun(deps: DomainDeps, task: string): BulkRunView {
  const run = findRun(deps, task);
  return {
    task,
    action: run.action,
    status: run.status,
    total: run.targets.length,
    finished: run.finished,
    ok: run.ok,
    failed: run.finished - run.ok,
    cancelled: run.cancelled,
    results: run.status === 'running' ? [] : (run.results as BulkItemResult[]),
  };
}

/** Stops sending the rest of a running bulk action; 409 when it has already ended. */
export function cancelBulk(deps: DomainDeps, caller: Caller, task: string): { task: string; pending: number } {
  const run = findRun(deps, task);
  if (run.status !== 'running' || run.abort.signal.aborted)
    throw new CorralError(
      'CONFLICT',
      `bulk task ${task} is ${run.status === 'running' ? 'already being cancelled' : run.status}`,
    );
  run.abort.abort();
  const pending = run.targets.length - run.finished;
  run.log(`cancelled by ${caller.identity.login} with ${pending} of ${run.targets.length} guests not done`);
  return { task, pending };
}
