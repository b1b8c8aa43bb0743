/** What every domain operation receives: the cluster, the journal, the fleet view and the static config. */
import type { ClusterPort } from './cluster-port';
import type { PveHosts } from './move-pve-port';
import type { Identity } from './identity';
import type { TaskJournal } from './tasks';
import type { FleetView } from './vm-rows';

export interface CorralConfig {
  /** Namespace for new VMs (CORRAL_NAMESPACE, default tailvm); also holds Corral's own ConfigMaps. */
  defaultNamespace: string;
  /** Poll interval while waiting on objects outside the cache (Jobs); tests shorten it. */
  pollMs: number;
  /** Upper bound for background waits (bootc build, migration). */
  waitTimeoutMs: number;
}

export interface DomainDeps {
  cluster: ClusterPort;
  journal: TaskJournal;
  fleet: FleetView;
  config: CorralConfig;
  /** Every cluster this Corral serves (set by the registry, registry.ts), for what spans them: pool members. */
  peers?: ClusterPeers;
  /** The Proxmox VE hosts a VM can be moved to (`corral web --pve NAME=URL`; domain/move-pve.ts). */
  pveHosts?: PveHosts;
}

/** The served clusters by kube context; `all()` in configured order, this one included. */
export interface ClusterPeers {
  get(context: string): DomainDeps | undefined;
  all(): DomainDeps[];
}

/** The deps of the cluster `context` names (this one when it is its own), undefined when Corral does not serve it. */
export function depsFor(deps: DomainDeps, context: string): DomainDeps | undefined {
  if (context === deps.cluster.info.context) return deps;
  return deps.peers?.get(context);
}

/** Per-call context: who is asking (recorded as the task's caller). */
export interface Caller {
  identity: Identity;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
