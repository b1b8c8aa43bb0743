/** `/nodes/{node}/qemu/{vmid}/config|pending|resize|unlink`: reading and changing a VM's config. */
import { LABEL_TAG_PREFIX } from '@/server/domain/labels';
import {
  addDisks,
  changeHardware,
  changeNics,
  detachDisks,
  diskUnchanged,
  resizeDisk,
  type DiskFact,
  type DiskWish,
} from '@/server/domain/vm-hardware';
import { setStartOnBoot } from '@/server/domain/vm-hw-options';
import { checkCloudInit, setCloudInit } from '@/server/domain/vm-cloudinit';
import { cloudInitChange, cloudInitError } from '../cloudinit-params';
import { corral } from '../errors';
import { EXTRAS_ANNOTATION, parseExtras, serializeExtras } from '../extras';
import { Params, splitList } from '../params';
import {
  checkUnknown,
  mergeExtras,
  onbootOf,
  requireBridges,
  storedOptions,
  tagsOf,
  translateDisks,
  translateNets,
} from '../qemu-params';
import { parseDiskKey, parseDiskSpec, resolveResize, DiskSpecError, type DiskSpec } from '../translate/disk-spec';
import { parsePropertyString } from '../translate/property-string';
import { parseNetKey, parseNetSpec, NetSpecError } from '../translate/net-spec';
import { mibToBytes, parsePveSize } from '../translate/size';
import { assignSlots, vmConfig } from '../vm-view';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import {
  VM_AUDIT,
  resolve,
  upid,
  configContext,
  currentConfig,
  CORES,
  SOCKETS,
  MEMORY_MIB,
  requireVcpus,
} from './qemu-common';

// ---------------------------------------------------------------------------------------------------------------
// Config updates

/**
 * A re-sent drive spec for an attached disk, translated for the domain's "is this unchanged" check: the same
 * storage and volume as the config shows (`local-lvm:vm-100-disk-1[,…]`) or the same storage and size
 * (`local-lvm:10`), the same options, format raw. Undefined when it says something else (a change).
 */
function resentDisk(sent: string, shown: string, disk: DiskFact): DiskWish | undefined {
  let wanted: DiskSpec;
  let now: DiskSpec;
  try {
    wanted = parseDiskSpec(sent);
    now = parseDiskSpec(shown);
  } catch {
    return undefined;
  }
  const props = parsePropertyString(sent).props;
  if ((props.get('format') ?? 'raw') !== 'raw' || props.get('media') === 'cdrom') return undefined;
  if (now.source.kind !== 'volume' || JSON.stringify(sorted(wanted.options)) !== JSON.stringify(sorted(now.options)))
    return undefined;
  const shownSize = parsePropertyString(shown).props.get('size');
  const sentSize = props.get('size');
  // The size as the config prints it is the disk's size; another text is a stated size (bytes, T, M…).
  const stated = sentSize === undefined || sentSize === shownSize ? undefined : parsePveSize(sentSize);
  if (sentSize !== undefined && sentSize !== shownSize && stated === undefined) return undefined;
  const sizeBytes = stated === undefined ? {} : { sizeBytes: stated };
  if (wanted.source.kind === 'volume') {
    if (wanted.source.storage !== now.source.storage || wanted.source.volume !== now.source.volume) return undefined;
    return { claim: disk.claim, ...sizeBytes };
  }
  if (wanted.source.kind === 'new') {
    if (wanted.source.storage !== now.source.storage) return undefined;
    return { sizeBytes: wanted.source.sizeBytes };
  }
  return undefined;
}

const sorted = (o: Record<string, string>) =>
  Object.fromEntries(Object.entries(o).sort(([a], [b]) => a.localeCompare(b)));

async function updateConfig(ctx: EndpointContext): Promise<string | undefined> {
  const { state, args } = ctx;
  const { services } = state;
  const vm = resolve(ctx);
  const cctx = await configContext(ctx, vm);
  const current = vmConfig(cctx);
  const digest = args.string('digest');
  if (digest && digest !== current.digest)
    throw new ProxmoxError(500, 'detected modified configuration - file changed by other user? Try again.');
  checkUnknown(args);
  const name = args.string('name');
  if (name !== undefined && name !== vm.row.name)
    throw paramError({ name: `renaming is not supported: Kubernetes names are immutable (VM is '${vm.row.name}')` });
  const deletes = splitList(args.string('delete'));
  const onboot = onbootOf(args, deletes);
  const extras = parseExtras(cctx.hw.annotations[EXTRAS_ANNOTATION]);
  const slots = assignSlots(cctx.hw, extras);
  const slotToDisk = new Map([...slots.disks].map(([disk, slot]) => [slot, disk]));
  const slotToNic = new Map([...slots.nets].map(([nic, slot]) => [slot, nic]));

  // Validate everything first: nothing is written unless every key is acceptable.
  const newDiskKeys = args.keys().filter((k) => parseDiskKey(k) && !slotToDisk.has(k) && !extras.disks[k]?.empty);
  const changedDiskKeys = args.keys().filter((k) => parseDiskKey(k) && !newDiskKeys.includes(k));
  const ciChange = cloudInitChange(args, deletes);
  if (Object.keys(ciChange).length)
    await corral(
      checkCloudInit(services.deps, vm.ref.namespace, vm.ref.name, ciChange).catch((err: unknown) => {
        throw cloudInitError(err);
      }),
    );
  let ciRemove = false;
  for (const k of changedDiskKeys) {
    const disk = cctx.hw.disks.find((d) => d.name === slotToDisk.get(k));
    // Re-sending `<storage>:cloudinit` for the cloud-init drive a VM has is PVE's no-op.
    if (disk?.volume?.kind === 'cloudInit' && /^(file=)?[^:,]+:(vm-\d+-)?cloudinit(,|$)/.test(args.raw(k) ?? ''))
      continue;
    const wish = disk && resentDisk(args.raw(k) ?? '', String(current[k] ?? ''), disk);
    if (args.raw(k) !== current[k] && !(disk && wish && diskUnchanged(disk, wish)))
      throw paramError({
        [k]: `changing an attached disk is not supported (delete it, or use resize); current: ${String(current[k])}`,
      });
  }
  const netKeys = args.keys().filter((k) => parseNetKey(k) !== undefined);
  const netExtras = { ...extras.nets };
  const newNetKeys = netKeys.filter((k) => !slotToNic.has(k));
  const addedNets = translateNets(
    new Params(newNetKeys.map((k): [string, string] => [k, args.raw(k) ?? ''])),
    vm.ref.namespace,
    vm.ref.name,
    cctx.hw.nics.some((n) => n.network === 'pod' && !deletes.includes(slots.nets.get(n.name) ?? '')),
  );
  await requireBridges(services, vm.ref.namespace, addedNets.plans);
  for (const k of netKeys) {
    const nicName = slotToNic.get(k);
    if (!nicName) continue;
    let spec;
    try {
      spec = parseNetSpec(args.raw(k) ?? '');
    } catch (err) {
      if (err instanceof NetSpecError) throw paramError({ [k]: err.message });
      throw err;
    }
    const nic = cctx.hw.nics.find((n) => n.name === nicName);
    if (spec.mac && nic?.mac && spec.mac !== nic.mac.toUpperCase())
      throw paramError({ [k]: `changing the MAC address is not supported (current ${nic.mac.toUpperCase()})` });
    const bridge = spec.bridge ?? 'vmbr0';
    const network = bridge === 'vmbr0' ? 'pod' : bridge;
    if (nic && nic.network !== network)
      throw paramError({
        [k]: `moving a NIC to another network is not supported (it is on ${nic.network === 'pod' ? 'vmbr0' : nic.network})`,
      });
    netExtras[k] = { bridge, options: spec.options, ...(nic && nic.model !== spec.model ? { model: spec.model } : {}) };
  }
  const deleteDisks: string[] = [];
  const deleteNics: string[] = [];
  const options = { ...extras.options, ...storedOptions(args) };
  const diskExtras = { ...extras.disks };
  let clearTags = false;
  for (const key of deletes) {
    if (parseDiskKey(key)) {
      const disk = slotToDisk.get(key);
      if (disk && cctx.hw.disks.find((d) => d.name === disk)?.volume?.kind === 'cloudInit') {
        ciRemove = true;
        delete diskExtras[key];
      } else if (disk) deleteDisks.push(disk);
      else if (diskExtras[key]?.empty) delete diskExtras[key];
      else throw paramError({ delete: `no such disk '${key}'` });
    } else if (parseNetKey(key) !== undefined) {
      const nic = slotToNic.get(key);
      if (!nic) throw paramError({ delete: `no such NIC '${key}'` });
      deleteNics.push(nic);
      delete netExtras[key];
    } else if (key === 'tags') clearTags = true;
    else delete options[key]; // PVE ignores deleting a key that is not set
  }
  const added = await translateDisks(
    services,
    new Params(newDiskKeys.map((k): [string, string] => [k, args.raw(k) ?? ''])),
    vm.row.name,
    vm.ref.namespace,
  ).catch((err: unknown) => {
    if (err instanceof DiskSpecError) throw paramError({ disk: err.message });
    throw err;
  });
  for (const [k, ex] of Object.entries(added.extras)) diskExtras[k] = ex;
  if (added.cloudInit)
    diskExtras[added.cloudInit.key] = {
      ...diskExtras[added.cloudInit.key],
      options: diskExtras[added.cloudInit.key]?.options ?? {},
      volume: `vm-${vm.vmid}-cloudinit`,
    };
  for (const [k, ex] of Object.entries(addedNets.extras)) netExtras[k] = ex;

  const labels: Record<string, string | null> = {};
  if (args.has('tags') || clearTags) {
    const wanted = clearTags ? [] : tagsOf(args.string('tags'));
    for (const t of vm.row.tags) if (!wanted.includes(t)) labels[`${LABEL_TAG_PREFIX}${t}`] = null;
    for (const t of wanted) labels[`${LABEL_TAG_PREFIX}${t}`] = 'true';
  }
  const nextExtras = mergeExtras({ options: {}, disks: {}, nets: {} }, { options, disks: diskExtras, nets: netExtras });
  const cores = args.int('cores', CORES);
  const sockets = args.int('sockets', SOCKETS);
  if (cores !== undefined || sockets !== undefined) requireVcpus(cores ?? cctx.hw.cores, sockets ?? cctx.hw.sockets);
  const memory = args.int('memory', MEMORY_MIB);
  const caller = state.caller(ctx.principal);
  const taskIds: string[] = [];
  const cfgTask = await corral(
    changeHardware(services.deps, caller, vm.ref.namespace, vm.ref.name, {
      ...(cores !== undefined ? { cores } : {}),
      ...(sockets !== undefined ? { sockets } : {}),
      ...(memory !== undefined ? { memoryBytes: mibToBytes(memory) } : {}),
      labels,
      annotations: { [EXTRAS_ANNOTATION]: serializeExtras(nextExtras) },
    }),
  );
  if (cfgTask) taskIds.push(cfgTask);
  if (onboot !== undefined) {
    const bootTask = await corral(setStartOnBoot(services.deps, caller, vm.ref.namespace, vm.ref.name, onboot));
    if (bootTask) taskIds.push(bootTask);
  }
  if (added.plans.length)
    taskIds.push(await corral(addDisks(services.deps, caller, vm.ref.namespace, vm.ref.name, added.plans)));
  if (deleteDisks.length)
    taskIds.push(await corral(detachDisks(services.deps, caller, vm.ref.namespace, vm.ref.name, deleteDisks, false)));
  if (addedNets.plans.length || deleteNics.length)
    taskIds.push(
      await corral(changeNics(services.deps, caller, vm.ref.namespace, vm.ref.name, addedNets.plans, deleteNics)),
    );
  if (Object.keys(ciChange).length || added.cloudInit || ciRemove) {
    const ostype = args.string('ostype') ?? nextExtras.options.ostype;
    taskIds.push(
      await corral(
        setCloudInit(services.deps, caller, vm.ref.namespace, vm.ref.name, ciChange, {
          ...(added.cloudInit ? { drive: { disk: added.cloudInit.key, bus: added.cloudInit.bus } } : {}),
          ...(ciRemove ? { drive: 'remove' as const } : {}),
          ...(ostype ? { ostype } : {}),
        }).catch((err: unknown) => {
          throw cloudInitError(err);
        }),
      ),
    );
  }
  const last = taskIds[taskIds.length - 1];
  return last ? upid(ctx, last) : undefined;
}

async function resize(ctx: EndpointContext): Promise<string> {
  const vm = resolve(ctx);
  const { args, state } = ctx;
  const key = args.requireString('disk');
  const size = args.requireString('size');
  const cctx = await configContext(ctx, vm);
  const slots = assignSlots(cctx.hw, parseExtras(cctx.hw.annotations[EXTRAS_ANNOTATION]));
  const diskName = [...slots.disks].find(([, slot]) => slot === key)?.[0];
  const disk = cctx.hw.disks.find((d) => d.name === diskName);
  if (!disk) throw paramError({ disk: `no such disk '${key}'` });
  let target: number;
  try {
    target = resolveResize(disk.sizeBytes ?? 0, size);
  } catch (err) {
    if (err instanceof DiskSpecError) throw paramError({ size: err.message });
    throw err;
  }
  const taskId = await corral(
    resizeDisk(state.services.deps, state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, disk.name, target),
    'disk',
  );
  return upid(ctx, taskId);
}

async function unlink(ctx: EndpointContext): Promise<null> {
  const vm = resolve(ctx);
  const ids = splitList(ctx.args.requireString('idlist'));
  const cctx = await configContext(ctx, vm);
  const slots = assignSlots(cctx.hw, parseExtras(cctx.hw.annotations[EXTRAS_ANNOTATION]));
  const names = ids.map((id) => {
    const name = [...slots.disks].find(([, slot]) => slot === id)?.[0];
    if (!name) throw paramError({ idlist: `no such disk '${id}'` });
    return name;
  });
  await corral(
    detachDisks(
      ctx.state.services.deps,
      ctx.state.caller(ctx.principal),
      vm.ref.namespace,
      vm.ref.name,
      names,
      ctx.args.bool('force') ?? false,
    ),
  );
  return null;
}

export function registerQemuConfig(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/config', {
    privilege: VM_AUDIT(),
    handle: (ctx) => currentConfig(ctx, resolve(ctx)),
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/pending', {
    privilege: VM_AUDIT(),
    handle: async (ctx) =>
      Object.entries(await currentConfig(ctx, resolve(ctx)))
        .filter(([k]) => k !== 'digest')
        .map(([key, value]) => ({ key, value })),
  });
  define(table, 'PUT', '/nodes/{node}/qemu/{vmid}/config', {
    privilege: VM_AUDIT('VM.Config.Options'),
    handle: async (ctx) => {
      await updateConfig(ctx);
      return null;
    },
  });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/config', {
    privilege: VM_AUDIT('VM.Config.Options'),
    handle: async (ctx) => {
      const id = await updateConfig(ctx);
      if (id) return id;
      // Nothing changed: PVE still answers with a task; give one that ends OK at once.
      const vm = resolve(ctx);
      const task = ctx.state.services.journal.start(
        'config',
        `${vm.ref.namespace}/${vm.ref.name}`,
        ctx.state.caller(ctx.principal).identity.login,
      );
      task.done('no changes');
      return upid(ctx, task.id);
    },
  });
  define(table, 'PUT', '/nodes/{node}/qemu/{vmid}/resize', { privilege: VM_AUDIT('VM.Config.Disk'), handle: resize });
  define(table, 'PUT', '/nodes/{node}/qemu/{vmid}/unlink', { privilege: VM_AUDIT('VM.Config.Disk'), handle: unlink });
}
