/**
 * Test harness for the KubeVirt module: the embedded cluster with its default modules (so storage, GC and the
 * fleet seeder run as in the demo), reached through @kubernetes/client-node the way Corral reaches a cluster.
 */
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { startEmbeddedCluster, type EmbeddedCluster, type EmbeddedClusterOptions } from '../../../src/sim/index.js';

export interface Harness {
  cluster: EmbeddedCluster;
  core: CoreV1Api;
  custom: CustomObjectsApi;
  url: string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary wire JSON
export type Wire = Record<string, any>;

export async function startHarness(options: EmbeddedClusterOptions = {}): Promise<Harness> {
  const cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50, ...options });
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  return { cluster, core: kc.makeApiClient(CoreV1Api), custom: kc.makeApiClient(CustomObjectsApi), url: cluster.url };
}

const KV = { group: 'kubevirt.io', version: 'v1' };

export async function getVm(h: Harness, namespace: string, name: string): Promise<Wire> {
  return (await h.custom.getNamespacedCustomObject({ ...KV, namespace, plural: 'virtualmachines', name })) as Wire;
}

export async function getVmi(h: Harness, namespace: string, name: string): Promise<Wire> {
  return (await h.custom.getNamespacedCustomObject({
    ...KV,
    namespace,
    plural: 'virtualmachineinstances',
    name,
  })) as Wire;
}

export async function listVmis(h: Harness, namespace: string): Promise<Wire[]> {
  return ((await h.custom.listNamespacedCustomObject({ ...KV, namespace, plural: 'virtualmachineinstances' })) as Wire)
    .items as Wire[];
}

export async function createVm(h: Harness, body: Wire): Promise<Wire> {
  return (await h.custom.createNamespacedCustomObject({
    ...KV,
    namespace: body.metadata.namespace as string,
    plural: 'virtualmachines',
    body,
  })) as Wire;
}

/** A Corral-style VM manifest with a containerDisk root. */
export function vmBody(
  name: string,
  opts: {
    namespace?: string;
    image?: string;
    runStrategy?: string;
    nodeSelector?: Record<string, string>;
    memory?: string;
    sockets?: number;
    pvc?: string;
  } = {},
): Wire {
  const volumes: Wire[] = [
    { name: 'rootdisk', containerDisk: { image: opts.image ?? 'quay.io/containerdisks/fedora:42' } },
  ];
  const disks: Wire[] = [{ name: 'rootdisk', disk: { bus: 'virtio' } }];
  if (opts.pvc) {
    volumes.push({ name: 'data', persistentVolumeClaim: { claimName: opts.pvc } });
    disks.push({ name: 'data', disk: { bus: 'virtio' } });
  }
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: opts.namespace ?? 'tailvm', labels: { 'corral.dev/tag.test': 'true' } },
    spec: {
      runStrategy: opts.runStrategy ?? 'Always',
      template: {
        metadata: { labels: { 'kubevirt.io/domain': name } },
        spec: {
          domain: {
            cpu: { sockets: opts.sockets ?? 1, cores: 1, threads: 1 },
            memory: { guest: opts.memory ?? '1Gi' },
            devices: { disks, interfaces: [{ name: 'default', masquerade: {} }] },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes,
          ...(opts.nodeSelector ? { nodeSelector: opts.nodeSelector } : {}),
        },
      },
    },
  };
}

/** A subresources.kubevirt.io verb over raw HTTP (client-node has no typed call for them). */
export async function verb(
  h: Harness,
  resource: 'virtualmachines' | 'virtualmachineinstances',
  namespace: string,
  name: string,
  action: string,
  body?: unknown,
  method = 'PUT',
): Promise<{ status: number; text: string; json: Wire | undefined }> {
  const res = await fetch(
    `${h.url}/apis/subresources.kubevirt.io/v1/namespaces/${namespace}/${resource}/${name}/${action}`,
    {
      method,
      headers: { 'Content-Type': 'application/json', Authorization: 'Bearer sim-admin-token' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    },
  );
  const text = await res.text();
  let json: Wire | undefined;
  try {
    json = text ? (JSON.parse(text) as Wire) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

export async function rawGet(h: Harness, path: string): Promise<{ status: number; json: Wire }> {
  const res = await fetch(`${h.url}${path}`, { headers: { Authorization: 'Bearer sim-admin-token' } });
  return { status: res.status, json: (await res.json()) as Wire };
}

/** Poll until `fn` stops throwing (assertions inside), like a client watching for a state. */
export async function eventually<T>(fn: () => T | Promise<T>, timeoutMs = 8000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      return await fn();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 40));
    }
  }
  throw last;
}

export async function waitForStatus(
  h: Harness,
  namespace: string,
  name: string,
  printable: string,
  timeoutMs = 8000,
): Promise<Wire> {
  return eventually(async () => {
    const vm = await getVm(h, namespace, name);
    if (vm.status?.printableStatus !== printable)
      throw new Error(`${name} is ${String(vm.status?.printableStatus)}, waiting for ${printable}`);
    return vm;
  }, timeoutMs);
}

export async function isGone(promise: Promise<unknown>): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (err) {
    if ((err as { code?: number }).code === 404) return true;
    throw err;
  }
}
