/**
 * The clusters beyond the first (`corral web --context a --context b`, `--all-contexts`, two embedded clusters in
 * `npm start`): each gets the same stack the first gets in start.ts — its own KubeCluster and watch cache, its own
 * domain services (fleet view, journal, live feed, pools store, doctor) — and they are joined in one
 * ClusterRegistry keyed by kube context (domain/registry.ts). A cluster that does not answer never holds the
 * others up: its cache starts without waiting, /readyz follows the first cluster, and its rows are marked stale.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeCluster, loadKubeConfig, type KubeconfigSource } from './cluster';
import type { ReplicaConfig } from './domain/replicas';
import type { RateLimit } from './cluster/rate-limiter';
import { createCorralServices, type CorralConfig, type CorralServices } from './domain/services';

/** One cluster to serve: a kubeconfig (file, YAML or in-cluster) and the context in it. */
export interface ClusterSource {
  kube: KubeconfigSource;
  demo?: boolean;
  /** Display name (default: the kubeconfig's cluster name, or "embedded demo cluster"). */
  clusterName?: string;
}

export interface ClusterOptions {
  config?: Partial<CorralConfig>;
  replica?: Partial<ReplicaConfig>;
  requestTimeoutMs?: number;
  unreachableAfterMs?: number;
  syncTimeoutMs?: number;
  metricsIntervalMs?: number;
  kubeRateLimit?: RateLimit;
}

export interface OpenCluster {
  kubeConfig: KubeConfig;
  cluster: KubeCluster;
  services: CorralServices;
  /** Settles when the cache has listed everything once (rejects after syncTimeoutMs). */
  synced: Promise<void>;
  close(): Promise<void>;
}

/** Loads the kubeconfig of one cluster and builds its KubeCluster (nothing is started yet). */
export function kubeClusterFor(
  source: ClusterSource,
  options: ClusterOptions,
): { kubeConfig: KubeConfig; cluster: KubeCluster } {
  const kubeConfig = loadKubeConfig(source.kube);
  const cluster = new KubeCluster(kubeConfig, {
    demo: source.demo ?? false,
    name: source.clusterName ?? (source.demo ? 'embedded demo cluster' : undefined),
    requestTimeoutMs: options.requestTimeoutMs,
    unreachableAfterMs: options.unreachableAfterMs,
    metricsIntervalMs: options.metricsIntervalMs,
    ...(options.kubeRateLimit ? { rateLimit: options.kubeRateLimit } : {}),
  });
  return { kubeConfig, cluster };
}

/** A further cluster, started the way start.ts starts the first: watch, services, replicas, leader-only sampling. */
export async function openCluster(source: ClusterSource, options: ClusterOptions): Promise<OpenCluster> {
  const { kubeConfig, cluster } = kubeClusterFor(source, options);
  await cluster.cache.start();
  const synced = cluster.cache.waitForSync(options.syncTimeoutMs ?? 60_000);
  synced.catch((err: unknown) => console.warn(`[corral] ${cluster.info.context}: ${String(err)}`));
  const services = createCorralServices(cluster, options.config, options.replica);
  // Durable journal, heartbeat and leader election in this cluster too; only the leader samples metrics.
  await services.replicas.start();
  services.replicas.elector.onChange((leading) => (leading ? cluster.metrics.start() : cluster.metrics.stop()));
  return {
    kubeConfig,
    cluster,
    services,
    synced,
    async close() {
      await services.replicas.stop();
      services.close();
      await cluster.stop();
    },
  };
}

/**
 * The sources of `corral web`: every `--context` of the kubeconfig (or all of them with `--all-contexts`), then
 * every context of each extra kubeconfig file (a mounted Secret, `--kubeconfig-dir`). Duplicated context names are
 * refused: routes, rows and pool refs name a cluster by its context.
 */
export function clusterSources(options: {
  kubeconfig?: string;
  contexts: string[];
  allContexts: boolean;
  extraKubeconfigs: string[];
}): ClusterSource[] {
  const sources: ClusterSource[] = [];
  const base = { ...(options.kubeconfig ? { file: options.kubeconfig } : {}) };
  if (options.allContexts) {
    const kc = loadKubeConfig(base);
    for (const c of kc.getContexts()) sources.push({ kube: { ...base, context: c.name } });
  } else if (options.contexts.length > 0) {
    for (const context of options.contexts) sources.push({ kube: { ...base, context } });
  } else {
    sources.push({ kube: base });
  }
  for (const file of options.extraKubeconfigs) {
    const kc = loadKubeConfig({ file });
    for (const c of kc.getContexts()) sources.push({ kube: { file, context: c.name } });
  }
  const seen = new Set<string>();
  for (const s of sources) {
    const name = s.kube.context ?? loadKubeConfig(s.kube).getCurrentContext();
    if (seen.has(name)) throw new Error(`context ${name} is configured twice (each served cluster needs its own name)`);
    seen.add(name);
  }
  return sources;
}
