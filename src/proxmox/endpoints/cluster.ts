/** `/version`, `/cluster/*`, `/nodes`, `/nodes/{node}/*` (non-VM), `/storage`, `/pools`, tasks. */
import { createHash } from 'node:crypto';
import { listNads } from '@/server/domain/vm-hardware';
import type { NodeRow } from '@/server/schemas/nodes';
import type { Task } from '@/server/schemas/tasks';
import { upidNode } from '../translate/upid';
import { parseQuantity } from '../translate/size';
import { pveState } from '../translate/status';
import { isoVolumes, pveStorages, findStorage, ISO_STORAGE, type PveStorage } from '../storage-map';
import { resourceRow } from '../vm-view';
import { taskListRow, taskLog, taskStatus } from '../tasks';
import { ProxmoxError, RawJson, paramError } from '../wire';
import { define, nodeAcl, rootAcl, storageAcl, type EndpointContext, type Routes } from './context';
import { rowContext } from './qemu';

/** `GET /version` as proxmox-api.md specifies it: static 8.2.0, repoid `corral-kubevirt`. */
export const PVE_VERSION = { version: '8.2.0', release: '8.2', repoid: 'corral-kubevirt' };

/** `/etc/hosts` of a node as PVE's `GET /nodes/{node}/hosts` returns it: the file's text and its sha1 digest. */
export function nodeHosts(node: string, ip: string): { data: string; digest: string } {
  const data = [
    '127.0.0.1 localhost.localdomain localhost',
    `${ip || '127.0.1.1'} ${node}.cluster.local ${node}`,
    '',
    '# The following lines are desirable for IPv6 capable hosts',
    '',
    '::1     ip6-localhost ip6-loopback',
    'fe00::0 ip6-localnet',
    'ff00::0 ip6-mcastprefix',
    'ff02::1 ip6-allnodes',
    'ff02::2 ip6-allrouters',
    'ff02::3 ip6-allhosts',
    '',
  ].join('\n');
  return { data, digest: createHash('sha1').update(data).digest('hex') };
}

interface NodeFacts {
  node: string;
  row: NodeRow;
  maxmem: number;
  mem: number;
  maxcpu: number;
  /** Fraction of maxcpu in use (NodeMetrics); 0 without metrics-server. */
  cpu: number;
}

/**
 * Nodes with their allocatable capacity and their usage: measured (NodeMetrics) when metrics-server answers, else
 * the memory of the VMs running on them (an allocation figure, the best known without measurements).
 */
function nodeFacts(ctx: EndpointContext): NodeFacts[] {
  const usedByNode = new Map<string, number>();
  for (const row of ctx.state.services.fleet.vmRows()) {
    if (!row.node || pveState(row.status).status !== 'running') continue;
    usedByNode.set(row.node, (usedByNode.get(row.node) ?? 0) + (parseQuantity(row.mem) ?? 0));
  }
  return ctx.state.services.nodes.list().map((row) => {
    const measured = ctx.state.services.metrics.node(row.name);
    const maxcpu = Math.round(row.cpu);
    return {
      node: upidNode(row.name),
      row,
      maxmem: parseQuantity(row.memory) ?? 0,
      mem: measured ? measured.memoryBytes : (usedByNode.get(row.name) ?? 0),
      maxcpu,
      cpu: measured && row.cpu > 0 ? Math.min(1, measured.cpuCores / row.cpu) : 0,
    };
  });
}

function requireNode(ctx: EndpointContext): NodeFacts {
  const name = ctx.path.node ?? '';
  const node = nodeFacts(ctx).find((n) => n.node === name);
  // PVE answers 500 here; 404 like an unknown VM (docs/proxmox.md, deliberate deviations): not a server fault.
  if (!node) throw new ProxmoxError(404, `hostname lookup '${name}' failed - no such node in the cluster`);
  return node;
}

function nodeRow(n: NodeFacts): Record<string, unknown> {
  return {
    id: `node/${n.node}`,
    type: 'node',
    node: n.node,
    status: n.row.ready ? 'online' : 'offline',
    maxcpu: n.maxcpu,
    cpu: n.cpu,
    maxmem: n.maxmem,
    mem: Math.min(n.mem, n.maxmem || n.mem),
    maxdisk: 0,
    disk: 0,
    uptime: 0,
    level: '',
  };
}

/** The storage named in the path, or PVE's error for an unknown one. */
async function requireStorage(ctx: EndpointContext): Promise<PveStorage> {
  const s = await findStorage(ctx.state.services, ctx.path.storage ?? '');
  if (!s) throw new ProxmoxError(404, `storage '${ctx.path.storage}' does not exist`);
  return s;
}

/** A storage's status as the node lists it; sizes are 0 (a StorageClass has no capacity to report). */
function storageStatus(s: PveStorage) {
  return {
    storage: s.storage,
    type: s.type,
    content: s.content,
    shared: s.shared,
    active: 1,
    enabled: 1,
    total: 0,
    used: 0,
    avail: 0,
  };
}

async function storageRows(ctx: EndpointContext, node: string) {
  const storages = await pveStorages(ctx.state.services);
  return storages.map((s) => ({
    id: `storage/${node}/${s.storage}`,
    type: 'storage',
    storage: s.storage,
    node,
    status: 'available',
    plugintype: s.type,
    shared: s.shared,
    // PVE reports content types as a comma string; bpg decodes /cluster/resources `content` strictly, so only
    // storage rows (never requested with type=vm) carry it.
    content: s.content,
    disk: 0,
    maxdisk: 0,
  }));
}

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
        return { row: resourceRow(rc), since: rc.runtime.runningSince };
      };
      // The hot path of Terraform and Ansible (every read): a cached, already encoded body.
      if (type === 'vm') return new RawJson('', ctx.state.vmResourcesBody(Date.now(), buildRow));
      const parts: string[] = [];
      if (!type || type === 'node') for (const n of nodeFacts(ctx)) parts.push(JSON.stringify(nodeRow(n)));
      if (!type || type === 'vm') {
        const vms = ctx.state.vmResourcesJson(Date.now(), buildRow);
        if (vms.length > 2) parts.push(vms.slice(1, -1));
      }
      if (!type || type === 'storage')
        for (const n of nodeFacts(ctx)) for (const s of await storageRows(ctx, n.node)) parts.push(JSON.stringify(s));
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
  // Corral's pools (folders) are not served by the server yet; an empty list is what bpg needs (never null/404).
  define(table, 'GET', '/pools', { handle: () => [] });

  define(table, 'GET', '/nodes', { handle: (ctx) => nodeFacts(ctx).map(nodeRow) });
  define(table, 'GET', '/nodes/{node}', {
    handle: (ctx) => {
      requireNode(ctx);
      return ['qemu', 'lxc', 'status', 'storage', 'tasks', 'network', 'version', 'time', 'dns', 'hosts'].map(
        (subdir) => ({
          subdir,
        }),
      );
    },
  });
  define(table, 'GET', '/nodes/{node}/status', {
    privilege: { name: 'Sys.Audit', path: nodeAcl },
    handle: (ctx) => {
      const n = requireNode(ctx);
      return {
        uptime: 0,
        cpu: n.cpu,
        wait: 0,
        loadavg: ['0.00', '0.00', '0.00'],
        kversion: `Kubernetes node (kubelet ${n.row.kubelet})`,
        pveversion: `pve-manager/${PVE_VERSION.version}/corral`,
        cpuinfo: {
          cpus: n.maxcpu,
          sockets: 1,
          cores: n.maxcpu,
          model: n.row.cpuVendor || n.row.arch || 'unknown',
          mhz: '0',
          hvm: '1',
        },
        memory: { total: n.maxmem, used: n.mem, free: Math.max(0, n.maxmem - n.mem) },
        swap: { total: 0, used: 0, free: 0 },
        rootfs: { total: 0, used: 0, free: 0, avail: 0 },
        ksm: { shared: 0 },
      };
    },
  });
  define(table, 'GET', '/nodes/{node}/version', { handle: (ctx) => (requireNode(ctx), PVE_VERSION) });
  define(table, 'GET', '/nodes/{node}/time', {
    handle: (ctx) => {
      requireNode(ctx);
      const now = Math.floor(Date.now() / 1000);
      return { time: now, localtime: now, timezone: 'UTC' };
    },
  });
  define(table, 'GET', '/nodes/{node}/dns', {
    handle: (ctx) => (requireNode(ctx), { search: 'cluster.local', dns1: '10.96.0.10' }),
  });
  define(table, 'GET', '/nodes/{node}/hosts', {
    privilege: { name: 'Sys.Audit', path: nodeAcl },
    handle: (ctx) => {
      const n = requireNode(ctx);
      return nodeHosts(n.node, n.row.ip);
    },
  });
  define(table, 'GET', '/nodes/{node}/network', {
    privilege: { name: 'Sys.Audit', path: nodeAcl },
    handle: async (ctx) => {
      const n = requireNode(ctx);
      // Multus networks are the other bridges a NIC can name (`bridge=lan`); outside the VMs' namespace as ns/name.
      const deps = ctx.state.services.deps;
      const nads = await listNads(deps).catch(() => []);
      return [
        {
          iface: 'vmbr0',
          type: 'bridge',
          active: 1,
          autostart: 1,
          ...(n.row.ip ? { address: n.row.ip, cidr: `${n.row.ip}/32` } : {}),
          comments: 'the Kubernetes pod network',
        },
        ...nads.map((nad) => ({
          iface: nad.namespace === deps.config.defaultNamespace ? nad.name : `${nad.namespace}/${nad.name}`,
          type: 'bridge',
          active: 1,
          autostart: 1,
          ...(nad.bridge ? { bridge_ports: nad.bridge } : {}),
          comments: `Multus NetworkAttachmentDefinition ${nad.namespace}/${nad.name}${nad.type ? ` (${nad.type})` : ''}`,
        })),
      ];
    },
  });
  define(table, 'GET', '/nodes/{node}/lxc', { handle: (ctx) => (requireNode(ctx), []) });

  // Storage
  define(table, 'GET', '/storage', {
    handle: async (ctx) => {
      const type = ctx.args.string('type');
      return (await pveStorages(ctx.state.services))
        .filter((s) => !type || s.type === type)
        .map((s) => ({
          storage: s.storage,
          type: s.type,
          content: s.content,
          shared: s.shared,
          digest: '',
          ...(s.storageClass ? { 'storage-class': s.storageClass } : {}),
        }));
    },
  });
  define(table, 'GET', '/storage/{storage}', {
    handle: async (ctx) => {
      const s = await requireStorage(ctx);
      return { storage: s.storage, type: s.type, content: s.content, shared: s.shared };
    },
  });
  define(table, 'GET', '/nodes/{node}/storage', {
    privilege: { name: 'Datastore.Audit', path: () => '/storage' },
    handle: async (ctx) => {
      requireNode(ctx);
      const content = ctx.args.string('content');
      return (await pveStorages(ctx.state.services))
        .filter((s) => !content || s.content.split(',').includes(content))
        .map((s) => ({ ...storageStatus(s), used_fraction: 0 }));
    },
  });
  define(table, 'GET', '/nodes/{node}/storage/{storage}/status', {
    privilege: { name: 'Datastore.Audit', path: storageAcl },
    handle: async (ctx) => {
      requireNode(ctx);
      return storageStatus(await requireStorage(ctx));
    },
  });
  define(table, 'GET', '/nodes/{node}/storage/{storage}/content', {
    privilege: { name: 'Datastore.Audit', path: storageAcl },
    handle: async (ctx) => {
      requireNode(ctx);
      const s = await requireStorage(ctx);
      const content = ctx.args.string('content');
      if (s.storage !== ISO_STORAGE || (content && content !== 'iso')) return [];
      return (await isoVolumes(ctx.state.services)).map((v) => ({
        volid: v.volid,
        content: 'iso',
        format: 'iso',
        size: v.sizeBytes ?? 0,
        ctime: v.ctime,
      }));
    },
  });
  define(table, 'GET', '/nodes/{node}/storage/{storage}/content/{volume}', {
    privilege: { name: 'Datastore.Audit', path: storageAcl },
    handle: async (ctx) => {
      const volid = ctx.path.volume ?? '';
      const iso = (await isoVolumes(ctx.state.services)).find((v) => v.volid === volid);
      if (!iso) throw new ProxmoxError(404, `volume '${volid}' does not exist`);
      return { path: volid, format: 'iso', size: iso.sizeBytes ?? 0, used: iso.sizeBytes ?? 0 };
    },
  });

  // Tasks
  define(table, 'GET', '/nodes/{node}/tasks', {
    handle: (ctx) => {
      const node = ctx.path.node ?? '';
      const limit = ctx.args.int('limit', { min: 0 }) ?? 50;
      const start = ctx.args.int('start', { min: 0 }) ?? 0;
      const vmid = ctx.args.int('vmid');
      const errorsOnly = ctx.args.bool('errors') ?? false;
      const rows: Record<string, unknown>[] = [];
      for (const t of ctx.state.services.journal.list(500)) {
        const upid = upidOf(ctx, t);
        const hit = ctx.state.upids.resolve(upid);
        if (!hit || hit.upid.node !== node) continue;
        if (vmid !== undefined && hit.upid.id !== String(vmid)) continue;
        if (errorsOnly && t.status !== 'error') continue;
        rows.push(taskListRow(t, hit.upid, upid));
      }
      return rows.slice(start, start + limit);
    },
  });
  define(table, 'GET', '/nodes/{node}/tasks/{upid}', {
    handle: (ctx) => (resolveTask(ctx), [{ subdir: 'log' }, { subdir: 'status' }]),
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
