/**
 * Bulk actions over a mixed selection of VMs and CTs (the Datacenter table's Start/Stop/Restart/Delete): each
 * guest goes through the same domain operation its own route uses, a few at a time, and every guest gets its own
 * result — a refusal (409 "CT tailvm/x is Stopped") is that guest's answer, not the whole request's. The run is
 * itself a task whose log has one line per guest, so the Tasks panel shows what a bulk action did.
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
  results: BulkItemResult[];
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

export async function runBulk(
  deps: DomainDeps,
  caller: Caller,
  action: BulkAction,
  targets: readonly BulkTarget[],
): Promise<BulkOutcome> {
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
  const results = new Array<BulkItemResult>(targets.length);
  let next = 0;
  let finished = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      const t = targets[i] as BulkTarget;
      let r: BulkItemResult;
      try {
        r = await runOne(deps, caller, action, t);
      } catch (err) {
        r = { ...t, ok: false, message: describeError(err), task: '' };
      }
      results[i] = r;
      bulk.log(`${r.ok ? 'ok' : 'failed'}: ${label(t)}: ${r.message}${r.task ? ` (task ${r.task})` : ''}`);
      bulk.progress((++finished / targets.length) * 100);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, targets.length) }, worker));
  const failed = results.filter((r) => !r.ok).length;
  const line = `${action}: ${results.length - failed} ok, ${failed} failed`;
  if (failed === 0) bulk.done(line);
  else bulk.fail(new Error(line));
  return { task: bulk.id, ok: results.length - failed, failed, results };
}
