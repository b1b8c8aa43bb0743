/**
 * What a caller may learn from an error, and what the gap log records.
 *
 * Errors from the cluster layer can carry the apiserver's address ("connect ECONNREFUSED 10.0.0.1:6443",
 * "request to https://10.96.0.1:443/apis/… failed"). Only an Administrator sees them as they are; for everybody
 * else (and anonymous callers) URLs, IP addresses (with or without a port) and `name.domain:port` become
 * "the cluster". The operator's log always has the full text.
 */
import { redactAddresses as redactCorral } from '@/server/errors';
import { ProxmoxGapRegistry } from '@/server/domain/proxmox-gaps';
import { ProxmoxError, toProxmoxError } from './wire';

/** Addresses become "the cluster", in the words a Proxmox client shows its user. */
export function redactAddresses(text: string): string {
  return redactCorral(text, 'the cluster');
}

/** The error as a non-Administrator may see it. */
export function redactError(err: unknown): ProxmoxError {
  const pve = toProxmoxError(err);
  const message = redactAddresses(pve.message);
  const errors = pve.errors
    ? Object.fromEntries(Object.entries(pve.errors).map(([k, v]) => [k, redactAddresses(v)]))
    : undefined;
  if (message === pve.message && JSON.stringify(errors) === JSON.stringify(pve.errors)) return pve;
  return new ProxmoxError(pve.status, message, errors);
}

/**
 * The shape of an unknown path for the gap log: ids (numbers, UPIDs, volume ids) and the names that follow
 * `nodes`, `storage`, `snapshot`, `tasks`, … become placeholders, so one missing endpoint is one line however many
 * VMs or nodes a client touches.
 */
const NAMED_AFTER: Record<string, string> = {
  nodes: '{node}',
  storage: '{storage}',
  snapshot: '{snapname}',
  tasks: '{upid}',
  content: '{volume}',
  pools: '{poolid}',
  users: '{userid}',
  groups: '{groupid}',
  roles: '{roleid}',
  domains: '{realm}',
};

const plain = (seg: string) => seg.length <= 40 && /^[A-Za-z0-9._-]+$/.test(seg);

export function gapShape(segments: string[]): string {
  const out: string[] = [];
  segments.forEach((seg, i) => {
    const prev = segments[i - 1];
    if (prev !== undefined && NAMED_AFTER[prev] && i % 2 === 1) out.push(NAMED_AFTER[prev]);
    else if (/^\d+$/.test(seg)) out.push('{id}');
    else out.push(plain(seg) ? seg : '{arg}');
  });
  return `/${out.join('/')}`;
}

/** The path as logged: the client's own segments, except ones that are long or not plain (`{arg}`). */
export function gapPath(segments: string[]): string {
  return `/${segments.map((s) => (plain(s) ? s : '{arg}')).join('/')}`;
}

/**
 * The gap log: every request for an unserved endpoint is counted in the registry (served as `GET /api/proxmox/gaps`),
 * and each METHOD + shape is logged once, at most `registry.capacity` of them.
 */
export class GapLog {
  private full = false;

  constructor(
    private readonly log: (line: string) => void,
    readonly registry: ProxmoxGapRegistry = new ProxmoxGapRegistry(),
  ) {}

  /** Counts the request; logs `[proxmox-gap] METHOD PATH` the first time this METHOD + path shape is seen. */
  note(method: string, segments: string[], caller = ''): void {
    const registry = this.registry;
    const outcome = registry.note(method, gapShape(segments), gapPath(segments), caller);
    if (outcome === 'new') this.log(`[proxmox-gap] ${method} ${gapPath(segments)}`);
    else if (outcome === 'dropped' && !this.full) {
      this.full = true;
      this.log(`[proxmox-gap] (more than ${registry.capacity} distinct gaps; no further ones are logged)`);
    }
  }
}
