// The source side of a VM move, the same whether it goes to another cluster or to a PVE host: stop it, remembering
// how it ran, and start it again that way when the move rolls back; and the cache wait every move step uses.
import { CorralError, describeError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { sleep } from './deps';
import type { TaskHandle } from './tasks';
import { runStrategy, vmiActive } from './vm-facts';

/**
 * A move's first step for a VM: a running source is halted and waited for. Returns the runStrategy it ran with,
 * for restoreSource (`undefined`: it was not running and is not touched).
 */
export async function stopSource(
  deps: DomainDeps,
  task: TaskHandle,
  source: { namespace: string; name: string },
  vm: KObject,
  signal: AbortSignal,
): Promise<string | undefined> {
  const { namespace, name } = source;
  if (!vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name))) return undefined;
  const strategy = runStrategy(vm);
  await deps.cluster.patch('VirtualMachine', namespace, name, { spec: { runStrategy: 'Halted', running: null } });
  task.log(`stopping ${namespace}/${name} (it ran with runStrategy ${strategy})`);
  await until(
    deps,
    'the source to stop',
    () => (vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name)) ? undefined : true),
    signal,
  );
  task.log('source stopped');
  return strategy;
}

/**
 * A rollback's last step for a VM: started again with the runStrategy it ran with (`undefined`: it was not running,
 * so it was not touched), logged either way.
 */
export async function restoreSource(
  deps: DomainDeps,
  task: TaskHandle,
  source: { namespace: string; name: string },
  restoreStrategy: string | undefined,
): Promise<void> {
  const what = `${source.namespace}/${source.name}`;
  if (restoreStrategy === undefined) return task.log(`the source ${what} was not touched`);
  task.log(
    await deps.cluster
      .patch('VirtualMachine', source.namespace, source.name, { spec: { runStrategy: restoreStrategy, running: null } })
      .then(
        () => `started the source ${what} again (runStrategy ${restoreStrategy})`,
        (e: unknown) => `could not start the source again: ${describeError(e)}; start it by hand`,
      ),
  );
}

/**
 * Polls `probe` on `deps`'s cache until it returns true (it may throw to stop); bounded by the wait timeout, and
 * stopped by `signal` (rejecting with its reason).
 */
export async function until(
  deps: DomainDeps,
  what: string,
  probe: () => true | undefined,
  signal?: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + deps.config.waitTimeoutMs;
  for (;;) {
    signal?.throwIfAborted();
    if (probe()) return;
    if (Date.now() > deadline)
      throw new CorralError(
        'TIMEOUT',
        `gave up waiting for ${what} after ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
      );
    await sleep(Math.min(deps.config.pollMs, 250));
  }
}
