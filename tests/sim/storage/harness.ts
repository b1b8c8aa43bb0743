/**
 * A store with the kinds the storage controllers use registered by hand, a started storage module, and polling
 * helpers — so the controllers are tested without the HTTP layer.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SimClock } from '@/sim/clock';
import type { SimContext, SimModule } from '@/sim/module';
import { ObjectStore } from '@/sim/store/object-store';
import type { KObject, NewObject, ResourceType } from '@/sim/store/types';
import { createStorageModule } from '@/sim/storage';
import { S } from '@/sim/storage/keys';

function type(group: string, version: string, kind: string, plural: string, namespaced = true): ResourceType {
  return {
    group,
    version,
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced,
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
    hasStatus: true,
    builtin: group === '' || group === 'batch' || group === 'storage.k8s.io',
  };
}

export const TYPES: ResourceType[] = [
  type('', 'v1', 'Namespace', 'namespaces', false),
  type('', 'v1', 'Node', 'nodes', false),
  type('', 'v1', 'Pod', 'pods'),
  type('', 'v1', 'Service', 'services'),
  type('', 'v1', 'Secret', 'secrets'),
  type('', 'v1', 'Event', 'events'),
  type('', 'v1', 'PersistentVolumeClaim', 'persistentvolumeclaims'),
  type('', 'v1', 'PersistentVolume', 'persistentvolumes', false),
  type('storage.k8s.io', 'v1', 'StorageClass', 'storageclasses', false),
  type('snapshot.storage.k8s.io', 'v1', 'VolumeSnapshotClass', 'volumesnapshotclasses', false),
  type('snapshot.storage.k8s.io', 'v1', 'VolumeSnapshot', 'volumesnapshots'),
  type('cdi.kubevirt.io', 'v1beta1', 'DataVolume', 'datavolumes'),
  type('kubevirt.io', 'v1', 'KubeVirt', 'kubevirts'),
  type('kubevirt.io', 'v1', 'VirtualMachine', 'virtualmachines'),
  type('kubevirt.io', 'v1', 'VirtualMachineInstance', 'virtualmachineinstances'),
  type('snapshot.kubevirt.io', 'v1beta1', 'VirtualMachineSnapshot', 'virtualmachinesnapshots'),
  type('snapshot.kubevirt.io', 'v1beta1', 'VirtualMachineSnapshotContent', 'virtualmachinesnapshotcontents'),
  type('snapshot.kubevirt.io', 'v1beta1', 'VirtualMachineRestore', 'virtualmachinerestores'),
  type('clone.kubevirt.io', 'v1beta1', 'VirtualMachineClone', 'virtualmachineclones'),
  type('export.kubevirt.io', 'v1', 'VirtualMachineExport', 'virtualmachineexports'),
  type('batch', 'v1', 'Job', 'jobs'),
  type('batch', 'v1', 'CronJob', 'cronjobs'),
  type('', 'v1', 'ServiceAccount', 'serviceaccounts'),
];

export const NS = 'tailvm';

export interface Harness {
  store: ObjectStore;
  ctx: SimContext;
  module: SimModule;
  stop(): Promise<void>;
}

export async function startHarness(
  options: { speed?: number; seed?: (store: ObjectStore) => void; baseUrl?: () => string } = {},
): Promise<Harness> {
  const store = new ObjectStore();
  for (const t of TYPES) store.register(t);
  store.create(S.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  store.create(S.nodes, {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: 'node-1' },
    status: {
      conditions: [{ type: 'Ready', status: 'True' }],
      addresses: [{ type: 'InternalIP', address: '192.168.1.11' }],
    },
  });
  options.seed?.(store);
  const clock = new SimClock(options.speed ?? 50);
  const ctx: SimContext = {
    store,
    clock,
    options: { speed: clock.speed, fleet: 'empty', metricsServer: false },
    settings: { metricsServer: false },
    baseUrl: options.baseUrl ?? (() => 'http://127.0.0.1:1'),
  };
  const module = createStorageModule();
  await module.start(ctx);
  return {
    store,
    ctx,
    module,
    async stop() {
      await module.stop?.();
      clock.stop();
    },
  };
}

export function storageClass(name: string, extra: Record<string, unknown> = {}, isDefault = false): NewObject {
  return {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name, annotations: isDefault ? { 'storageclass.kubernetes.io/is-default-class': 'true' } : {} },
    provisioner: 'driver.longhorn.io',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'Immediate',
    ...extra,
  };
}

export function pvc(
  name: string,
  size: string,
  storageClassName?: string,
  extra: Record<string, unknown> = {},
): NewObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: NS },
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: size } },
      ...(storageClassName ? { storageClassName } : {}),
      ...extra,
    },
  };
}

/** Poll until `check` returns a value (not undefined/false), or fail with the last seen state. */
export async function waitFor<T>(what: string, check: () => T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

export function phaseOf(obj: KObject | undefined): unknown {
  return (obj?.status as Record<string, unknown> | undefined)?.phase;
}

export function st(obj: KObject | undefined): Record<string, unknown> {
  return (obj?.status as Record<string, unknown> | undefined) ?? {};
}

export function eventsFor(
  store: ObjectStore,
  name: string,
  namespace = NS,
): { reason: string; type: string; message: string }[] {
  return store
    .list(S.events, namespace)
    .filter((e) => (e.involvedObject as { name?: string }).name === name)
    .map((e) => ({ reason: String(e.reason), type: String(e.type), message: String(e.message) }));
}

/** A harness whose module's raw routes (export server, upload proxy) are mounted on a loopback server. */
export interface ServedHarness extends Harness {
  base: string;
}

export async function startServedHarness(options: { speed?: number } = {}): Promise<ServedHarness> {
  let base = '';
  const h = await startHarness({
    speed: options.speed ?? 50,
    seed: (store) => store.create(S.storageClasses, storageClass('longhorn', {}, true)),
    baseUrl: () => base,
  });
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = h.module.rawRoutes?.find((r) => r.matches(url, req.method ?? 'GET'));
    if (!route) return void res.writeHead(404).end();
    void route.handle(h.ctx, req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...h,
    base,
    async stop() {
      await h.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Exports one claim (a PersistentVolumeClaim source) and waits until Ready; the export and its token. */
export async function exportClaim(h: Harness, claim: string): Promise<{ exp: KObject; token: string }> {
  const name = `${claim}-export`;
  h.store.create(S.vmExports, {
    apiVersion: 'export.kubevirt.io/v1',
    kind: 'VirtualMachineExport',
    metadata: { name, namespace: NS },
    spec: { source: { kind: 'PersistentVolumeClaim', name: claim } },
  });
  const exp = await waitFor(
    `export of ${claim} Ready`,
    () => {
      const o = h.store.get(S.vmExports, NS, name);
      return phaseOf(o) === 'Ready' ? o : undefined;
    },
    20_000,
  );
  const secret = h.store.get(S.secrets, NS, `export-token-${name}`);
  const token = Buffer.from(String((secret?.data as { token: string }).token), 'base64').toString('utf8');
  return { exp, token };
}

/** The formats (name → URL) an export's external links offer for `volume`. */
export function formatsOf(exp: KObject, volume: string): Record<string, string> {
  const volumes = (
    st(exp).links as { external: { volumes: { name: string; formats: { format: string; url: string }[] }[] } }
  ).external.volumes;
  return Object.fromEntries((volumes.find((v) => v.name === volume)?.formats ?? []).map((f) => [f.format, f.url]));
}
