/**
 * The embedded cluster: a simulated Kubernetes + KubeVirt + CDI apiserver on loopback HTTP that real clients
 * (client-node, kubectl) talk to through a kubeconfig. `startEmbeddedCluster` is what tests, the demo and the
 * `npm run sim` command start.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { SimClock } from './clock.js';
import { FaultInjector } from './faults/fault-injector.js';
import { createApiServer } from './http/server.js';
import type { FieldValidation } from './http/resource-handlers.js';
import type { BaselineOptions, ContainerRuntime, FleetName, SimContext, SimModule } from './module.js';
import { defaultModules } from './modules.js';
import { crdFor, KINDS, registerKinds, type KindSpec } from './resources/kinds.js';
import { validateBuiltin } from './resources/builtin-validation.js';
import { validateAgainstSchema } from './resources/schema.js';
import { ObjectStore } from './store/object-store.js';
import type { KObject } from './store/types.js';
import { resourceKey } from './store/types.js';

export type { BaselineOptions, ContainerRun, ContainerRuntime, FleetName, SimContext, SimModule } from './module.js';
export type { FaultConfig } from './faults/fault-injector.js';
export { FaultInjector } from './faults/fault-injector.js';
export { ObjectStore } from './store/object-store.js';
export { defaultModules } from './modules.js';

export interface EmbeddedClusterOptions {
  /** 0 = a random free port. */
  port?: number;
  /** Defaults to 127.0.0.1. */
  host?: string;
  /** 'demo' | 'empty' | number of generated VMs; default 'demo'. */
  fleet?: FleetName;
  /** Timing divisor for controllers; default 1 (looks like a real cluster). */
  speed?: number;
  /** metrics.k8s.io served; default true. Switchable at runtime through `context.settings`. */
  metricsServer?: boolean;
  /** Also write the kubeconfig to this file. */
  kubeconfigPath?: string;
  /** Cluster components; default defaultModules(). */
  modules?: SimModule[];
  /** Watch bookmark interval (ms) when clients allow bookmarks; default 30 s. Tests shorten it. */
  watchBookmarkIntervalMs?: number;
  /** Pieces the baseline install leaves out or changes: KubeVirt feature gates, the VolumeSnapshotClass. */
  baseline?: BaselineOptions;
  /** Images the kubelet runs for real instead of as scripted workloads (see ContainerRuntime in module.ts). */
  containerRuntime?: ContainerRuntime;
  /** The kubeconfig's cluster and context name (default `corral-sim`); several clusters side by side differ by it. */
  contextName?: string;
  /**
   * Watch-list (`sendInitialEvents=true`) served, as with the WatchList feature gate on; default true. When false
   * such a watch is answered 422 like an older apiserver. Switchable at runtime through `context.settings`.
   */
  watchList?: boolean;
}

export interface EmbeddedCluster {
  url: string;
  port: number;
  /** Kubeconfig YAML pointing at this cluster (context `corral-sim` or `contextName`, namespace default). */
  kubeconfig: string;
  kubeconfigPath?: string;
  store: ObjectStore;
  context: SimContext;
  faults: FaultInjector;
  close(): Promise<void>;
}

/** The namespaces every cluster has before anything is deployed. */
const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

export function kubeconfigYaml(url: string, name = 'corral-sim'): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: ${name}`,
    '  cluster:',
    `    server: "${url}"`,
    '    insecure-skip-tls-verify: true',
    'users:',
    '- name: corral-sim-admin',
    '  user:',
    '    token: "sim-admin-token"',
    'contexts:',
    `- name: ${name}`,
    '  context:',
    `    cluster: ${name}`,
    '    user: corral-sim-admin',
    '    namespace: default',
    `current-context: ${name}`,
    '',
  ].join('\n');
}

/** What a freshly installed cluster holds: system namespaces and the CRDs of every custom kind. */
function bootstrap(store: ObjectStore): void {
  for (const name of SYSTEM_NAMESPACES) {
    store.create(resourceKey('', 'namespaces'), {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  }
  const crds = resourceKey('apiextensions.k8s.io', 'customresourcedefinitions');
  for (const k of KINDS) {
    if (k.crd) store.create(crds, crdFor(k) as unknown as KObject);
  }
}

export async function startEmbeddedCluster(options: EmbeddedClusterOptions = {}): Promise<EmbeddedCluster> {
  const speed = options.speed ?? 1;
  const store = new ObjectStore();
  registerKinds(store);
  bootstrap(store);
  const clock = new SimClock(speed);
  let baseUrl = '';
  const metricsServer = options.metricsServer ?? true;
  const context: SimContext = {
    store,
    clock,
    options: {
      speed,
      fleet: options.fleet ?? 'demo',
      metricsServer,
      ...(options.baseline ? { baseline: options.baseline } : {}),
    },
    settings: { metricsServer, watchList: options.watchList ?? true },
    baseUrl: () => baseUrl,
    ...(options.containerRuntime ? { containerRuntime: options.containerRuntime } : {}),
  };
  const modules = options.modules ?? defaultModules();
  const faults = new FaultInjector();
  const { server, watches } = createApiServer({
    ctx: context,
    modules,
    faults,
    validate: (type: KindSpec, obj: KObject, mode: FieldValidation) => {
      validateBuiltin(type, obj);
      return validateAgainstSchema(type, obj, mode);
    },
    ...(options.watchBookmarkIntervalMs
      ? { watchSettings: { bookmarkIntervalMs: options.watchBookmarkIntervalMs } }
      : {}),
  });

  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  baseUrl = `http://${urlHost}:${port}`;

  const started: SimModule[] = [];
  const stopModules = async () => {
    for (const m of [...started].reverse()) {
      try {
        await m.stop?.();
      } catch (err) {
        console.error(`[sim] module ${m.name} failed to stop:`, err);
      }
    }
  };
  try {
    for (const m of modules) {
      await m.start(context);
      started.push(m);
    }
  } catch (err) {
    await stopModules();
    clock.stop();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    throw err;
  }

  const kubeconfig = kubeconfigYaml(baseUrl, options.contextName);
  if (options.kubeconfigPath) {
    mkdirSync(dirname(options.kubeconfigPath), { recursive: true });
    writeFileSync(options.kubeconfigPath, kubeconfig, { mode: 0o600 });
  }

  let closing: Promise<void> | undefined;
  return {
    url: baseUrl,
    port,
    kubeconfig,
    ...(options.kubeconfigPath ? { kubeconfigPath: options.kubeconfigPath } : {}),
    store,
    context,
    faults,
    close() {
      closing ??= (async () => {
        await stopModules();
        clock.stop();
        watches.closeAll();
        const closed = new Promise<void>((r) => server.close(() => r()));
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
