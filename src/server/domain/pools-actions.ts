/**
 * `POST /api/folders/action`: one power action fanned out over a pool's members and its sub-pools' members, with a
 * result per member — `ok`, `skipped` with the reason (already in that state, missing, not applicable to a CT) or
 * `failed` with the error. Each member goes through the same domain operation as its own route (vmAction,
 * ctAction), a few at a time; the run is a task whose log has one line per member.
 */
import type { FolderAction, FolderActionOutput, FolderActionResult } from '../schemas/pools';
import { CorralError, describeError } from '../errors';
import type { VmAction } from '../schemas/vms';
import { depsFor, type Caller, type DomainDeps } from './deps';
import { ctAction, type CtAction } from './ct-ops';
import { podPhase } from './ct-rows';
import { checkPath, comparePaths, isWithin } from './pools-path';
import { resolveMember } from './pools';
import type { FolderStore } from './pools-store';
import { findCt } from './ct-rows';
import { refusal, vmAction } from './vm-actions';

const CONCURRENCY = 6;

const VM_ACTION: Record<FolderAction, VmAction> = {
  start: 'start',
  stop: 'stop',
  restart: 'restart',
  pause: 'pause',
  resume: 'unpause',
};

type Outcome = Pick<FolderActionResult, 'status' | 'reason' | 'error'>;

const skipped = (reason: string): Outcome => ({ status: 'skipped', reason });

/** A refusal for a state (409) is a skip: nothing was wrong, there was nothing to do. */
function outcomeOf(err: unknown): Outcome {
  if (err instanceof CorralError && err.code === 'CONFLICT') return skipped(err.message);
  return { status: 'failed', error: describeError(err) };
}

async function actOnVm(deps: DomainDeps, caller: Caller, ns: string, name: string, action: FolderAction) {
  const vm = deps.cluster.cache.get('VirtualMachine', ns, name);
  if (!vm) return skipped(`VM ${ns}/${name} no longer exists`);
  const why = refusal(VM_ACTION[action], vm, deps.cluster.cache.get('VirtualMachineInstance', ns, name));
  if (why) return skipped(why);
  await vmAction(deps, caller, ns, name, VM_ACTION[action]);
  return { status: 'ok' } as Outcome;
}

function actOnCt(deps: DomainDeps, caller: Caller, ns: string, name: string, action: FolderAction): Outcome {
  if (action === 'pause' || action === 'resume') return skipped(`a CT cannot be ${action}d (containers have no pause)`);
  const ct = findCt(deps, ns, name);
  if (!ct) return skipped(`CT ${ns}/${name} no longer exists`);
  const live = ct.pod !== undefined && !ct.pod.metadata.deletionTimestamp;
  if (action === 'start' && ct.pod) return skipped(`CT ${ns}/${name} is already ${podPhase(ct.pod)}`);
  if (action !== 'start' && !live) return skipped(`CT ${ns}/${name} is not running (${podPhase(ct.pod)})`);
  ctAction(deps, caller, ns, name, action as CtAction);
  return { status: 'ok' };
}

export async function runFolderAction(
  deps: DomainDeps,
  store: FolderStore,
  caller: Caller,
  path: string,
  action: FolderAction,
): Promise<FolderActionOutput> {
  checkPath(path);
  await store.start();
  const doc = await store.refresh();
  if (!doc[path]) throw new CorralError('NOT_FOUND', `pool '${path}' does not exist`);
  const targets = Object.keys(doc)
    .filter((p) => isWithin(p, path))
    .sort(comparePaths)
    .flatMap((pool) => doc[pool]!.members.map((ref) => ({ pool, ref })));
  const task = deps.journal.start(`pool-${action}`, `pool/${path}`, caller.identity.login);
  task.log(`${action} ${targets.length} member(s) of '${path}' and its sub-pools`);
  const results = new Array<FolderActionResult>(targets.length);
  let next = 0;
  let finished = 0;
  const worker = async () => {
    while (next < targets.length) {
      const i = next++;
      const { pool, ref } = targets[i]!;
      const m = resolveMember(deps, ref);
      // A member on another served cluster is acted on there.
      const at = depsFor(deps, m.context) ?? deps;
      let outcome: Outcome;
      try {
        if (m.missing) outcome = skipped(`missing: ${m.reason}`);
        else if (m.type === 'vm') outcome = await actOnVm(at, caller, m.namespace, m.name, action);
        else outcome = actOnCt(at, caller, m.namespace, m.name, action);
      } catch (err) {
        outcome = outcomeOf(err);
      }
      results[i] = { ref, pool, type: m.type, namespace: m.namespace, name: m.name, ...outcome };
      task.log(
        `${outcome.status}: ${ref}${outcome.reason ? `: ${outcome.reason}` : ''}${outcome.error ? `: ${outcome.error}` : ''}`,
      );
      task.progress((++finished / targets.length) * 100);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, targets.length) }, worker));
  const count = (s: FolderActionResult['status']) => results.filter((r) => r.status === s).length;
  const out = {
    path,
    action,
    task: task.id,
    ok: count('ok'),
    skipped: count('skipped'),
    failed: count('failed'),
    results,
  };
  const line = `${action}: ${out.ok} ok, ${out.skipped} skipped, ${out.failed} failed`;
  if (out.failed === 0) task.done(line);
  else task.fail(new Error(line));
  return out;
}
