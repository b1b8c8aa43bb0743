/**
 * Test harness: an embedded cluster (GC module only, no fleet) plus client-node wired to it the way Corral does.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig, KubernetesObjectApi } from '@kubernetes/client-node';
import { garbageCollectorModule } from '../../../src/sim/gc/index.js';
import { startEmbeddedCluster, type EmbeddedCluster, type EmbeddedClusterOptions } from '../../../src/sim/index.js';

export interface Harness {
  cluster: EmbeddedCluster;
  kc: KubeConfig;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
  url: string;
}

export async function startHarness(options: EmbeddedClusterOptions = {}): Promise<Harness> {
  const cluster = await startEmbeddedCluster({
    port: 0,
    fleet: 'empty',
    speed: 50,
    modules: [garbageCollectorModule()],
    ...options,
  });
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  return {
    cluster,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
    url: cluster.url,
  };
}

/** The Status body of a failed client-node call. */
export function statusOf(err: unknown): {
  code: number;
  reason: string;
  message: string;
  details?: Record<string, unknown>;
} {
  const e = err as { code?: number; body?: unknown };
  if (typeof e.code !== 'number') throw err;
  const body =
    typeof e.body === 'string' ? (JSON.parse(e.body) as Record<string, unknown>) : (e.body as Record<string, unknown>);
  return body as never;
}

export async function expectStatus(
  promise: Promise<unknown>,
): Promise<{ code: number; reason: string; message: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (err) {
    return statusOf(err);
  }
  throw new Error('expected the request to fail');
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire-level assertions read arbitrary JSON shapes
export type WireJson = Record<string, any>;

/** Raw HTTP against the cluster, for wire-level assertions. */
export async function raw(
  h: Harness,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(h.url + path, {
    method,
    headers: { 'Content-Type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as WireJson };
}

export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  throw last;
}

export const vmBody = (name: string, namespace = 'default', extra: Record<string, unknown> = {}) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name, namespace, labels: { app: name } },
  spec: {
    runStrategy: 'Halted',
    template: { spec: { domain: { devices: {}, cpu: { cores: 1 }, memory: { guest: '1Gi' } } } },
    ...extra,
  },
});
