/** `/nodes`, `/nodes/{node}` and its non-VM, non-storage children (status, version, time, dns, hosts, network). */
import { createHash } from 'node:crypto';
import { nodeUptimeSeconds } from '@/server/domain/node-uptime';
import { listNads } from '@/server/domain/vm-hardware';
import type { NodeRow } from '@/server/schemas/nodes';
import { upidNode } from '../translate/upid';
import { parseQuantity } from '../translate/size';
import { pveState } from '../translate/status';
import { ProxmoxError } from '../wire';
import { define, nodeAcl, type EndpointContext, type Routes } from './context';

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

export interface NodeFacts {
  /** The PVE-safe node name. */
  node: string;
  row: NodeRow;
  maxmem: number;
  mem: number;
  maxcpu: number;
  /** Fraction of maxcpu in use (NodeMetrics); 0 without metrics-server. */
  cpu: number;
  /** Seconds the node has been Ready (the domain's node uptime); 0 when it is not. */
  uptime: number;
}

/**
 * Nodes with their allocatable capacity and their usage: measured (NodeMetrics) when metrics-server answers, else
 * the memory of the VMs running on them (an allocation figure, the best known without measurements).
 */
export function nodeFacts(ctx: EndpointContext, now = Date.now()): NodeFacts[] {
  const usedByNode = new Map<string, number>();
  for (const row of ctx.state.services.fleet.vmRows()) {
    if (!row.node || pveState(row.status).status !== 'running') continue;
    usedByNode.set(row.node, (usedByNode.get(row.node) ?? 0) + (parseQuantity(row.mem) ?? 0));
  }
  const deps = ctx.state.services.deps;
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
      uptime: row.ready ? nodeUptimeSeconds(deps, row.name, now) : 0,
    };
  });
}

export function requireNode(ctx: EndpointContext): NodeFacts {
  const name = ctx.path.node ?? '';
  const node = nodeFacts(ctx).find((n) => n.node === name);
  // PVE answers 500 here; 404 like an unknown VM (docs/proxmox.md, deliberate deviations): not a server fault.
  if (!node) throw new ProxmoxError(404, `hostname lookup '${name}' failed - no such node in the cluster`);
  return node;
}

/** A node as `/nodes` and `/cluster/resources` list it. */
export function nodeRow(n: NodeFacts): Record<string, unknown> {
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
    uptime: n.uptime,
    level: '',
  };
}

export function registerNodes(table: Routes): void {
  define(table, 'GET', '/nodes', { handle: (ctx) => nodeFacts(ctx).map(nodeRow) });
  define(table, 'GET', '/nodes/{node}', {
    handle: (ctx) => {
      requireNode(ctx);
      return ['qemu', 'lxc', 'status', 'storage', 'tasks', 'network', 'rrddata', 'version', 'time', 'dns', 'hosts'].map(
        (subdir) => ({ subdir }),
      );
    },
  });
  define(table, 'GET', '/nodes/{node}/status', {
    privilege: { name: 'Sys.Audit', path: nodeAcl },
    handle: (ctx) => {
      const n = requireNode(ctx);
      return {
        uptime: n.uptime,
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
}
