/**
 * Starting Corral: cluster layer → services → HTTP server → optional plug-ins (Proxmox API, consoles) → Next.js.
 * Used by server.ts (the process entry) and by integration tests (without Next). Plug-ins are discovered by file:
 * a module at src/proxmox/index.ts or src/server/consoles/index.ts that exports
 * `attachToCorral(host: CorralHost)` is attached; a missing file is normal, a failing import stops the start.
 */
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { KubeConfig } from '@kubernetes/client-node';
import { KubeCluster, loadKubeConfig, type KubeconfigSource } from './cluster';
import type { RateLimit } from './cluster/rate-limiter';
import { openCluster, type ClusterSource } from './clusters';
import { PrometheusCollector } from './domain/prometheus';
import { ClusterRegistry } from './domain/registry';
import { PveClients, type PveHostConfig } from './pve-client/client';
import type { ReplicaConfig } from './domain/replicas';
import { createCorralServices, type CorralConfig, type CorralServices } from './domain/services';
import { createCorralHttpServer, type CorralHttpServer } from './http/corral-server';
import type { HttpLimits } from './http/limits';
import { trustConfig, type TrustConfig } from './http/trust';
import { firstScreenRoute } from './http/first-screen';
import { applySecurityHeaders } from './http/security-headers';
import { accessModeLine, identityFor } from './identity-http';

export interface CorralHost {
  http: CorralHttpServer;
  services: CorralServices;
  kubeConfig: KubeConfig;
  identityFor: typeof identityFor;
}

export interface StartOptions {
  kube: KubeconfigSource;
  demo?: boolean;
  clusterName?: string;
  port?: number;
  /** Listen address (default 127.0.0.1; `corral web` passes 0.0.0.0 unless --host says otherwise). */
  host?: string;
  /** `--open`: without CORRAL_ADMINS, callers from other machines may change state too (default CORRAL_OPEN). */
  open?: boolean;
  /** Overrides of the request limits (docs/security.md). */
  limits?: Partial<HttpLimits>;
  /** Serve the Next.js UI (false in API-only tests). */
  next?: { dev: boolean; dir: string } | false;
  /** Attach plug-ins found on disk (default true). */
  plugins?: boolean;
  config?: Partial<CorralConfig>;
  requestTimeoutMs?: number;
  unreachableAfterMs?: number;
  syncTimeoutMs?: number;
  /** metrics.k8s.io sampling interval (default 15 s). */
  metricsIntervalMs?: number;
  /** Clusters served beside the first (`kube`): `--context a --context b`, `--all-contexts`, `npm start`'s lab. */
  moreClusters?: ClusterSource[];
  /** Client-side rate limit of every request to the cluster (`--kube-qps`/`--kube-burst`; default 50/100). */
  kubeRateLimit?: RateLimit;
  /** PEM certificate and key: the whole port (UI, REST, tRPC, /api2/json, WebSockets) speaks HTTPS. */
  tls?: { cert: string; key: string };
  /** `--metrics`: collect the Prometheus snapshot every `intervalMs` (default 15 s) for GET /metrics. */
  prometheus?: { intervalMs?: number };
  /** Replica identity, lease duration and journal retention (default from CORRAL_* variables: replicas.ts). */
  replica?: Partial<ReplicaConfig>;
  /** `--pve NAME=URL`: Proxmox VE hosts a VM can be moved to (pve-client/config.ts parses them). */
  pveHosts?: PveHostConfig[];
}

export interface ShutdownOptions {
  /** How long /readyz says 503 while requests are still served, so load balancers stop sending first. */
  drainDelayMs?: number;
  /** The whole shutdown's budget (the pod's termination grace period minus a margin). */
  graceMs?: number;
}

export interface RunningCorral {
  url: string;
  port: number;
  http: CorralHttpServer;
  services: CorralServices;
  /** Every served cluster by kube context, `services` first (one entry unless `moreClusters` was given). */
  registry: ClusterRegistry;
  cluster: KubeCluster;
  trust: TrustConfig;
  /** The /metrics collector when started with `prometheus` (--metrics). */
  prometheus?: PrometheusCollector;
  /** Who may change state and whom identity headers are believed from, for the startup log. */
  accessMode: string;
  /**
   * Graceful stop (SIGTERM): /readyz turns 503, requests keep being served for `drainDelayMs`, then the listener
   * closes; running tasks get until the grace period's end to finish (the rest are marked interrupted), consoles are
   * closed with a reason, leadership is released and the journal flushed. Then everything is closed.
   */
  shutdown(options?: ShutdownOptions): Promise<void>;
  close(): Promise<void>;
}

export const SHUTDOWN_INTERRUPTED = 'interrupted (replica shut down)';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const PLUGIN_MODULES = ['../proxmox/index', './consoles/index'];

async function attachPlugins(host: CorralHost): Promise<string[]> {
  const attached: string[] = [];
  for (const rel of PLUGIN_MODULES) {
    const base = fileURLToPath(new URL(rel, import.meta.url));
    const file = ['.ts', '.js'].map((ext) => base + ext).find((f) => existsSync(f));
    if (!file) continue;
    const mod = (await import(pathToFileURL(file).href)) as {
      attachToCorral?: (h: CorralHost) => void | Promise<void>;
    };
    if (typeof mod.attachToCorral === 'function') {
      await mod.attachToCorral(host);
      attached.push(rel);
    }
  }
  return attached;
}

async function attachNext(
  http: CorralHttpServer,
  opts: { dev: boolean; dir: string },
  hostname: string,
  port: number,
): Promise<() => Promise<void>> {
  const { default: next } = await import('next');
  // Next attaches its HMR upgrade listener to `httpServer`; a private server that never listens keeps it off
  // Corral's own upgrade routing (stack-notes §3).
  const upgradeBus: Server = createServer();
  const app = next({ dev: opts.dev, dir: opts.dir, hostname, port, httpServer: upgradeBus });
  await app.prepare();
  const handler = app.getRequestHandler();
  // The Datacenter's first rows are rendered into its HTML (http/first-screen.ts).
  const firstScreen = firstScreenRoute(http.services);
  http.setFallback(
    (req, res) => {
      // Every response Next produces (pages, /_next assets, errors) carries the security headers; the request
      // gets the same CSP, from which Next and the root layout take the script nonce.
      applySecurityHeaders(req, res, { dev: opts.dev });
      firstScreen.mark(req);
      return handler(req, res);
    },
    opts.dev ? (req, socket, head) => void upgradeBus.emit('upgrade', req, socket, head) : undefined,
  );
  return async () => {
    firstScreen.close();
    await app.close();
  };
}

export async function startCorral(options: StartOptions): Promise<RunningCorral> {
  const kubeConfig = loadKubeConfig(options.kube);
  const cluster = new KubeCluster(kubeConfig, {
    demo: options.demo ?? false,
    name: options.clusterName ?? (options.demo ? 'embedded demo cluster' : undefined),
    requestTimeoutMs: options.requestTimeoutMs,
    unreachableAfterMs: options.unreachableAfterMs,
    metricsIntervalMs: options.metricsIntervalMs,
    ...(options.kubeRateLimit ? { rateLimit: options.kubeRateLimit } : {}),
  });
  // Start watching without blocking on a slow or down cluster: /readyz says 503 until the cache has synced.
  await cluster.cache.start();
  const synced = cluster.cache.waitForSync(options.syncTimeoutMs ?? 60_000);
  synced.catch((err: unknown) => console.warn(`[corral] ${String(err)}`));
  const services = createCorralServices(cluster, options.config, options.replica);
  // Heartbeat, durable journal (the first list adopts every task the cluster holds) and leader election.
  await services.replicas.start();
  // Metrics sampling is a singleton: only the leader samples (docs/deploy.md, "High availability").
  services.replicas.elector.onChange((leading) => (leading ? cluster.metrics.start() : cluster.metrics.stop()));
  // Further clusters (clusters.ts): each with its own cache and services, joined by kube context; `services` (the
  // first) is what requests without a `context` act on.
  const more = await Promise.all((options.moreClusters ?? []).map((source) => openCluster(source, options)));
  const registry = new ClusterRegistry([services, ...more.map((m) => m.services)]);
  // Every served cluster can move a VM to the configured PVE hosts (domain/move-pve.ts).
  const pveHosts = options.pveHosts?.length ? new PveClients(options.pveHosts) : undefined;
  if (pveHosts) for (const s of registry.all()) s.deps.pveHosts = pveHosts;
  const prometheus = options.prometheus
    ? new PrometheusCollector(services.deps, {
        intervalMs: options.prometheus.intervalMs,
        pools: { poolOf: services.pools.poolOf, paths: () => Object.keys(services.pools.store.current()) },
        replica: { identity: services.replicas.identity, isLeader: () => services.replicas.elector.isLeader },
      })
    : undefined;
  prometheus?.start();
  // Only the leader serves the fleet series: a replica that gains or loses the lead re-renders at once.
  services.replicas.elector.onChange(() => void prometheus?.recollect());
  // The first snapshot may predate the cache: take one as soon as it has synced rather than a whole interval later.
  synced.then(
    () => void (prometheus?.running && prometheus.collectNow()),
    () => undefined,
  );
  const hostname = options.host ?? '127.0.0.1';
  const trust = trustConfig({ listenHost: hostname, ...(options.open !== undefined ? { open: options.open } : {}) });
  // Ready means ready: not before the UI is attached, and not any more once a shutdown has begun.
  let notReady: string | undefined = options.next ? 'the web UI is still starting' : undefined;
  const http = createCorralHttpServer({
    services,
    trust,
    extraReadiness: () => notReady,
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.tls ? { tls: options.tls } : {}),
    ...(prometheus ? { prometheus } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    http.server.once('error', reject);
    http.server.listen(options.port ?? 8006, hostname, () => {
      http.server.off('error', reject);
      resolve();
    });
  });
  const port = (http.server.address() as AddressInfo).port;
  if (options.plugins !== false) await attachPlugins({ http, services, kubeConfig, identityFor });
  let closeNext: (() => Promise<void>) | undefined;
  if (options.next)
    closeNext = await attachNext(http, options.next, hostname === '0.0.0.0' ? 'localhost' : hostname, port);
  notReady = undefined;
  const urlHost = hostname === '0.0.0.0' || hostname === '::' ? '127.0.0.1' : hostname;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      prometheus?.close();
      await services.replicas.stop();
      for (const m of more) await m.close();
      registry.close();
      pveHosts?.close();
      services.close();
      await http.close();
      await closeNext?.();
      await cluster.stop();
    })());
  return {
    url: `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`,
    port,
    http,
    services,
    registry,
    cluster,
    trust,
    ...(prometheus ? { prometheus } : {}),
    accessMode: accessModeLine(trust),
    async shutdown(opts: ShutdownOptions = {}) {
      const deadline = Date.now() + (opts.graceMs ?? 25_000);
      notReady = 'shutting down';
      await sleep(opts.drainDelayMs ?? 0);
      // Stop accepting; idle keep-alive connections close, requests in flight finish.
      http.server.close();
      http.server.closeIdleConnections();
      while (services.journal.runningLocal().length > 0 && Date.now() < deadline - 500) await sleep(100);
      const interrupted = services.journal.interruptLocal(SHUTDOWN_INTERRUPTED);
      if (interrupted) console.warn(`[corral] ${interrupted} task(s) still running at shutdown: marked interrupted`);
      await close();
    },
    close,
  };
}
