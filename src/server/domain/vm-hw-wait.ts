/** Waiting for the cluster inside a hardware task: on cache events for one VM, or for another task to end. */
import type { Task } from '../schemas/tasks';
import type { CachedKind } from './cluster-port';
import type { DomainDeps } from './deps';

/**
 * Resolves when `probe` answers `true`; rejects with its message when it answers a string (a failure), or when
 * `timeoutMs` passes. The probe runs at once and after every cache change of `kinds` in `namespace`.
 */
export function waitFor(
  deps: DomainDeps,
  namespace: string,
  kinds: readonly CachedKind[],
  probe: () => boolean | string,
  what: string,
  timeoutMs = deps.config.waitTimeoutMs,
): Promise<void> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      unsubscribe();
      clearTimeout(timer);
      if (err) reject(err);
      else resolve();
    };
    const check = () => {
      let verdict: boolean | string;
      try {
        verdict = probe();
      } catch (err) {
        settle(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      if (verdict === true) settle();
      else if (typeof verdict === 'string') settle(new Error(verdict));
    };
    const unsubscribe = deps.cluster.onChange((e) => {
      if (kinds.includes(e.kind) && e.object.metadata.namespace === namespace) check();
    });
    const timer = setTimeout(
      () => settle(new Error(`${what} did not happen within ${Math.round(timeoutMs / 1000)}s`)),
      timeoutMs,
    );
    check();
  });
}

/** The journal entry of task `id` once it has ended (done or error). */
export function taskEnded(deps: DomainDeps, id: string): Promise<Task> {
  return new Promise((resolve) => {
    let ended = false;
    const check = (t: Task | undefined): boolean => {
      if (ended || !t || t.id !== id || t.status === 'running') return false;
      ended = true;
      resolve(t);
      return true;
    };
    const unsubscribe = deps.journal.subscribe((t) => {
      if (check(t)) unsubscribe();
    });
    if (check(deps.journal.get(id))) unsubscribe();
  });
}
