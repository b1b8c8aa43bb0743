/**
 * `/nodes/{node}/lxc/…`: Corral's containers (CTs) as PVE containers — list, create, destroy, status and power
 * (config: lxc-config.ts). Every operation is the domain's own (`ct-ops.ts`), the one `/api/cts` runs too.
 */
import { createCt, ctAction, deleteCt, type CtAction } from '@/server/domain/ct-ops';
import { findCt } from '@/server/domain/ct-rows';
import { LABEL_TAG_PREFIX, LABEL_VMID } from '@/server/domain/labels';
import { ANNOTATION_CT_DESCRIPTION } from '@/server/domain/ct-spec';
import { corral } from '../errors';
import {
  ctStatus,
  imageOfTemplate,
  lxcInterfaces,
  lxcListRow,
  lxcStatusCurrent,
  ostypeOf,
  TemplateError,
} from '../ct-view';
import { checkNet0, refuseUnsupported } from '../lxc-params';
import type { Params } from '../params';
import { onlyParams, tagsOf } from '../qemu-params';
import { parsePropertyString } from '../translate/property-string';
import { ISO_STORAGE, LVM_ALIAS, pveStorages } from '../storage-map';
import { pveUser } from '../state';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { requireNode } from './nodes';
import { CORES, MEMORY_MIB, VM_AUDIT } from './qemu-common';
import { ctContext, ctUpid, resolveCt } from './lxc-common';
import { memoryQuantity, registerLxcConfig } from './lxc-config';

const CREATE_KEYS = [
  'vmid',
  'ostemplate',
  'hostname',
  'cores',
  'cpulimit',
  'memory',
  'swap',
  'rootfs',
  'storage',
  'unprivileged',
  'tags',
  'description',
  'net0',
  'start',
  'ostype',
  'force',
];

/** `rootfs` as PVE create takes it: `<storage>:<GiB>`, `volume=<storage>:<GiB>`, or `<GiB>` with `storage=`. */
async function translateRootfs(
  ctx: EndpointContext,
  value: string | undefined,
): Promise<{ storageClass: string; gib: number }> {
  const { head, props } = parsePropertyString(value ?? '');
  const volume = props.get('volume') ?? head ?? '';
  for (const k of props.keys())
    if (k !== 'volume') throw paramError({ rootfs: `option '${k}' is not supported: give <storage>:<size in GiB>` });
  const m = /^(?:([A-Za-z][\w.-]*):)?(\d+)$/.exec(volume);
  if (value !== undefined && !m)
    throw paramError({ rootfs: `expected <storage>:<size in GiB> for a new volume, got '${value}'` });
  const gib = m ? Number(m[2]) : 8;
  if (gib < 1 || gib > 64 * 1024) throw paramError({ rootfs: 'size must be between 1 and 65536 GiB' });
  const storageId = m?.[1] ?? ctx.args.string('storage') ?? ISO_STORAGE;
  const storage = (await pveStorages(ctx.state.services)).find((s) => s.storage === storageId);
  if (!storage) throw paramError({ rootfs: `storage '${storageId}' does not exist` });
  // `local` (PVE's default for containers) and `local-lvm` both mean the cluster's default StorageClass.
  const storageClass = storage.storage === ISO_STORAGE || storage.storage === LVM_ALIAS ? '' : storage.storageClass;
  return { storageClass, gib };
}

/** A Kubernetes name for a CT from PVE's `hostname` (PVE allows FQDNs; a pod name cannot hold dots). */
function ctName(args: Params, vmid: number): string {
  const name = args.string('hostname') ?? `ct-${vmid}`;
  if (!/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(name))
    throw paramError({
      hostname: `invalid hostname '${name}': a Corral CT is a Kubernetes pod; use lower-case letters, digits and '-' (at most 63)`,
    });
  return name;
}

async function createContainer(ctx: EndpointContext): Promise<string> {
  const { state, args } = ctx;
  const { services } = state;
  const node = ctx.path.node ?? '';
  const vmid = state.parseVmid(args.requireString('vmid'));
  const taken = () => {
    const ref = state.vmids.refOf(vmid);
    return new ProxmoxError(
      500,
      `unable to create CT ${vmid} - ${ref?.kind === 'ct' ? 'CT' : 'VM'} ${vmid} already exists on node '${node}'`,
    );
  };
  if (!state.vmids.isFree(vmid)) throw taken();
  refuseUnsupported(args, CREATE_KEYS);
  if (args.bool('force')) throw paramError({ force: 'not supported: Corral never overwrites an existing container' });
  const name = ctName(args, vmid);
  const namespace = services.deps.config.defaultNamespace;
  if (findCt(services.deps, namespace, name))
    throw paramError({
      hostname: `hostname '${name}' is used by CT ${services.fleet.ctVmid(namespace, name) ?? '?'} in namespace ${namespace}`,
    });
  let image: string;
  try {
    image = imageOfTemplate(args.requireString('ostemplate'));
  } catch (err) {
    if (err instanceof TemplateError) throw paramError({ ostemplate: err.message });
    throw err;
  }
  const ostype = args.string('ostype');
  if (ostype !== undefined && ostype !== ostypeOf(image))
    throw paramError({ ostype: `the image decides it: ${image} is '${ostypeOf(image)}'` });
  const cores = args.int('cores', CORES) ?? 1;
  const cpulimit = args.int('cpulimit', { min: 0, max: CORES.max });
  if (cpulimit !== undefined && cpulimit !== cores)
    throw paramError({ cpulimit: `a Corral container's CPU limit is its core count (cores=${cores})` });
  const memory = args.int('memory', MEMORY_MIB) ?? 512;
  const swap = args.int('swap', { min: 0 });
  if (swap) throw paramError({ swap: 'not supported: a container pod runs without swap (give swap=0)' });
  const net0 = args.string('net0');
  if (net0 !== undefined) checkNet0(net0);
  const rootfs = await translateRootfs(ctx, args.string('rootfs'));
  const tags = tagsOf(args.string('tags'));
  const description = args.string('description');
  const labels: Record<string, string> = { [LABEL_VMID]: String(vmid) };
  for (const t of tags) labels[`${LABEL_TAG_PREFIX}${t}`] = 'true';
  if (!state.vmids.reserve(vmid)) throw taken();
  try {
    const created = await corral(
      createCt(
        services.deps,
        state.caller(ctx.principal),
        {
          name,
          namespace,
          image,
          cpu: cores,
          mem: memoryQuantity(memory),
          disk: `${rootfs.gib}Gi`,
          storageClass: rootfs.storageClass,
          // PVE's default is a privileged container; `unprivileged=1` is Corral's unprivileged CT (volume at /data).
          privileged: !(args.bool('unprivileged') ?? false),
        },
        {
          labels,
          ...(description ? { annotations: { [ANNOTATION_CT_DESCRIPTION]: description } } : {}),
          start: args.bool('start') ?? false,
        },
      ),
    );
    const task = services.journal.get(created.task);
    if (!task) throw new ProxmoxError(500, `internal: task ${created.task} vanished from the journal`);
    return state.upids.upidFor(task, { vmid, node: state.homeNode(), user: pveUser(task.caller) });
  } catch (err) {
    state.vmids.release(vmid);
    throw err instanceof ProxmoxError
      ? new ProxmoxError(err.status, `unable to create CT ${vmid} - ${err.message}`, err.errors)
      : err;
  }
}

async function destroyContainer(ctx: EndpointContext): Promise<string> {
  onlyParams(ctx.args, ['purge', 'force', 'destroy-unreferenced-disks']);
  const ct = resolveCt(ctx);
  // PVE refuses a running container unless force=1, which stops it first (deleting the pod does exactly that).
  if (ctStatus(ct.ct) === 'running' && !ctx.args.bool('force'))
    throw new ProxmoxError(500, `unable to destroy CT ${ct.vmid} - container is running`);
  const { services } = ctx.state;
  const uid = ct.ct.pvc.metadata.uid ?? '';
  const { task } = await corral(
    deleteCt(services.deps, ctx.state.caller(ctx.principal), ct.ref.namespace, ct.ref.name),
  );
  const id = ctUpid(ctx, task, ct);
  ctx.state.markCtDeleted(ct.ref, uid);
  return id;
}

/** PVE verbs → the domain's CT actions; `shutdown` is the domain's stop (the pod's graceful termination). */
const POWER: Record<string, { action: CtAction; params: string[]; type: string }> = {
  start: { action: 'start', params: ['skiplock', 'debug'], type: 'vzstart' },
  stop: { action: 'stop', params: ['skiplock', 'overrule-shutdown'], type: 'vzstop' },
  shutdown: { action: 'stop', params: ['forceStop', 'timeout'], type: 'vzshutdown' },
  reboot: { action: 'restart', params: ['timeout'], type: 'vzreboot' },
};

async function power(ctx: EndpointContext): Promise<string> {
  const verb = ctx.path.action ?? '';
  const op = POWER[verb];
  if (!op)
    throw new ProxmoxError(
      501,
      `Method 'POST /nodes/${ctx.path.node}/lxc/${ctx.path.vmid}/status/${verb}' not implemented`,
    );
  onlyParams(ctx.args, op.params);
  const ct = resolveCt(ctx);
  const status = ctStatus(ct.ct);
  if (op.action === 'start' && status === 'running') throw new ProxmoxError(500, `CT ${ct.vmid} already running`);
  if (op.action !== 'start' && status !== 'running') throw new ProxmoxError(500, `CT ${ct.vmid} not running`);
  const taskId = await corral(async () =>
    ctAction(ctx.state.services.deps, ctx.state.caller(ctx.principal), ct.ref.namespace, ct.ref.name, op.action),
  );
  return ctUpid(ctx, taskId, ct, op.type);
}

export function registerLxc(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/lxc', {
    handle: (ctx) => {
      requireNode(ctx);
      const node = ctx.path.node ?? '';
      const now = Date.now();
      return ctx.state
        .ctsWithIds()
        .map((ct) => ctContext(ctx, ct, now))
        .filter((c) => c.node === node)
        .map(lxcListRow);
    },
  });
  define(table, 'POST', '/nodes/{node}/lxc', {
    privilege: { name: 'VM.Allocate', path: (_p, args) => `/vms/${args.raw('vmid') ?? ''}` },
    handle: createContainer,
  });
  define(table, 'GET', '/nodes/{node}/lxc/{vmid}', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      resolveCt(ctx);
      return ['config', 'status', 'snapshot', 'interfaces'].map((subdir) => ({ subdir }));
    },
  });
  define(table, 'DELETE', '/nodes/{node}/lxc/{vmid}', {
    privilege: VM_AUDIT('VM.Allocate'),
    handle: destroyContainer,
  });
  define(table, 'GET', '/nodes/{node}/lxc/{vmid}/status', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      resolveCt(ctx);
      return ['current', 'start', 'stop', 'shutdown', 'reboot'].map((subdir) => ({ subdir }));
    },
  });
  define(table, 'GET', '/nodes/{node}/lxc/{vmid}/status/current', {
    privilege: VM_AUDIT(),
    handle: (ctx) => lxcStatusCurrent(ctContext(ctx, resolveCt(ctx))),
  });
  // The container's interfaces as PVE reads them from inside it: loopback and eth0 with the pod's addresses.
  define(table, 'GET', '/nodes/{node}/lxc/{vmid}/interfaces', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      onlyParams(ctx.args, []);
      const ct = resolveCt(ctx);
      if (ctStatus(ct.ct) !== 'running' || !ct.ct.pod) throw new ProxmoxError(500, `CT ${ct.vmid} not running`);
      return lxcInterfaces(ct.ct.spec, ct.ct.pod);
    },
  });
  // Corral CTs have no snapshots; the list is PVE's `current` entry alone. The Ansible inventory plugin reads it for
  // every guest (want_facts) and fails on an error, so it must answer rather than 501.
  define(table, 'GET', '/nodes/{node}/lxc/{vmid}/snapshot', {
    privilege: VM_AUDIT(),
    handle: (ctx) => {
      onlyParams(ctx.args, []);
      const ct = resolveCt(ctx);
      return [{ name: 'current', description: 'You are here!', running: ctStatus(ct.ct) === 'running' ? 1 : 0 }];
    },
  });
  define(table, 'POST', '/nodes/{node}/lxc/{vmid}/status/{action}', {
    privilege: VM_AUDIT('VM.PowerMgmt'),
    handle: power,
  });
  registerLxcConfig(table);
}
