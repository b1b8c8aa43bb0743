/** `/nodes/{node}/qemu/…`: list, create, destroy, power, template, clone, consoles (config: qemu-config.ts, agent: agent.ts). */
import { LABEL_TAG_PREFIX, LABEL_TEMPLATE, LABEL_VMID } from '@/server/domain/labels';
import { composeVm, setTemplateFlag, vmHardware, type VmBlueprint } from '@/server/domain/vm-hardware';
import { powerAction, type PowerAction } from '@/server/domain/vm-power';
import { startOnBoot } from '@/server/domain/vm-hw-options';
import { cloneVm } from '@/server/domain/vm-clone';
import { cloudInitForCreate, refreshCloudInit } from '@/server/domain/vm-cloudinit';
import type { NicPlan } from '@/server/domain/vm-hardware';
import { cloudInitChange, cloudInitError } from '../cloudinit-params';
import { corral, corralSync } from '../errors';
import { EXTRAS_ANNOTATION, parseExtras, serializeExtras } from '../extras';
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
  type DiskTranslation,
} from '../qemu-params';
import { parseNetKey, stableMac } from '../translate/net-spec';
import { mibToBytes } from '../translate/size';
import { pveState } from '../translate/status';
import { agentEnabled, assignSlots, qemuListRow, reportedAgent, statusCurrent } from '../vm-view';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { TERM_PORT, TERM_TICKET_LIFETIME_S, termTicketFor } from '../termproxy';
import { VNC_PORT, VNC_TICKET_LIFETIME_S, vncTicketFor } from '../vnc';
import { registerQemuConfig } from './qemu-config';
import { VM_AUDIT, rowContext, resolve, upid, CORES, SOCKETS, MEMORY_MIB, requireVcpus } from './qemu-common';

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
  const cloudInit = await createCloudInit(ctx, { vmid, name, namespace }, disks, nets.plans, options.ostype);
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
    annotations: {
      [EXTRAS_ANNOTATION]: serializeExtras({ options, disks: disks.extras, nets: nets.extras }),
      ...(cloudInit?.annotations ?? {}),
    },
    ...(cloudInit
      ? { cloudInit: { secret: cloudInit.secret, ...(cloudInit.drive ? { drive: cloudInit.drive } : {}) } }
      : {}),
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

/** The cloud-init drive and keys of a create, validated before anything is written (undefined: none given). */
async function createCloudInit(
  ctx: EndpointContext,
  vm: { vmid: number; name: string; namespace: string },
  disks: DiskTranslation,
  nics: NicPlan[],
  ostype: string | undefined,
) {
  const change = cloudInitChange(ctx.args);
  const drive = disks.cloudInit;
  if (!drive && Object.keys(change).length === 0) return undefined;
  if (drive)
    disks.extras[drive.key] = {
      ...disks.extras[drive.key],
      options: disks.extras[drive.key]?.options ?? {},
      volume: `vm-${vm.vmid}-cloudinit`,
    };
  const macs: string[] = [];
  nics.forEach((n, i) => (macs[parseNetKey(n.name) ?? i] = n.mac));
  return corral(
    cloudInitForCreate(
      ctx.state.services.deps,
      { name: vm.name, namespace: vm.namespace, macs: Array.from(macs, (m) => m ?? ''), ...(ostype ? { ostype } : {}) },
      change,
      drive ? { disk: drive.key, bus: drive.bus } : undefined,
    ).catch((err: unknown) => {
      throw cloudInitError(err);
    }),
  );
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
  // PVE generates the cloud-init image when it starts a VM (a reboot is a stop and a start): pending changes go in.
  if (action === 'start' || action === 'restart')
    await corral(refreshCloudInit(services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name));
  const taskId = await corral(
    powerAction(services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, action),
  );
  return upid(ctx, taskId);
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
      const manifest = corralSync(() => ctx.state.services.vms.cached(vm.ref.namespace, vm.ref.name));
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
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/template', { privilege: VM_AUDIT('VM.Allocate'), handle: template });
  registerQemuConfig(table);
}
