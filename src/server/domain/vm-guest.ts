/**
 * What the guest agent (qemu-guest-agent, through KubeVirt's VMI subresources) says about a running guest: OS,
 * hostname, timezone, logged-in users, filesystems, and the interfaces with their addresses. One reading for every
 * front door: `GET /api/vms/{ns}/{name}/guestinfo` and the Proxmox `…/agent/*` commands.
 *
 * Whether the agent can answer is decided from the watch cache first (VMI phase, Paused and AgentConnected
 * conditions), so a stopped VM or one without an agent costs no request to the cluster; the reason is said in
 * words (503). The subresources are read live — KubeVirt does not keep them on the VMI — in parallel.
 */
import { CorralError } from '../errors';
import type { GuestInfo } from '../schemas/vm-observe';
import type { DomainDeps } from './deps';
import { requireVm } from './vm-actions';
import { printableStatus, vmiActive, vmiPaused, vmiPhase } from './vm-facts';
import { vmRuntime, type GuestInterface } from './vm-runtime';

type Dict = Record<string, unknown>;
const obj = (v: unknown): Dict => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Dict) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Why the agent cannot answer: the VM does not run (or is paused), or it runs without a connected agent. */
export type AgentProblem = 'not-running' | 'paused' | 'no-agent';

/** 503 with the reason; `problem` lets the Proxmox door answer in PVE's words. */
export class GuestAgentUnavailable extends CorralError {
  constructor(
    readonly problem: AgentProblem,
    message: string,
  ) {
    super('UNAVAILABLE', message);
  }
}

export type GuestOsReport = Pick<GuestInfo, 'agentVersion' | 'hostname' | 'os' | 'timezone'>;
export type GuestUser = GuestInfo['users'][number];
export type GuestFilesystem = GuestInfo['filesystems'][number];

/** Throws 404 for a VM that does not exist and GuestAgentUnavailable when its agent cannot answer now. */
export function requireGuestAgent(deps: DomainDeps, namespace: string, name: string): void {
  const vm = requireVm(deps, namespace, name);
  const id = `VM ${namespace}/${name}`;
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  if (!vmiActive(vmi) || vmiPhase(vmi) !== 'Running') {
    const why = vmiActive(vmi)
      ? `not running yet (${vmiPhase(vmi) || 'Pending'})`
      : `not running (${printableStatus(vm)})`;
    throw new GuestAgentUnavailable('not-running', `${id} is ${why}: no guest agent to ask`);
  }
  if (vmiPaused(vmi)) throw new GuestAgentUnavailable('paused', `${id} is paused: its guest agent cannot answer`);
  if (!vmRuntime(deps, namespace, name).agentConnected)
    throw new GuestAgentUnavailable(
      'no-agent',
      `the guest agent of ${id} is not connected (the guest runs no qemu-guest-agent, or it has not started yet)`,
    );
}

/** A subresource read; an agent that went away between the cache check and the call is still a 503. */
async function agentRead(deps: DomainDeps, namespace: string, name: string, verb: string): Promise<Dict> {
  try {
    return obj(await deps.cluster.readSubresource('virtualmachineinstances', namespace, name, verb));
  } catch (err) {
    if (err instanceof CorralError && /guest agent|not running/i.test(err.message)) {
      const problem: AgentProblem = /not running/i.test(err.message) ? 'not-running' : 'no-agent';
      throw new GuestAgentUnavailable(problem, `VM ${namespace}/${name}: ${err.message}`);
    }
    throw err;
  }
}

/** `"UTC, 0"` / `"CET, 3600"` as KubeVirt formats the agent's guest-get-timezone (zone, seconds east of UTC). */
export function parseTimezone(raw: string): GuestInfo['timezone'] {
  const cut = raw.lastIndexOf(',');
  if (cut < 0) return { name: raw.trim(), offsetSeconds: 0 };
  const offset = Number(raw.slice(cut + 1).trim());
  return { name: raw.slice(0, cut).trim(), offsetSeconds: Number.isFinite(offset) ? offset : 0 };
}

export async function guestOs(deps: DomainDeps, namespace: string, name: string): Promise<GuestOsReport> {
  requireGuestAgent(deps, namespace, name);
  const info = await agentRead(deps, namespace, name, 'guestosinfo');
  const os = obj(info.os);
  return {
    agentVersion: str(info.guestAgentVersion),
    hostname: str(info.hostname),
    os: {
      name: str(os.name),
      prettyName: str(os.prettyName) || str(os.name),
      version: str(os.version),
      versionId: str(os.versionId),
      id: str(os.id),
      kernelRelease: str(os.kernelRelease),
      kernelVersion: str(os.kernelVersion),
      machine: str(os.machine),
    },
    timezone: parseTimezone(str(info.timezone)),
  };
}

export async function guestUsers(deps: DomainDeps, namespace: string, name: string): Promise<GuestUser[]> {
  requireGuestAgent(deps, namespace, name);
  const list = await agentRead(deps, namespace, name, 'userlist');
  return arr(list.items).map((raw) => {
    const u = obj(raw);
    const domain = str(u.domain);
    return {
      name: str(u.userName),
      ...(domain ? { domain } : {}),
      // The agent reports seconds since the epoch with a fraction.
      loginTime: new Date(Math.round(num(u.loginTime) * 1000)).toISOString(),
    };
  });
}

export async function guestFilesystems(deps: DomainDeps, namespace: string, name: string): Promise<GuestFilesystem[]> {
  requireGuestAgent(deps, namespace, name);
  const list = await agentRead(deps, namespace, name, 'filesystemlist');
  return arr(list.items).map((raw) => {
    const f = obj(raw);
    return {
      mountpoint: str(f.mountPoint),
      type: str(f.fileSystemType),
      usedBytes: num(f.usedBytes),
      totalBytes: num(f.totalBytes),
      disks: str(f.diskName) ? [str(f.diskName)] : [],
    };
  });
}

/** The interfaces the VMI status reports (KubeVirt merges the agent's names and addresses into it). */
export function guestInterfaces(deps: DomainDeps, namespace: string, name: string): GuestInterface[] {
  requireGuestAgent(deps, namespace, name);
  return vmRuntime(deps, namespace, name).interfaces;
}

export async function guestInfo(deps: DomainDeps, namespace: string, name: string): Promise<GuestInfo> {
  requireGuestAgent(deps, namespace, name);
  const [os, users, filesystems] = await Promise.all([
    guestOs(deps, namespace, name),
    guestUsers(deps, namespace, name),
    guestFilesystems(deps, namespace, name),
  ]);
  return { ...os, users, filesystems, interfaces: guestInterfaces(deps, namespace, name) };
}
