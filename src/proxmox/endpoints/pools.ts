/**
 * `/pools`: Corral's pools (ADR-0008, src/server/domain/pools*.ts) in PVE's vocabulary. Both generations of the
 * API are served: PVE 8.1's `GET|PUT|DELETE /pools?poolid=` (nested pool ids `a/b`, which is what bpg sends) and
 * the older `/pools/{poolid}`. Members are guest rows exactly as `/cluster/resources` builds them.
 *
 * CTs are members like VMs (`lxc/<vmid>` rows); `vms=` takes either kind of vmid, as PVE's does.
 *
 * Pool ids: PVE allows `[A-Za-z0-9_.-]` and `/`; a Corral path may also hold spaces, shown here as `_` (`web tier`
 * → `web_tier`). When two pools map to the same id, the one whose path is the id itself wins; the other is listed
 * under Corral's API only. PVE refuses to delete a pool with members or sub-pools, and so does this door (Corral's
 * own `DELETE /api/folders` unfolders them instead). PVE answers its refusals with 500; here, as for unknown VMs
 * (docs/proxmox.md "Deliberate deviations"), a caller's mistake is a 4xx with PVE's message: 404 for an unknown
 * pool, 409 for an existing one, a guest in another pool, a pool that is not empty.
 */
import type { FolderDoc } from '@/server/domain/pools-store';
import { KUBEVIRT_BACKEND, formatRef, pathProblem, readRef } from '@/server/domain/pools-path';
import { findCt } from '@/server/domain/ct-rows';
import { lxcResourceRow } from '../ct-view';
import { resourceRow } from '../vm-view';
import { CorralError, httpStatusOf } from '@/server/errors';
import { onlyParams } from '../qemu-params';
import { splitList } from '../params';
import { ProxmoxError, paramError } from '../wire';
import { define, type EndpointContext, type Routes } from './context';
import { ctContext } from './lxc-common';
import { rowContext } from './qemu-common';

const PVE_POOLID = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** The PVE pool id a Corral path is shown under. */
export const poolidOf = (path: string): string => path.replaceAll(' ', '_');

const poolAcl = (_p: Record<string, string>, args: EndpointContext['args']) =>
  `/pool/${args.raw('poolid') ?? _p.poolid ?? ''}`;

function poolidArg(ctx: EndpointContext, required: true): string;
function poolidArg(ctx: EndpointContext, required: boolean): string | undefined;
function poolidArg(ctx: EndpointContext, required: boolean): string | undefined {
  const id = ctx.path.poolid ?? ctx.args.string('poolid');
  if (id === undefined) {
    if (required) throw paramError({ poolid: 'property is missing and it is not optional' });
    return undefined;
  }
  const why = PVE_POOLID.test(id) ? pathProblem(id) : 'invalid format - allowed characters: A-Z a-z 0-9 _ . - and /';
  if (why) throw paramError({ poolid: `value '${id}' does not look like a valid pool id: ${why}` });
  return id;
}

/** The Corral path a pool id names, exact match first. */
function pathOf(doc: Readonly<FolderDoc>, poolid: string): string | undefined {
  if (doc[poolid]) return poolid;
  return Object.keys(doc).find((p) => poolidOf(p) === poolid);
}

function requirePath(ctx: EndpointContext, doc: Readonly<FolderDoc>, poolid: string): string {
  const path = pathOf(doc, poolid);
  if (path === undefined) throw new ProxmoxError(404, `pool '${poolid}' does not exist`);
  return path;
}

/** The `/cluster/resources` rows of a pool's members that exist; missing members have no row to show. */
function memberRows(ctx: EndpointContext, path: string, type: string | undefined): Record<string, unknown>[] {
  if (type === 'storage') return [];
  const deps = ctx.state.services.deps;
  const own = deps.cluster.info.context;
  const pool = poolidOf(path);
  const rows: Record<string, unknown>[] = [];
  const now = Date.now();
  for (const ref of ctx.state.services.pools.store.current()[path]?.members ?? []) {
    const parts = readRef(ref);
    if (!parts || parts.context !== own) continue;
    const { namespace, name } = parts;
    const row = deps.fleet.vmRow(namespace, name);
    if (row) {
      const vmid = ctx.state.vmids.vmidOf({ namespace, name });
      if (vmid !== undefined && type !== 'lxc') rows.push({ ...resourceRow(rowContext(ctx, vmid, row)), pool });
      continue;
    }
    const ct = findCt(deps, namespace, name);
    const vmid = deps.fleet.ctVmid(namespace, name);
    if (ct && vmid !== undefined && type !== 'qemu')
      rows.push({ ...lxcResourceRow(ctContext(ctx, { vmid, ref: { namespace, name, kind: 'ct' }, ct }, now)), pool });
  }
  return rows;
}

function poolRow(doc: Readonly<FolderDoc>, path: string): Record<string, unknown> {
  const comment = doc[path]?.comment;
  return { poolid: poolidOf(path), ...(comment ? { comment } : {}) };
}

/** The guests `vms=` names, as refs of this cluster; an unknown vmid is PVE's "no such VMID". */
function refsOfVmids(ctx: EndpointContext, text: string | undefined): { vmid: number; ref: string }[] {
  return splitList(text).map((item) => {
    const vmid = ctx.state.parseVmid(item);
    const ref = ctx.state.vmids.refOf(vmid);
    if (!ref) throw paramError({ vms: `no such VMID '${vmid}'` });
    return {
      vmid,
      ref: formatRef({
        backend: KUBEVIRT_BACKEND,
        context: ctx.state.services.deps.cluster.info.context,
        namespace: ref.namespace,
        name: ref.name,
      }),
    };
  });
}

async function updatePool(ctx: EndpointContext): Promise<null> {
  onlyParams(ctx.args, ['poolid', 'vms', 'storage', 'delete', 'allow-move', 'comment']);
  const poolid = poolidArg(ctx, true);
  const pools = ctx.state.services.pools;
  const caller = ctx.state.caller(ctx.principal);
  if (splitList(ctx.args.string('storage')).length > 0)
    throw paramError({ storage: 'Corral pools hold guests only (storage is shared by every guest)' });
  const remove = ctx.args.bool('delete') ?? false;
  const allowMove = ctx.args.bool('allow-move') ?? false;
  const comment = ctx.args.string('comment');
  const guests = refsOfVmids(ctx, ctx.args.string('vms'));
  await pools.store.start();
  const path = requirePath(ctx, await pools.store.refresh(), poolid);
  for (const { vmid, ref } of guests) {
    const current = pools.store.poolOf(ref);
    if (remove) {
      if (current !== path) throw new ProxmoxError(409, `VM ${vmid} is not a member of pool '${poolid}'`);
      await pools.removeMember(caller, ref);
      continue;
    }
    if (current === path) continue;
    if (current && !allowMove) throw new ProxmoxError(409, `VM ${vmid} is already a pool member`);
    if (current) await pools.removeMember(caller, ref);
    await pools.addMember(caller, path, ref);
  }
  if (comment !== undefined) await pools.setComment(caller, path, comment);
  return null;
}

async function deletePool(ctx: EndpointContext): Promise<null> {
  onlyParams(ctx.args, ['poolid']);
  const poolid = poolidArg(ctx, true);
  const pools = ctx.state.services.pools;
  await pools.store.start();
  const path = requirePath(ctx, await pools.store.refresh(), poolid);
  try {
    await pools.remove(ctx.state.caller(ctx.principal), path, { onlyEmpty: true });
  } catch (err) {
    // PVE's wording, so scripts written against PVE recognise it.
    if (err instanceof Error && /is not empty/.test(err.message))
      throw new ProxmoxError(409, `delete pool failed: pool '${poolid}' is not empty`);
    throw err;
  }
  return null;
}

async function getPool(ctx: EndpointContext, list: boolean): Promise<unknown> {
  onlyParams(ctx.args, list ? ['poolid', 'type'] : ['type']);
  const pools = ctx.state.services.pools;
  await pools.store.start();
  const doc = pools.store.current();
  const poolid = poolidArg(ctx, !list);
  const type = ctx.args.string('type');
  if (type !== undefined && !['qemu', 'lxc', 'storage'].includes(type))
    throw paramError({ type: `value '${type}' does not have a value in the enumeration 'qemu, lxc, storage'` });
  if (poolid === undefined) return Object.keys(doc).map((p) => poolRow(doc, p));
  const path = requirePath(ctx, doc, poolid);
  const members = memberRows(ctx, path, type);
  const comment = doc[path]?.comment;
  // `GET /pools?poolid=` answers a list of one (PVE 8.1); `GET /pools/{poolid}` the object without its id.
  if (list) return [{ ...poolRow(doc, path), members }];
  return { ...(comment ? { comment } : {}), members };
}

/** `/cluster/resources` rows of `type: pool`, one per pool. */
export function poolResourceRows(ctx: EndpointContext): Record<string, unknown>[] {
  const doc = ctx.state.services.pools.store.current();
  return Object.keys(doc).map((p) => ({ id: `pool/${poolidOf(p)}`, type: 'pool', pool: poolidOf(p) }));
}

/** A refusal of Corral's pools (a 4xx CorralError) keeps its status here: a caller's mistake is never a 5xx. */
function mapped(handle: (ctx: EndpointContext) => Promise<unknown>) {
  return async (ctx: EndpointContext) => {
    try {
      return await handle(ctx);
    } catch (err) {
      if (err instanceof CorralError && httpStatusOf[err.code] < 500)
        throw new ProxmoxError(httpStatusOf[err.code], err.message);
      throw err;
    }
  };
}

export function registerPools(table: Routes): void {
  // Listing needs no privilege of its own (PVE lists the pools the user may see; Corral's are all visible).
  define(table, 'GET', '/pools', { handle: mapped((ctx) => getPool(ctx, true)) });
  define(table, 'GET', '/pools/{poolid}', { handle: mapped((ctx) => getPool(ctx, false)) });
  define(table, 'POST', '/pools', {
    privilege: { name: 'Pool.Allocate', path: poolAcl },
    handle: mapped(async (ctx) => {
      onlyParams(ctx.args, ['poolid', 'comment']);
      const poolid = poolidArg(ctx, true);
      const comment = ctx.args.string('comment');
      const pools = ctx.state.services.pools;
      try {
        await pools.create(ctx.state.caller(ctx.principal), poolid, comment);
      } catch (err) {
        if (err instanceof Error && /already exists/.test(err.message))
          throw new ProxmoxError(409, `create pool failed: pool '${poolid}' already exists`);
        throw err;
      }
      return null;
    }),
  });
  define(table, 'PUT', '/pools', { privilege: { name: 'Pool.Allocate', path: poolAcl }, handle: mapped(updatePool) });
  define(table, 'PUT', '/pools/{poolid}', {
    privilege: { name: 'Pool.Allocate', path: poolAcl },
    handle: mapped(updatePool),
  });
  define(table, 'DELETE', '/pools', {
    privilege: { name: 'Pool.Allocate', path: poolAcl },
    handle: mapped(deletePool),
  });
  define(table, 'DELETE', '/pools/{poolid}', {
    privilege: { name: 'Pool.Allocate', path: poolAcl },
    handle: mapped(deletePool),
  });
}
