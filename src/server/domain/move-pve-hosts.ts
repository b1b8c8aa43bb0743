/**
 * Move to a Proxmox VE host (ADR-0010, backend `pve`): the configured hosts, what each offers a move (a node, an
 * import storage, a disk storage) and why one cannot receive, as the destinations list shows them. Every PVE
 * destination notes that the move is one way: PVE's API has no disk download, so nothing comes back over it.
 */
import { CorralError } from '../errors';
import type { MoveDestination, MoveDestinations, MoveInput, MoveRefusal } from '../schemas/move';
import type { DomainDeps } from './deps';
import { exportProblem, moveDestinations, type MoveSource, resolveSource, unreachable } from './move-destinations';
import { PveFailure, type PveHost, type PveHosts, type PveStorageRow } from './move-pve-port';

export const PVE_BACKEND = 'pve';
export const ONE_WAY_NOTE =
  "one way: a VM on a Proxmox VE host cannot be moved back to KubeVirt through PVE's API, which has no disk download";

/** The configured PVE hosts (none unless `corral web --pve NAME=URL` named some). */
export function pveHostsOf(deps: DomainDeps): PveHosts | undefined {
  return deps.pveHosts;
}

export function pveHost(deps: DomainDeps, name: string | undefined): PveHost {
  const hosts = pveHostsOf(deps)?.all() ?? [];
  if (hosts.length === 0)
    throw new CorralError(
      'BAD_REQUEST',
      'toBackend: must be kubevirt here: no Proxmox VE host is configured (start corral web with --pve NAME=URL)',
    );
  const host = name === undefined ? hosts[0] : hosts.find((h) => h.name === name);
  if (!host)
    throw new CorralError(
      'NOT_FOUND',
      `toContext: no Proxmox VE host named ${name} (configured: ${hosts.map((h) => h.name).join(', ')})`,
    );
  return host;
}

/** Why a call to the host failed, as a reason a person can act on. */
export function hostProblem(host: PveHost, err: unknown): MoveRefusal {
  if (err instanceof PveFailure && err.kind === 'unreachable')
    return {
      reason: `PVE host ${host.name} does not answer: ${err.message}`,
      remedy: `check that ${host.url} is up and reachable from Corral`,
    };
  if (err instanceof PveFailure && err.kind === 'unauthorized')
    return {
      reason: `PVE host ${host.name} refuses Corral's API token (${err.status})`,
      remedy: `check CORRAL_PVE_${host.name.toUpperCase().replace(/-/g, '_')}_TOKEN and give the token VM.Allocate, VM.Config.*, VM.PowerMgmt, Datastore.AllocateSpace and Datastore.AllocateTemplate`,
    };
  return {
    reason: `PVE host ${host.name} failed: ${err instanceof Error ? err.message : String(err)}`,
    remedy: "see the host's task log and try again",
  };
}

/** What the host offers a move: a node, an import storage, a disk storage, or what is missing. */
export interface HostFacts {
  version: string;
  node?: string;
  importStorage?: PveStorageRow;
  diskStorage?: PveStorageRow;
  storages: PveStorageRow[];
  refusals: MoveRefusal[];
}

function versionAtLeast(version: string, major: number, minor: number): boolean {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) return true; // an unknown scheme (Corral's own answers 8.x): let the storages decide
  const [a, b] = [Number(m[1]), Number(m[2])];
  return a > major || (a === major && b >= minor);
}

export async function hostFacts(host: PveHost, want: { node?: string; storage?: string }): Promise<HostFacts> {
  const refusals: MoveRefusal[] = [];
  let version = '';
  try {
    version = (await host.version()).version;
    if (!versionAtLeast(version, 8, 2))
      refusals.push({
        reason: `PVE host ${host.name} runs ${version}, which has no import content for disk images`,
        remedy: 'upgrade it to Proxmox VE 8.2 or later',
      });
    const nodes = await host.nodes();
    const node = want.node ? nodes.find((n) => n.node === want.node) : nodes.find((n) => n.online);
    if (!node || !node.online) {
      refusals.push({
        reason: want.node
          ? `node ${want.node} of PVE host ${host.name} is ${node ? 'offline' : 'not in its cluster'}`
          : `PVE host ${host.name} has no online node`,
        remedy: want.node
          ? `pick another node (toNode): ${nodes.map((n) => n.node).join(', ')}`
          : 'bring a node online',
      });
      return { version, storages: [], refusals };
    }
    const storages = (await host.storages(node.node)).filter((s) => s.active);
    const importStorage = storages.find((s) => s.content.includes('import'));
    if (!importStorage)
      refusals.push({
        reason: `PVE host ${host.name} (node ${node.node}) has no storage with the 'import' content type`,
        remedy: "enable content 'Import' on a file-based storage (Datacenter → Storage → Edit), e.g. local",
      });
    const diskStorage = want.storage
      ? storages.find((s) => s.storage === want.storage)
      : storages.find((s) => s.content.includes('images'));
    if (!diskStorage || !diskStorage.content.includes('images'))
      refusals.push({
        reason: want.storage
          ? `storage ${want.storage} on ${host.name}/${node.node} ${diskStorage ? "does not take disk images (content 'images')" : 'does not exist or is not active'}`
          : `PVE host ${host.name} (node ${node.node}) has no active storage for disk images (content 'images')`,
        remedy: `pick a storage with content 'images' (toStorage): ${
          storages
            .filter((s) => s.content.includes('images'))
            .map((s) => s.storage)
            .join(', ') || 'none'
        }`,
      });
    return {
      version,
      node: node.node,
      ...(importStorage ? { importStorage } : {}),
      ...(diskStorage?.content.includes('images') ? { diskStorage } : {}),
      storages,
      refusals,
    };
  } catch (err) {
    return { version, storages: [], refusals: [...refusals, hostProblem(host, err)] };
  }
}

/** The configured PVE hosts as destinations of `source`, each with why it cannot receive. */
export async function pveDestinations(deps: DomainDeps, source: MoveSource): Promise<MoveDestination[]> {
  const hosts = pveHostsOf(deps)?.all() ?? [];
  if (hosts.length === 0) return [];
  const sourceWhy = [unreachable(source.deps), await exportProblem(source.deps)].filter(Boolean);
  return Promise.all(
    hosts.map(async (host): Promise<MoveDestination> => {
      const facts = await hostFacts(host, {});
      const reasons = [...sourceWhy, ...facts.refusals.map((r) => r.reason)];
      return {
        backend: PVE_BACKEND,
        context: host.name,
        name: `${host.name} (Proxmox VE${facts.version ? ` ${facts.version}` : ''})`,
        default: false,
        ok: reasons.length === 0,
        reasons,
        note: ONE_WAY_NOTE,
      };
    }),
  );
}

/** `GET /api/move/destinations`: the served clusters, then the configured PVE hosts. */
export async function allMoveDestinations(deps: DomainDeps, refText: string): Promise<MoveDestinations> {
  const kube = await moveDestinations(deps, refText);
  const pve = await pveDestinations(deps, resolveSource(deps, refText));
  return { ...kube, destinations: [...kube.destinations, ...pve] };
}

const PVE_ONLY = ['vmid', 'toNode', 'toStorage', 'bridge'] as const;

/** A move to a served cluster refuses the fields that only mean something on a PVE host (400 naming the field). */
export function requireKubevirtFields(input: MoveInput): void {
  for (const k of PVE_ONLY)
    if (input[k] !== undefined)
      throw new CorralError('BAD_REQUEST', `${k}: only for a move to a Proxmox VE host (toBackend pve)`);
}
