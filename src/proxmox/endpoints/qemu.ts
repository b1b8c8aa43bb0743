/** `/nodes/{node}/qemu/…`: list, create, destroy, power, config, resize, unlink, template (agent: agent.ts). */
import { LABEL_TAG_PREFIX, LABEL_TEMPLATE, LABEL_VMID } from '@/server/domain/labels';
import {
  addDisks,
  changeHardware,
  changeNics,
  composeVm,
  detachDisks,
  diskUnchanged,
  resizeDisk,
  setTemplateFlag,
  sizedHardware,
  vmHardware,
  type DiskFact,
  type DiskWish,
  type VmBlueprint,
} from '@/server/domain/vm-hardware';
import { powerAction, type PowerAction } from '@/server/domain/vm-power';
import { setStartOnBoot, startOnBoot } from '@/server/domain/vm-hw-options';
import { cloneVm } from '@/server/domain/vm-clone';
import { vmRuntime } from '@/server/domain/vm-runtime';
import { corral, corralSync } from '../errors';
import { EXTRAS_ANNOTATION, parseExtras, serializeExtras } from '../extras';
import { Params, splitList } from '../params';
import {
  applyBootOrder,
  checkUnknown,
  mergeExtras,
  onbootOf,
  requireBridges,
  storedOptions,
  tagsOf,
  translateDisks,
  translateNets,
  vmName,
} from '../qemu-params';
import { pveUser, type ResolvedVm } from '../state';
import { parseDiskKey, parseDiskSpec, resolveResize, DiskSpecError, type DiskSpec } from '../translate/disk-spec';
import { parsePropertyString } from '../translate/property-string';
import { parseNetKey, parseNetSpec, stableMac, NetSpecError } from '../translate/net-spec';
import { mibToBytes, parsePveSize } from '../translate/size';
import { pveState } from '../translate/status';
import {
  agentEnabled,
  assignSlots,
  qemuListRow,
  reportedAgent,
  statusCurrent,
  vmConfig,
  type RowContext,
} from '../vm-view';
import { ProxmoxError, paramError } from '../wire';
import { define, vmAcl, type EndpointContext, type Routes } from './context';
import { pveStorages } from '../storage-map';
import { TERM_PORT, TERM_TICKET_LIFETIME_S, termTicketFor } from '../termproxy';
import { VNC_PORT, VNC_TICKET_LIFETIME_S, vncTicketFor } from '../vnc';

const VM_AUDIT = (name = 'VM.Audit') => ({ name, path: vmAcl });

export function rowContext(ctx: EndpointContext, vmid: number, row: ResolvedVm['row']): RowContext {
  const lock = ctx.state.lockOf(row.namespace, row.name);
  return {
    vmid,
    row,
    node: ctx.state.vmNode(row),
    ...(lock ? { lock } : {}),
    runtime: vmRuntime(ctx.state.services.deps, row.namespace, row.name),
    io: ctx.state.io.totals(row.namespace, row.name),
  };
}

function resolve(ctx: EndpointContext): ResolvedVm {
  return ctx.state.resolveVm(ctx.path.node ?? '', ctx.path.vmid ?? '');
}

/** The UPID of a journal task; `vm` pins vmid and node when the VM is not (or no longer) indexed. */
function upid(ctx: EndpointContext, taskId: string, vm?: { vmid: number; node: string }): string {
  const task = ctx.state.services.journal.get(taskId);
  if (!task) throw new ProxmoxError(500, `internal: task ${taskId} vanished from the journal`);
  if (vm) return ctx.state.upids.upidFor(task, { ...vm, user: pveUser(task.caller) });
  return ctx.state.upidOfJournalTask(task);
}

async function configContext(ctx: EndpointContext, vm: ResolvedVm) {
  const { services } = ctx.state;
  // An instancetype-sized VM has no CPU/memory in its template: the domain fills them in from the instancetype.
  const hw = await corral(sizedHardware(services.deps, vm.ref.namespace, vm.ref.name));
  const storages = await pveStorages(services);
  const defaultStorage =
    storages.find((s) => s.storage === 'local-lvm')?.storage ??
    storages.find((s) => s.type === 'lvmthin')?.storage ??
    '';
  return {
    hw,
    row: vm.row,
    defaultStorage,
    runtime: vmRuntime(services.deps, vm.ref.namespace, vm.ref.name),
    startOnBoot: startOnBoot(services.deps, vm.ref.namespace, vm.ref.name),
  };
}

async function currentConfig(ctx: EndpointContext, vm: ResolvedVm): Promise<Record<string, unknown>> {
  return vmConfig(await configContext(ctx, vm));
}

// ---------------------------------------------------------------------------------------------------------------

/** Corral's bounds for a VM (issue 14's strict input): 1–512 vCPUs, 64 MiB – 4 TiB of memory. */
const MAX_VCPUS = 512;
const CORES = { min: 1, max: MAX_VCPUS };
const SOCKETS = { min: 1, max: 64 };
const MEMORY_MIB = { min: 64, max: 4 * 1024 * 1024 };

function requireVcpus(cores: number, sockets: number): void {
  if (cores * sockets > MAX_VCPUS)
    throw paramError({ cores: `cores × sockets must be at most ${MAX_VCPUS} (got ${cores} × ${sockets})` });
}

async function createVm(ctx: EndpointContext): Promise<string> {
  const { state, args } = ctx;
  const { services } = state;
  const node = ctx.path.node ?? '';
  const vmid = state.parseVmid(args.requireString('vmid'));
  if (!state.vmids.isFree(vmid))
    throw new ProxmoxError(500, `unable to create VM ${vmid} - VM ${vmid} already exists on node '${node}'`);
  checkUnknown(args);
  const name = vmName(args, vmid);
  const namespace = services.deps.config.defaultNamespace;
  const taken = services.fleet.vmRow(namespace, name);
  if (taken)
    throw paramError({
      name: `name '${name}' is used by VM ${state.vmids.vmidOf(taken) ?? '?'} in namespace ${namespace}`,
    });
  const cores = args.int('cores', CORES) ?? 1;
  const sockets = args.int('sockets', SOCKETS) ?? 1;
  requireVcpus(cores, sockets);
  const memoryMiB = args.int('memory', MEMORY_MIB) ?? 512;
  const tags = tagsOf(args.string('tags'));
  const options = storedOptions(args);
  const disks = await translateDisks(services, args, name, namespace);
  applyBootOrder(disks.plans, args.string('boot'));
  const nets = translateNets(args, namespace, name);
  await requireBridges(services, namespace, nets.plans);
  const labels: Record<string, string> = { [LABEL_VMID]: String(vmid) };
  for (const t of tags) labels[`${LABEL_TAG_PREFIX}${t}`] = 'true';
  if (args.bool('template')) labels[LABEL_TEMPLATE] = 'true';
  const blueprint: VmBlueprint = {
    name,
    namespace,
    sockets,
    cores,
    memoryBytes: mibToBytes(memoryMiB),
    disks: disks.plans,
    nics: nets.plans,
    labels,
    annotations: { [EXTRAS_ANNOTATION]: serializeExtras({ options, disks: disks.extras, nets: nets.extras }) },
    start: args.bool('start') ?? false,
    // onboot=1: Always when started, else Halted (Always once started); otherwise Manual, PVE's default of 0.
    startOnBoot: onbootOf(args) === true,
  };
  if (!state.vmids.reserve(vmid))
    throw new ProxmoxError(500, `unable to create VM ${vmid} - VM ${vmid} already exists on node '${node}'`);
  try {
    const taskId = await corral(composeVm(services.deps, state.caller(ctx.principal), blueprint));
    return upid(ctx, taskId, { vmid, node: state.homeNode() });
  } catch (err) {
    state.vmids.release(vmid);
    throw err instanceof ProxmoxError
      ? new ProxmoxError(err.status, `unable to create VM ${vmid} - ${err.message}`, err.errors)
      : err;
  }
}

async function destroyVm(ctx: EndpointContext): Promise<string> {
  const vm = resolve(ctx);
  if (pveState(vm.row.status).status === 'running')
    throw new ProxmoxError(500, `VM ${vm.vmid} is running - destroy failed`);
  const { services } = ctx.state;
  const node = ctx.state.vmNode(vm.row);
  const { task } = await corral(services.vms.delete(ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name));
  const id = upid(ctx, task, { vmid: vm.vmid, node });
  ctx.state.markDeleted(vm.ref, vm.row.uid);
  return id;
}

// ---------------------------------------------------------------------------------------------------------------
// Power

const POWER: Record<string, PowerAction> = {
  start: 'start',
  stop: 'stop',
  shutdown: 'shutdown',
  reboot: 'restart',
  reset: 'reset',
  suspend: 'pause',
  resume: 'unpause',
};

async function power(ctx: EndpointContext): Promise<string> {
  const verb = ctx.path.action ?? '';
  const action = POWER[verb];
  if (!action)
    throw new ProxmoxError(
      501,
      `Method 'POST /nodes/${ctx.path.node}/qemu/${ctx.path.vmid}/status/${verb}' not implemented`,
    );
  const vm = resolve(ctx);
  const { services } = ctx.state;
  const state = pveState(vm.row.status);
  if (action === 'start' && state.status === 'running') throw new ProxmoxError(500, `VM ${vm.vmid} already running`);
  if (action === 'stop' && state.status === 'stopped' && state.qmpstatus === 'stopped') {
    // PVE answers a stop of a stopped VM with a task that ends OK at once.
    const task = services.journal.start(
      'stop',
      `${vm.ref.namespace}/${vm.ref.name}`,
      ctx.state.caller(ctx.principal).identity.login,
    );
    task.done('VM is not running - nothing to do');
    return upid(ctx, task.id);
  }
  if (['shutdown', 'restart', 'reset', 'pause'].includes(action) && state.status !== 'running')
    throw new ProxmoxError(500, `VM ${vm.vmid} not running`);
  if (action === 'unpause' && state.qmpstatus !== 'paused') throw new ProxmoxError(500, `VM ${vm.vmid} is not paused`);
  const taskId = await corral(
    powerAction(services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, action),
  );
  return upid(ctx, taskId);
}

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
  for (const k of changedDiskKeys) {
    const disk = cctx.hw.disks.find((d) => d.name === slotToDisk.get(k));
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
      if (disk) deleteDisks.push(disk);
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

async function template(ctx: EndpointContext): Promise<string> {
  const vm = resolve(ctx);
  if (pveState(vm.row.status).status === 'running')
    throw new ProxmoxError(500, `VM ${vm.vmid} is running - you can't convert a running VM to a template`);
  const taskId = await corral(
    setTemplateFlag(ctx.state.services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, true),
  );
  return upid(ctx, taskId);
}

/** `POST …/clone {newid, name, description}`: KubeVirt's VirtualMachineClone, labelled with the new vmid. */
async function clone(ctx: EndpointContext): Promise<string> {
  const { state, args } = ctx;
  const vm = resolve(ctx);
  const newid = state.parseVmid(args.requireString('newid'));
  if (!state.vmids.isFree(newid))
    throw new ProxmoxError(500, `unable to create VM ${newid} - VM ${newid} already exists on node '${ctx.path.node}'`);
  checkUnknown(args, ['newid', 'full', 'target', 'format', 'snapname', 'bwlimit']);
  const name = vmName(args, newid);
  if (state.services.fleet.vmRow(vm.ref.namespace, name))
    throw paramError({ name: `name '${name}' is already used in namespace ${vm.ref.namespace}` });
  const hw = corralSync(() => vmHardware(state.services.deps, vm.ref.namespace, vm.ref.name));
  const extras = parseExtras(hw.annotations[EXTRAS_ANNOTATION]);
  const slots = assignSlots(hw, extras);
  const macs = Object.fromEntries(
    hw.nics.map((n, i) => [n.name, stableMac(vm.ref.namespace, name, parseNetKey(slots.nets.get(n.name) ?? '') ?? i)]),
  );
  const description = args.string('description');
  const annotations =
    description !== undefined
      ? { [EXTRAS_ANNOTATION]: serializeExtras(mergeExtras(extras, { options: { ...extras.options, description } })) }
      : undefined;
  if (!state.vmids.reserve(newid))
    throw new ProxmoxError(500, `unable to create VM ${newid} - VM ${newid} already exists on node '${ctx.path.node}'`);
  try {
    const taskId = await corral(
      cloneVm(state.services.deps, state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, name, {
        labels: { [LABEL_VMID]: String(newid) },
        macs,
        ...(annotations ? { annotations } : {}),
        // PVE copies onboot: a source that does not start on boot gives a Manual clone.
        startOnBoot: startOnBoot(state.services.deps, vm.ref.namespace, vm.ref.name),
      }),
    );
    return upid(ctx, taskId, { vmid: vm.vmid, node: state.vmNode(vm.row) });
  } catch (err) {
    state.vmids.release(newid);
    throw err;
  }
}

/** `POST …/vncproxy`: a ticket for `…/vncwebsocket` (passed through to Corral's VNC bridge). */
function vncproxy(ctx: EndpointContext): Record<string, unknown> {
  const vm = resolve(ctx);
  if (pveState(vm.row.status).status !== 'running') throw new ProxmoxError(500, `VM ${vm.vmid} not running`);
  const caller = ctx.state.caller(ctx.principal);
  const task = ctx.state.services.journal.start(
    'vncproxy',
    `${vm.ref.namespace}/${vm.ref.name}`,
    caller.identity.login,
  );
  task.done(
    `VNC ticket issued; connect to /api2/json/nodes/${ctx.path.node}/qemu/${vm.vmid}/vncwebsocket within ${VNC_TICKET_LIFETIME_S}s`,
  );
  return {
    port: String(VNC_PORT),
    ticket: vncTicketFor(ctx, ctx.principal, vm.vmid),
    user: ctx.principal.tokenId ?? ctx.principal.userid,
    cert: '',
    upid: upid(ctx, task.id, { vmid: vm.vmid, node: ctx.state.vmNode(vm.row) }),
  };
}

/**
 * `POST …/termproxy`: a ticket for the serial console over `…/vncwebsocket` (PVE's termproxy protocol, translated
 * onto Corral's serial console by src/proxmox/termproxy.ts).
 */
function termproxy(ctx: EndpointContext): Record<string, unknown> {
  const vm = resolve(ctx);
  if (pveState(vm.row.status).status !== 'running') throw new ProxmoxError(500, `VM ${vm.vmid} not running`);
  const caller = ctx.state.caller(ctx.principal);
  const user = ctx.principal.tokenId ?? ctx.principal.userid;
  const task = ctx.state.services.journal.start(
    'termproxy',
    `${vm.ref.namespace}/${vm.ref.name}`,
    caller.identity.login,
  );
  task.done(
    `Serial terminal ticket issued; connect to /api2/json/nodes/${ctx.path.node}/qemu/${vm.vmid}/vncwebsocket within ${TERM_TICKET_LIFETIME_S}s`,
  );
  return {
    port: TERM_PORT,
    ticket: termTicketFor(ctx, user, vm.vmid),
    user,
    upid: upid(ctx, task.id, { vmid: vm.vmid, node: ctx.state.vmNode(vm.row) }),
  };
}

export function registerQemu(table: Routes): void {
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/clone', { privilege: VM_AUDIT('VM.Clone'), handle: clone });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/vncproxy', { privilege: VM_AUDIT('VM.Console'), handle: vncproxy });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/termproxy', {
    privilege: VM_AUDIT('VM.Console'),
    handle: termproxy,
  });
  define(table, 'GET', '/nodes/{node}/qemu', {
    handle: (ctx) => {
      const node = ctx.path.node ?? '';
      const home = ctx.state.homeNode();
      return ctx.state
        .vmRowsWithIds()
        .filter(({ row }) => ctx.state.vmNode(row) === node || (!row.node && node === home))
        .map(({ vmid, row }) => qemuListRow(rowContext(ctx, vmid, row)));
    },
  });
  define(table, 'POST', '/nodes/{node}/qemu', {
    privilege: { name: 'VM.Allocate', path: (_p, args) => `/vms/${args.raw('vmid') ?? ''}` },
    handle: createVm,
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      resolve(ctx);
      return [
        'config',
        'pending',
        'status',
        'rrddata',
        'snapshot',
        'resize',
        'unlink',
        'template',
        'agent',
        'vncproxy',
        'termproxy',
      ].map((subdir) => ({ subdir }));
    },
  });
  define(table, 'DELETE', '/nodes/{node}/qemu/{vmid}', { privilege: VM_AUDIT('VM.Allocate'), handle: destroyVm });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/status', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      resolve(ctx);
      return ['current', 'start', 'stop', 'shutdown', 'reboot', 'reset', 'suspend', 'resume'].map((subdir) => ({
        subdir,
      }));
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/status/current', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      const vm = resolve(ctx);
      const rc = rowContext(ctx, vm.vmid, vm.row);
      // Only the agent setting is needed from the config: read it from the extras, not the whole config.
      const manifest = corralSync(() => ctx.state.services.vms.manifest(vm.ref.namespace, vm.ref.name));
      const agent = reportedAgent(
        parseExtras(manifest.metadata.annotations?.[EXTRAS_ANNOTATION]).options.agent,
        rc.runtime,
      );
      return statusCurrent(rc, agent !== undefined && agentEnabled(agent));
    },
  });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/status/{action}', {
    privilege: VM_AUDIT('VM.PowerMgmt'),
    handle: power,
  });
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
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/template', { privilege: VM_AUDIT('VM.Allocate'), handle: template });
}
