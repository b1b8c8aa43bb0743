/** Tags are labels `corral.dev/tag.<tag>=true` on the VM, so `kubectl get vm -l corral.dev/tag.prod` selects them. */
import type { Caller, DomainDeps } from './deps';
import { LABEL_TAG_PREFIX } from './labels';
import { runAsTask } from './tasks';
import { requireVm } from './vm-actions';

export async function setTag(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  tag: string,
  on: boolean,
): Promise<{ tag: string; on: boolean }> {
  requireVm(deps, namespace, name);
  await runAsTask(deps.journal, on ? 'tag' : 'untag', `${namespace}/${name}`, caller.identity.login, async (task) => {
    // Merge patch: null removes the label, so removing an absent tag is a harmless no-op.
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { labels: { [`${LABEL_TAG_PREFIX}${tag}`]: on ? 'true' : null } },
    });
    task.done(`${on ? 'added' : 'removed'} tag ${tag}`);
  });
  return { tag, on };
}
