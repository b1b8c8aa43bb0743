/**
 * `/nodes/{node}/qemu/{vmid}/agent/…`: the QEMU guest agent commands PVE proxies, answered from the same domain code
 * as `GET /api/vms/{ns}/{name}/guestinfo` (src/server/domain/vm-guest.ts) in PVE's shapes — `{"result": …}` with
 * qemu-guest-agent's hyphenated field names. A VM that does not run, or runs without a connected agent, gets PVE's
 * own 500 texts ("VM 100 is not running", "QEMU guest agent is not running"), which Terraform's bpg provider and
 * the Ansible inventory retry on.
 */
import {
  GuestAgentUnavailable,
  guestFilesystems,
  guestInterfaces,
  guestOs,
  guestUsers,
  requireGuestAgent,
} from '@/server/domain/vm-guest';
import { fromCorral } from '../errors';
import type { ResolvedVm } from '../state';
import { ProxmoxError } from '../wire';
import { define, vmAcl, type EndpointContext, type Routes } from './context';

export const MONITOR = { name: 'VM.Monitor', path: vmAcl };

/** The read commands served here (GET), in the order `GET …/agent` lists them. */
export const AGENT_READS = [
  'get-osinfo',
  'get-host-name',
  'get-users',
  'get-fsinfo',
  'get-timezone',
  'network-get-interfaces',
] as const;

function resolve(ctx: EndpointContext): ResolvedVm {
  return ctx.state.resolveVm(ctx.path.node ?? '', ctx.path.vmid ?? '');
}

/** Runs one agent read for the VM of the path, with PVE's wording when the agent cannot answer. */
export async function agent<T>(
  ctx: EndpointContext,
  read: (namespace: string, name: string) => T | Promise<T>,
): Promise<T> {
  const vm = resolve(ctx);
  try {
    return await read(vm.ref.namespace, vm.ref.name);
  } catch (err) {
    if (err instanceof GuestAgentUnavailable)
      throw new ProxmoxError(
        500,
        err.problem === 'no-agent' ? 'QEMU guest agent is not running' : `VM ${vm.vmid} is not running`,
      );
    throw fromCorral(err);
  }
}

/** qemu-guest-agent reports login times as seconds since the epoch with a fraction. */
const epochSeconds = (iso: string) => Date.parse(iso) / 1000;

export const deps = (ctx: EndpointContext) => ctx.state.services.deps;

export function registerAgent(table: Routes): void {
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent', {
    privilege: MONITOR,
    handle: (ctx) => {
      resolve(ctx);
      return ['ping', ...AGENT_READS, 'fsfreeze-status', 'fsfreeze-freeze', 'fsfreeze-thaw'].map((name) => ({ name }));
    },
  });
  define(table, 'POST', '/nodes/{node}/qemu/{vmid}/agent/ping', {
    privilege: MONITOR,
    handle: async (ctx) => {
      await agent(ctx, (ns, name) => requireGuestAgent(deps(ctx), ns, name));
      return { result: {} };
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent/get-osinfo', {
    privilege: MONITOR,
    handle: async (ctx) => {
      const { os } = await agent(ctx, (ns, name) => guestOs(deps(ctx), ns, name));
      return {
        result: {
          id: os.id,
          name: os.name,
          'pretty-name': os.prettyName,
          version: os.version,
          'version-id': os.versionId,
          'kernel-release': os.kernelRelease,
          'kernel-version': os.kernelVersion,
          machine: os.machine,
        },
      };
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent/get-host-name', {
    privilege: MONITOR,
    handle: async (ctx) => {
      const { hostname } = await agent(ctx, (ns, name) => guestOs(deps(ctx), ns, name));
      return { result: { 'host-name': hostname } };
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent/get-timezone', {
    privilege: MONITOR,
    handle: async (ctx) => {
      const { timezone } = await agent(ctx, (ns, name) => guestOs(deps(ctx), ns, name));
      return { result: { zone: timezone.name, offset: timezone.offsetSeconds } };
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent/get-users', {
    privilege: MONITOR,
    handle: async (ctx) => {
      const users = await agent(ctx, (ns, name) => guestUsers(deps(ctx), ns, name));
      return {
        result: users.map((u) => ({
          user: u.name,
          'login-time': epochSeconds(u.loginTime),
          ...(u.domain ? { domain: u.domain } : {}),
        })),
      };
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent/get-fsinfo', {
    privilege: MONITOR,
    handle: async (ctx) => {
      const filesystems = await agent(ctx, (ns, name) => guestFilesystems(deps(ctx), ns, name));
      return {
        result: filesystems.map((f) => ({
          name: f.disks[0] ?? f.mountpoint,
          mountpoint: f.mountpoint,
          type: f.type,
          'used-bytes': f.usedBytes,
          'total-bytes': f.totalBytes,
          // KubeVirt passes on the block device names only; the PCI address fields qemu-ga adds are not known.
          disk: f.disks.map((d) => ({ dev: `/dev/${d}` })),
        })),
      };
    },
  });
  define(table, 'GET', '/nodes/{node}/qemu/{vmid}/agent/network-get-interfaces', {
    privilege: MONITOR,
    handle: async (ctx) => {
      const interfaces = await agent(ctx, (ns, name) => guestInterfaces(deps(ctx), ns, name));
      return {
        result: interfaces.map((i) => ({
          name: i.name,
          'hardware-address': i.mac.toLowerCase(),
          'ip-addresses': i.ips.map((ip) => ({
            'ip-address': ip,
            'ip-address-type': ip.includes(':') ? 'ipv6' : 'ipv4',
          })),
        })),
      };
    },
  });
}
