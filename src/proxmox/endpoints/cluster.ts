/** `/version`, `/cluster/*`, tasks; pools, nodes and storage have their own files. */
import type { Task } from '@/server/schemas/tasks';
import { resourceRow } from '../vm-view';
import { taskListRow, taskLog, taskMatches, taskStatus, type TaskFilter } from '../tasks';
import { hasPrivilege } from '../auth/roles';
import { corralSync } from '../errors';
import { onlyParams } from '../qemu-params';
import { ProxmoxError, RawJson, paramError } from '../wire';
import { define, rootAcl, type EndpointContext, type Routes } from './context';
import { nodeFacts, nodeRow, PVE_VERSION } from './nodes';
import { rowContext } from './qemu-common';
import { lxcResourceRow } from '../ct-view';
import { ctContext } from './lxc-common';
import { poolidOf, poolResourceRows } from './pools';
import { storageResourceRows } from './storage';

function upidOf(ctx: EndpointContext, task: Task): string {
  return ctx.state.upidOfJournalTask(task);
}

function resolveTask(ctx: EndpointContext): {
  task: Task;
  upid: string;
  parsed: NonNullable<ReturnType<EndpointContext['state']['upids']['resolve']>>['upid'];
} {
  const text = ctx.path.upid ?? '';
  const hit = ctx.state.upids.resolve(text);
  const task = hit ? ctx.state.services.journal.get(hit.taskId) : undefined;
  if (!hit || !task)
    throw new ProxmoxError(404, `no such task '${text}' - does not exist (tasks are kept in memory; the newest 500)`);
  return { task, upid: text, parsed: hit.upid };
}

const TASK_SOURCES = ['archive', 'active', 'all'] as const;
const STATUS_TYPES = ['ok', 'error', 'warning', 'unknown'];

/** `GET /nodes/{node}/tasks`: the journal's tasks on that node, newest first, filtered as PVE filters its task index. */
function nodeTasks(ctx: EndpointContext): Record<string, unknown>[] {
  const { args } = ctx;
  onlyParams(args, [
    'start',
    'limit',
    'vmid',
    'typefilter',
    'userfilter',
    'errors',
    'source',
    'since',
    'until',
    'statusfilter',
  ]);
  const source = args.string('source') ?? 'archive';
  if (!(TASK_SOURCES as readonly string[]).includes(source))
    throw paramError({
      source: `value '${source}' does not have a value in the enumeration '${TASK_SOURCES.join(', ')}'`,
    });
  const statuses = args
    .string('statusfilter')
    ?.split(/[,;\s]+/)
    .filter(Boolean);
  const unknownStatus = statuses?.find((s) => !STATUS_TYPES.includes(s));
  if (unknownStatus)
    throw paramError({
      statusfilter: `value '${unknownStatus}' does not have a value in the enumeration '${STATUS_TYPES.join(', ')}'`,
    });
  const limit = args.int('limit', { min: 0 }) ?? 50;
  const start = args.int('start', { min: 0 }) ?? 0;
  const vmid = args.int('vmid', { min: 100, max: 999_999_999 });
  const since = args.int('since', { min: 0 });
  const until = args.int('until', { min: 0 });
  const filter: TaskFilter = {
    node: ctx.path.node ?? '',
    source: source as TaskFilter['source'],
    errors: args.bool('errors') ?? false,
    ...(vmid !== undefined ? { vmid } : {}),
    ...(args.string('typefilter') ? { typefilter: args.string('typefilter') } : {}),
    ...(args.string('userfilter') ? { userfilter: args.string('userfilter') } : {}),
    ...(since !== undefined ? { since } : {}),
    ...(until !== undefined ? { until } : {}),
    ...(statuses?.length ? { statusfilter: new Set(statuses) } : {}),
  };
  const rows: Record<string, unknown>[] = [];
  for (const t of ctx.state.services.journal.list(500)) {
    const upid = upidOf(ctx, t);
    const hit = ctx.state.upids.resolve(upid);
    if (hit && taskMatches(t, hit.upid, filter)) rows.push(taskListRow(t, hit.upid, upid));
  }
  return rows.slice(start, start + limit);
}

export function registerCluster(table: Routes): void {
  define(table, 'GET', '/version', { handle: () => PVE_VERSION });
  define(table, 'GET', '/cluster', {
    handle: () => ['status', 'resources', 'nextid', 'tasks', 'ha', 'options'].map((subdir) => ({ subdir })),
  });
  define(table, 'GET', '/cluster/status', {
    privilege: { name: 'Sys.Audit', path: rootAcl },
    handle: (ctx) => {
      const nodes = nodeFacts(ctx);
      return [
        {
          type: 'cluster',
          id: 'cluster',
          name: ctx.state.services.cluster.info.name || 'corral',
          nodes: nodes.length,
          quorate: 1,
          version: 1,
        },
        ...nodes.map((n, i) => ({
          type: 'node',
          id: `node/${n.node}`,
          name: n.node,
          nodeid: i + 1,
          online: n.row.ready ? 1 : 0,
          local: 0,
          ip: n.row.ip,
          level: '',
        })),
      ];
    },
  });
  define(table, 'GET', '/cluster/nextid', {
    handle: (ctx) => {
      const wanted = ctx.args.int('vmid');
      if (wanted !== undefined) {
        if (wanted < 100 || wanted > 999_999_999) throw paramError({ vmid: 'value must be between 100 and 999999999' });
        if (!ctx.state.vmids.isFree(wanted)) throw paramError({ vmid: `VM ${wanted} already exists` });
        return String(wanted);
      }
      return String(ctx.state.vmids.nextFree());
    },
  });
  define(table, 'GET', '/cluster/resources', {
    handle: async (ctx) => {
      const type = ctx.args.string('type');
      if (type !== undefined && !['vm', 'node', 'storage', 'sdn', 'pool'].includes(type))
        throw paramError({
          type: `value '${type}' does not have a value in the enumeration 'vm, storage, node, sdn, pool'`,
        });
      const buildRow = (_key: string, vmid: number, row: Parameters<typeof rowContext>[2]) => {
        const rc = rowContext(ctx, vmid, row);
        const pool = ctx.state.services.pools.poolOf(row.namespace, row.name);
        return {
          row: { ...resourceRow(rc), ...(pool ? { pool: poolidOf(pool) } : {}) },
          since: rc.runtime.runningSince,
        };
      };
      // PVE's `vm` type is qemu and lxc guests alike: containers follow the VMs, built per request (few of them).
      const now = Date.now();
      const cts = !type || type === 'vm' ? ctx.state.ctsWithIds() : [];
      const ctRows = cts.map((ct) => {
        const pool = ctx.state.services.pools.poolOf(ct.ref.namespace, ct.ref.name);
        return JSON.stringify({
          ...lxcResourceRow(ctContext(ctx, ct, now)),
          ...(pool ? { pool: poolidOf(pool) } : {}),
        });
      });
      // The hot path of Terraform and Ansible (every read): a cached, already encoded body.
      if (type === 'vm' && ctRows.length === 0) return new RawJson('', ctx.state.vmResourcesBody(now, buildRow));
      const parts: string[] = [];
      const nodes = type === 'vm' ? [] : nodeFacts(ctx);
      if (!type || type === 'node') for (const n of nodes) parts.push(JSON.stringify(nodeRow(n)));
      if (!type || type === 'vm') {
        const vms = ctx.state.vmResourcesJson(now, buildRow);
        if (vms.length > 2) parts.push(vms.slice(1, -1));
        parts.push(...ctRows);
      }
      if (!type || type === 'storage')
        for (const s of await storageResourceRows(
          ctx,
          nodes.map((n) => n.node),
        ))
          parts.push(JSON.stringify(s));
      if (!type || type === 'pool') for (const row of poolResourceRows(ctx)) parts.push(JSON.stringify(row));
      return new RawJson(`[${parts.join(',')}]`);
    },
  });
  define(table, 'GET', '/cluster/tasks', {
    handle: (ctx) =>
      ctx.state.services.journal.list(500).flatMap((t) => {
        const upid = upidOf(ctx, t);
        const hit = ctx.state.upids.resolve(upid);
        return hit ? [taskListRow(t, hit.upid, upid)] : [];
      }),
  });
  define(table, 'GET', '/cluster/ha/groups', { handle: () => [] });
  define(table, 'GET', '/cluster/ha/resources', { handle: () => [] });
  define(table, 'GET', '/cluster/options', { handle: () => ({ keyboard: 'en-us', 'next-id': { lower: '100' } }) });

  // Tasks
  define(table, 'GET', '/nodes/{node}/tasks', { handle: nodeTasks });
  define(table, 'GET', '/nodes/{node}/tasks/{upid}', {
    handle: (ctx) => (resolveTask(ctx), [{ subdir: 'log' }, { subdir: 'status' }]),
  });
  // PVE's "stop task": the owner may, anyone else needs Sys.Modify. Only tasks that can stop part-way (a move)
  // accept it; they undo what they did and end with `cancelled by <user>` (Corral's POST /api/tasks/{id}/cancel).
  define(table, 'DELETE', '/nodes/{node}/tasks/{upid}', {
    handle: (ctx) => {
      const { task } = resolveTask(ctx);
      const { identity } = ctx.state.caller(ctx.principal);
      const may = { ...identity, admin: hasPrivilege(ctx.principal.role, 'Sys.Modify') };
      corralSync(() => ctx.state.services.journal.cancel(task.id, may));
      return null;
    },
  });
  define(table, 'GET', '/nodes/{node}/tasks/{upid}/status', {
    handle: (ctx) => {
      const { task, upid, parsed } = resolveTask(ctx);
      return taskStatus(task, parsed, upid);
    },
  });
  define(table, 'GET', '/nodes/{node}/tasks/{upid}/log', {
    handle: (ctx) => {
      const { task } = resolveTask(ctx);
      return taskLog(task, ctx.args.int('start', { min: 0 }) ?? 0, ctx.args.int('limit', { min: 0 }) ?? 50);
    },
  });
}
