/**
 * `/nodes/{node}/qemu/{vmid}/cloudinit`: the settings with current and pending values (GET), "Regenerate image"
 * (PUT), and `cloudinit/dump?type=user|network|meta` — the text the guest reads. The keys themselves are set through
 * the config endpoints (cloudinit-params.ts); the domain (vm-cloudinit.ts) does the work.
 */
import {
  MASKED_PASSWORD,
  dumpCloudInit,
  pveCloudInitItems,
  readCloudInit,
  regenerateCloudInit,
} from '@/server/domain/vm-cloudinit';
import { hasPrivilege } from '../auth/roles';
import { cloudInitError } from '../cloudinit-params';
import { corral } from '../errors';
import { onlyParams } from '../qemu-params';
import { paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { VM_AUDIT, adoptLegacyKeys, resolve } from './qemu-common';

async function items(ctx: EndpointContext): Promise<Record<string, unknown>[]> {
  onlyParams(ctx.args, []);
  const vm = resolve(ctx);
  await adoptLegacyKeys(ctx, vm);
  const state = await corral(readCloudInit(ctx.state.services.deps, vm.ref.namespace, vm.ref.name));
  return pveCloudInitItems(state).map((i) => ({
    key: i.key,
    ...(i.value !== undefined ? { value: i.value } : {}),
    ...(i.pending !== undefined ? { pending: i.pending } : {}),
    ...(i.delete ? { delete: 1 } : {}),
  }));
}

async function dump(ctx: EndpointContext): Promise<string> {
  onlyParams(ctx.args, ['type']);
  const type = ctx.args.requireString('type');
  if (type !== 'user' && type !== 'network' && type !== 'meta')
    throw paramError({ type: `value '${type}' does not have a value in the enumeration 'user, network, meta'` });
  const vm = resolve(ctx);
  await adoptLegacyKeys(ctx, vm);
  const text = await corral(
    dumpCloudInit(ctx.state.services.deps, vm.ref.namespace, vm.ref.name, type).catch((err: unknown) => {
      throw cloudInitError(err);
    }),
  );
  // VM.Audit may read the dump; the password's hash only who may set it (VM.Config.Cloudinit).
  return hasPrivilege(ctx.principal.role, 'VM.Config.Cloudinit')
    ? text
    : text.replace(/^password: .*$/m, `password: ${MASKED_PASSWORD}`);
}

async function regenerate(ctx: EndpointContext): Promise<null> {
  onlyParams(ctx.args, []);
  const vm = resolve(ctx);
  await adoptLegacyKeys(ctx, vm);
  await corral(
    regenerateCloudInit(ctx.state.services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name).catch(
      (err: unknown) => {
        throw cloudInitError(err);
      },
    ),
  );
  return null;
}

export function registerCloudInit(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/cloudinit', { privilege: VM_AUDIT(), handle: items });
  define(table, 'PUT', '/nodes/{node}/qemu/{vmid}/cloudinit', {
    privilege: VM_AUDIT('VM.Config.Cloudinit'),
    handle: regenerate,
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/cloudinit/dump', { privilege: VM_AUDIT(), handle: dump });
}
