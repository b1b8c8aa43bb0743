/**
 * `/nodes/{node}/lxc/{vmid}/config`: a container's config in PVE's keys, and changing it. `cores` and `memory` go
 * through the domain's CT scale (recorded on the data volume; a running CT gets a new pod with the new size),
 * `tags` and `description` through its notes. Keys that name something a pod cannot change are refused with a 400
 * naming each one; re-sending a key with the value the config shows is a no-op, as in PVE.
 */
import { ctSpecRecorded, scaleCt, setCtNotes } from '@/server/domain/ct-ops';
import { taskEnded } from '@/server/domain/vm-hw-wait';
import { corral } from '../errors';
import { splitList } from '../params';
import { tagsOf } from '../qemu-params';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { CORES, MEMORY_MIB, VM_AUDIT } from './qemu-common';
import { ctUpid, currentCtConfig, resolveCt } from './lxc-common';
import { checkNet0, NOT_IN_SCHEMA, unsupportedCtKey } from '../lxc-params';

/** Keys a config write may carry. Shown-only keys are accepted when they repeat the config's value. */
const SHOWN_ONLY = ['hostname', 'arch', 'ostype', 'unprivileged', 'rootfs', 'mp0', 'net0', 'swap', 'cpulimit'];
const WRITABLE = ['cores', 'memory', 'tags', 'description', 'delete', 'digest'];

/** Memory in MiB as the domain records it: `2Gi` when whole GiB, else `1536Mi`. */
export function memoryQuantity(mib: number): string {
  return mib % 1024 === 0 ? `${mib / 1024}Gi` : `${mib}Mi`;
}

/**
 * Applies a config write. `sync` (PUT) answers once every change has taken effect, a running CT's new pod included;
 * otherwise (POST) once the new size is recorded, the task carrying on.
 */
async function updateConfig(ctx: EndpointContext, sync: boolean): Promise<string[]> {
  const { state, args } = ctx;
  const ct = resolveCt(ctx);
  const current = await currentCtConfig(ctx, ct);
  const digest = args.string('digest');
  if (digest && digest !== current.digest)
    throw new ProxmoxError(500, 'detected modified configuration - file changed by other user? Try again.');

  // Validate every key first: nothing is written unless all of them are acceptable.
  // Entries, not assignments: a key such as `__proto__` must become an error like any other.
  const errors: [string, string][] = [];
  const cores = args.int('cores', CORES);
  const memory = args.int('memory', MEMORY_MIB);
  for (const key of args.keys()) {
    if (WRITABLE.includes(key)) continue;
    const sent = args.raw(key) ?? '';
    const shown = current[key];
    if (SHOWN_ONLY.includes(key)) {
      if (shown !== undefined && sent === String(shown)) continue;
      if (key === 'cpulimit' && Number(sent) === (cores ?? ct.ct.spec.cpu)) continue;
      if (key === 'swap' && sent === '0') continue;
      if (key === 'net0') {
        checkNet0(sent);
        continue;
      }
      const why =
        key === 'hostname'
          ? `renaming is not supported: Kubernetes names are immutable (CT is '${String(shown)}')`
          : key === 'swap'
            ? 'not supported: a container pod runs without swap (give swap=0)'
            : key === 'cpulimit'
              ? `a Corral container's CPU limit is its core count (cores=${cores ?? ct.ct.spec.cpu})`
              : `cannot be changed${shown === undefined ? '' : ` (it is ${String(shown)})`}: Corral keeps a container's ${key === 'rootfs' || key === 'mp0' ? 'volume and its size' : key} as created`;
      errors.push([key, why]);
      continue;
    }
    const reason = unsupportedCtKey(key);
    errors.push([key, reason ? `not supported: ${reason}` : NOT_IN_SCHEMA]);
  }
  const deletes = splitList(args.string('delete'));
  const undeletable = deletes.filter((k) => k !== 'tags' && k !== 'description');
  if (undeletable.length)
    errors.push([
      'delete',
      `cannot delete ${undeletable.map((k) => `'${k}'`).join(', ')}: only tags and description can be removed from a Corral container`,
    ]);
  if (errors.length) throw paramError(Object.fromEntries(errors));

  const { services } = state;
  const caller = state.caller(ctx.principal);
  const { namespace, name } = ct.ref;
  const taskIds: string[] = [];
  const notes = {
    ...(args.has('tags') || deletes.includes('tags')
      ? { tags: deletes.includes('tags') ? [] : tagsOf(args.string('tags')) }
      : {}),
    ...(args.has('description') || deletes.includes('description')
      ? { description: deletes.includes('description') ? '' : (args.string('description') ?? '') }
      : {}),
  };
  if (Object.keys(notes).length) taskIds.push(await corral(setCtNotes(services.deps, caller, namespace, name, notes)));

  const mem = memory === undefined ? undefined : memoryQuantity(memory);
  const change = {
    ...(cores !== undefined && cores !== ct.ct.spec.cpu ? { cpu: cores } : {}),
    ...(mem !== undefined && mem !== ct.ct.spec.mem ? { mem } : {}),
  };
  if (Object.keys(change).length) {
    const { task } = await corral(async () => scaleCt(services.deps, caller, namespace, name, change));
    // A running CT gets a new pod with the new size (a pod's resources are fixed): PUT waits for it, as PVE's
    // synchronous write returns with the change applied; POST answers once the size is recorded (a read shows it).
    if (sync) await taskEnded(services.deps, task);
    else await ctSpecRecorded(services.deps, namespace, name, change, task);
    const outcome = services.journal.get(task);
    if (outcome?.status === 'error') throw new ProxmoxError(500, `CT ${ct.vmid}: ${outcome.error}`);
    taskIds.push(task);
  }
  return taskIds;
}

export function registerLxcConfig(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/lxc/{vmid}/config', {
    privilege: VM_AUDIT(),
    handle: (ctx) => currentCtConfig(ctx, resolveCt(ctx)),
  });
  // PVE's lxc config write is a synchronous PUT (`null`); POST is the asynchronous twin qemu has, answering a UPID.
  define(table, 'PUT', '/nodes/{node}/lxc/{vmid}/config', {
    privilege: VM_AUDIT('VM.Config.Options'),
    handle: async (ctx) => {
      await updateConfig(ctx, true);
      return null;
    },
  });
  define(table, 'POST', '/nodes/{node}/lxc/{vmid}/config', {
    privilege: VM_AUDIT('VM.Config.Options'),
    handle: async (ctx) => {
      const ids = await updateConfig(ctx, false);
      const ct = resolveCt(ctx);
      const last = ids[ids.length - 1];
      if (last) return ctUpid(ctx, last, ct);
      // Nothing changed: still a task, ending OK at once.
      const task = ctx.state.services.journal.start(
        'ct-config',
        `${ct.ref.namespace}/${ct.ref.name}`,
        ctx.state.caller(ctx.principal).identity.login,
      );
      task.done('no changes');
      return ctUpid(ctx, task.id, ct);
    },
  });
}
