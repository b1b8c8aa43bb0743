/** `/nodes/{node}/qemu/{vmid}/snapshot…` over Corral's VM snapshots. */
import {
  createSnapshot,
  deleteSnapshot,
  listSnapshots,
  restoreSnapshot,
  type SnapshotRow,
} from '@/server/domain/vm-snapshots';
import { corral } from '../errors';
import { onlyParams } from '../qemu-params';
import { pveState } from '../translate/status';
import { ProxmoxError, paramError } from '../wire';
import { define, vmAcl, type EndpointContext, type Routes } from './context';

const SNAPNAME = /^[a-zA-Z][a-zA-Z0-9_-]{1,39}$/;

function snaptime(row: SnapshotRow): number {
  return Math.floor(Date.parse(row.creationTime) / 1000) || 0;
}

async function rows(ctx: EndpointContext) {
  const vm = ctx.state.resolveVm(ctx.path.node ?? '', ctx.path.vmid ?? '');
  const snaps = await corral(listSnapshots(ctx.state.services.deps, vm.ref.namespace, vm.ref.name));
  return { vm, snaps };
}

/** PVE's snapshot list: a chain oldest → newest, then `current` pointing at the newest. */
async function list(ctx: EndpointContext) {
  const { vm, snaps } = await rows(ctx);
  const out: Record<string, unknown>[] = snaps.map((s, i) => ({
    name: s.name,
    description: s.description,
    snaptime: snaptime(s),
    vmstate: 0,
    ...(i > 0 ? { parent: snaps[i - 1]?.name } : {}),
  }));
  const last = snaps[snaps.length - 1];
  out.push({
    name: 'current',
    description: 'You are here!',
    running: pveState(vm.row.status).status === 'running' ? 1 : 0,
    ...(last ? { parent: last.name } : {}),
  });
  return out;
}

function upid(ctx: EndpointContext, taskId: string): string {
  const task = ctx.state.services.journal.get(taskId);
  if (!task) throw new ProxmoxError(500, `internal: task ${taskId} vanished from the journal`);
  return ctx.state.upidOfJournalTask(task);
}

async function create(ctx: EndpointContext): Promise<string> {
  onlyParams(ctx.args, ['snapname', 'description', 'vmstate']);
  const name = ctx.args.requireString('snapname');
  if (!SNAPNAME.test(name) || name === 'current')
    throw paramError({
      snapname: `invalid format - snapshot names start with a letter, then 1-39 of [a-zA-Z0-9_-]; 'current' is reserved`,
    });
  const { vm, snaps } = await rows(ctx);
  if (snaps.some((s) => s.name === name)) throw new ProxmoxError(500, `snapshot name '${name}' already used`);
  const withRam = ctx.args.bool('vmstate') ?? false;
  const taskId = await corral(
    createSnapshot(
      ctx.state.services.deps,
      ctx.state.caller(ctx.principal),
      vm.ref.namespace,
      vm.ref.name,
      name,
      ctx.args.string('description') ?? '',
      (task) => {
        if (withRam) task.log('vmstate=1 requested: KubeVirt snapshots hold disks only, so this is a disk snapshot');
      },
    ),
  );
  return upid(ctx, taskId);
}

async function remove(ctx: EndpointContext): Promise<string> {
  onlyParams(ctx.args, ['force']);
  const name = ctx.path.snap ?? '';
  const { vm, snaps } = await rows(ctx);
  if (!snaps.some((s) => s.name === name)) throw new ProxmoxError(404, `snapshot '${name}' does not exist`);
  return upid(
    ctx,
    await corral(
      deleteSnapshot(ctx.state.services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, name),
    ),
  );
}

async function rollback(ctx: EndpointContext): Promise<string> {
  const name = ctx.path.snap ?? '';
  const { vm, snaps } = await rows(ctx);
  if (!snaps.some((s) => s.name === name)) throw new ProxmoxError(404, `snapshot '${name}' does not exist`);
  onlyParams(ctx.args, ['start']);
  const start = ctx.args.bool('start') ?? false;
  return upid(
    ctx,
    await corral(
      restoreSnapshot(ctx.state.services.deps, ctx.state.caller(ctx.principal), vm.ref.namespace, vm.ref.name, name, {
        startAfter: start,
      }),
    ),
  );
}

export function registerSnapshots(table: Routes): void {
  const audit = { name: 'VM.Audit', path: vmAcl };
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/snapshot', { privilege: audit, handle: list });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/snapshot', {
    privilege: { name: 'VM.Snapshot', path: vmAcl },
    handle: create,
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/snapshot/{snap}', {
    privilege: audit,
    handle: async (ctx) => {
      const { snaps } = await rows(ctx);
      if (!snaps.some((s) => s.name === ctx.path.snap))
        throw new ProxmoxError(404, `snapshot '${ctx.path.snap}' does not exist`);
      return [{ subdir: 'config' }, { subdir: 'rollback' }];
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/snapshot/{snap}/config', {
    privilege: audit,
    handle: async (ctx) => {
      const { snaps } = await rows(ctx);
      const snap = snaps.find((s) => s.name === ctx.path.snap);
      if (!snap) throw new ProxmoxError(404, `snapshot '${ctx.path.snap}' does not exist`);
      return {
        name: snap.name,
        description: snap.description,
        snaptime: snaptime(snap),
        vmstate: 0,
        phase: snap.phase,
      };
    },
  });
  define(table, 'DELETE', '/nodes/{node}/qemu/{vmid}/snapshot/{snap}', {
    privilege: { name: 'VM.Snapshot', path: vmAcl },
    handle: remove,
  });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/snapshot/{snap}/rollback', {
    privilege: { name: 'VM.Snapshot.Rollback', path: vmAcl },
    handle: rollback,
  });
}
