/**
 * The storage controllers inside the real embedded cluster (default modules: GC, KubeVirt, storage, empty fleet),
 * driven through @kubernetes/client-node the way Corral drives a real cluster.
 */
import {
  BatchV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  StorageV1Api,
} from '@kubernetes/client-node';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';

const NS = 'storage-wire';
let cluster: EmbeddedCluster;
let core: CoreV1Api;
let custom: CustomObjectsApi;
let batch: BatchV1Api;
let storage: StorageV1Api;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- wire-level assertions read arbitrary JSON shapes
type Json = Record<string, any>;

beforeAll(async () => {
  cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  core = kc.makeApiClient(CoreV1Api);
  custom = kc.makeApiClient(CustomObjectsApi);
  batch = kc.makeApiClient(BatchV1Api);
  storage = kc.makeApiClient(StorageV1Api);
  await core.createNamespace({ body: { metadata: { name: NS } } });
});

afterAll(async () => {
  await cluster?.close();
});

/** The Status body of a failed client-node call (fails the test when the call succeeded). */
async function statusOf(
  call: Promise<unknown>,
): Promise<{ code: number; reason: string; message: string; details?: { causes?: { field?: string }[] } }> {
  try {
    await call;
  } catch (err) {
    const body = (err as { body?: unknown }).body;
    return (typeof body === 'string' ? JSON.parse(body) : body) as never;
  }
  throw new Error('expected the request to be refused');
}

async function poll<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

const dvs = { group: 'cdi.kubevirt.io', version: 'v1beta1', namespace: NS, plural: 'datavolumes' };
const vms = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachines' };
const vmis = { group: 'kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineinstances' };
const snapshots = {
  group: 'snapshot.kubevirt.io',
  version: 'v1beta1',
  namespace: NS,
  plural: 'virtualmachinesnapshots',
};
const restores = { group: 'snapshot.kubevirt.io', version: 'v1beta1', namespace: NS, plural: 'virtualmachinerestores' };
const clones = { group: 'clone.kubevirt.io', version: 'v1beta1', namespace: NS, plural: 'virtualmachineclones' };
const exportsApi = { group: 'export.kubevirt.io', version: 'v1', namespace: NS, plural: 'virtualmachineexports' };

async function get(api: typeof vms, name: string): Promise<Json | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ ...api, name })) as Json;
  } catch {
    return undefined;
  }
}

async function boundClaim(
  name: string,
  size: string,
  storageClassName?: string,
  annotations?: Record<string, string>,
): Promise<Json> {
  await core.createNamespacedPersistentVolumeClaim({
    namespace: NS,
    body: {
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: size } },
        ...(storageClassName ? { storageClassName } : {}),
      },
    },
  });
  return poll('bound', async () => {
    const claim = await core.readNamespacedPersistentVolumeClaim({ namespace: NS, name });
    return claim.status?.phase === 'Bound' ? (claim as Json) : undefined;
  });
}

function vmBody(name: string, claim: string, runStrategy = 'Halted'): Json {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, labels: { app: name } },
    spec: {
      runStrategy,
      template: {
        spec: {
          domain: {
            cpu: { cores: 1 },
            memory: { guest: '1Gi' },
            devices: {
              disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }],
              interfaces: [{ name: 'default', masquerade: {} }],
            },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: claim } }],
        },
      },
    },
  };
}

describe('storage over the wire', () => {
  it('binds and expands a PVC on the expandable default class; refuses growth on a fixed class', async () => {
    const claim = await boundClaim('grow', '10Gi');
    expect(claim.spec.storageClassName).toBe('longhorn');
    expect(claim.spec.volumeName).toBe(`pvc-${claim.metadata.uid}`);
    expect((await core.readPersistentVolume({ name: claim.spec.volumeName })).spec?.claimRef?.name).toBe('grow');
    await core.patchNamespacedPersistentVolumeClaim(
      { namespace: NS, name: 'grow', body: { spec: { resources: { requests: { storage: '15Gi' } } } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await poll(
      'expanded',
      async () =>
        (await core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'grow' })).status?.capacity?.storage ===
        '15Gi',
    );

    await storage.createStorageClass({
      body: {
        metadata: { name: 'fixed' },
        provisioner: 'driver.longhorn.io',
        allowVolumeExpansion: false,
        volumeBindingMode: 'Immediate',
      },
    });
    await boundClaim('fixed', '5Gi', 'fixed');
    const refused = await statusOf(
      core.patchNamespacedPersistentVolumeClaim(
        { namespace: NS, name: 'fixed', body: { spec: { resources: { requests: { storage: '6Gi' } } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(refused).toMatchObject({ code: 403, reason: 'Forbidden' });
    expect(refused.message).toContain('only dynamically provisioned pvc can be resized');
    const shrink = await statusOf(
      core.patchNamespacedPersistentVolumeClaim(
        { namespace: NS, name: 'grow', body: { spec: { resources: { requests: { storage: '1Gi' } } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      ),
    );
    expect(shrink).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(
      (await core.readNamespacedPersistentVolumeClaim({ namespace: NS, name: 'fixed' })).spec?.resources?.requests
        ?.storage,
    ).toBe('5Gi');
  });

  it('rejects malformed storage objects at admission with 422 Invalid', async () => {
    const badDv = await statusOf(
      custom.createNamespacedCustomObject({
        ...dvs,
        body: {
          apiVersion: 'cdi.kubevirt.io/v1beta1',
          kind: 'DataVolume',
          metadata: { name: 'ftp' },
          spec: {
            source: { http: { url: 'ftp://x/y.img' } },
            storage: { resources: { requests: { storage: '1Gi' } } },
          },
        },
      }),
    );
    expect(badDv).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(badDv.details?.causes?.[0]?.field).toBe('spec.source.http.url');
    const noSnapshot = await statusOf(
      custom.createNamespacedCustomObject({
        ...restores,
        body: {
          apiVersion: 'snapshot.kubevirt.io/v1beta1',
          kind: 'VirtualMachineRestore',
          metadata: { name: 'r' },
          spec: {
            target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'x' },
            virtualMachineSnapshotName: 'ghost',
          },
        },
      }),
    );
    expect(noSnapshot).toMatchObject({ code: 422, reason: 'Invalid' });
    const badExport = await statusOf(
      custom.createNamespacedCustomObject({
        ...exportsApi,
        body: {
          apiVersion: 'export.kubevirt.io/v1',
          kind: 'VirtualMachineExport',
          metadata: { name: 'x' },
          spec: { source: { kind: 'ConfigMap', name: 'x' } },
        },
      }),
    );
    expect(badExport.code).toBe(422);
  });

  it('imports a DataVolume to Succeeded and keeps restarting a bad URL', async () => {
    const body = (name: string, url: string) => ({
      apiVersion: 'cdi.kubevirt.io/v1beta1',
      kind: 'DataVolume',
      metadata: { name },
      spec: { source: { http: { url } }, storage: { resources: { requests: { storage: '5Gi' } } } },
    });
    await custom.createNamespacedCustomObject({
      ...dvs,
      body: body('good', 'https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img'),
    });
    await custom.createNamespacedCustomObject({
      ...dvs,
      body: body('bad', 'https://images.corral.invalid/disk.qcow2'),
    });
    const good = await poll(
      'Succeeded',
      async () => {
        const dv = await get(dvs, 'good');
        return dv?.status?.phase === 'Succeeded' ? dv : undefined;
      },
      30_000,
    );
    expect(good.status.progress).toBe('100.0%');
    // Between restarts (back-off 10 s, 20 s, …) the importer is down: Running=False reason Error.
    const bad = await poll(
      'restarted',
      async () => {
        const dv = await get(dvs, 'bad');
        const running = dv?.status?.conditions?.find((c: Json) => c.type === 'Running');
        return dv?.status?.restartCount >= 1 && running?.status === 'False' ? dv : undefined;
      },
      30_000,
    );
    expect(bad.status.phase).not.toBe('Succeeded');
    const running = bad.status.conditions.find((c: Json) => c.type === 'Running');
    expect(running).toMatchObject({ reason: 'Error' });
    expect(running.message).toContain('no such host');
  });

  it('snapshots, refuses restore while running, restores once stopped, and clones', async () => {
    await boundClaim('web-rootdisk', '10Gi');
    await custom.createNamespacedCustomObject({ ...vms, body: vmBody('web', 'web-rootdisk') });
    await custom.createNamespacedCustomObject({
      ...snapshots,
      body: {
        apiVersion: 'snapshot.kubevirt.io/v1beta1',
        kind: 'VirtualMachineSnapshot',
        metadata: { name: 'snap' },
        spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' } },
      },
    });
    const snap = await poll('snapshot ready', async () => {
      const s = await get(snapshots, 'snap');
      return s?.status?.readyToUse === true ? s : undefined;
    });
    expect(snap.status.phase).toBe('Succeeded');

    await custom.patchNamespacedCustomObject(
      { ...vms, name: 'web', body: { spec: { runStrategy: 'Always' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await poll('vmi running', async () => (await get(vmis, 'web'))?.status?.phase === 'Running', 30_000);
    const restoreBody = (name: string, policy?: string) => ({
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineRestore',
      metadata: { name },
      spec: {
        target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' },
        virtualMachineSnapshotName: 'snap',
        ...(policy ? { targetReadinessPolicy: policy } : {}),
      },
    });
    await custom.createNamespacedCustomObject({ ...restores, body: restoreBody('while-running', 'FailImmediate') });
    const refused = await poll('refused', async () => {
      const r = await get(restores, 'while-running');
      return r?.status?.conditions?.some((c: Json) => c.type === 'Failure' && c.status === 'True') ? r : undefined;
    });
    expect(refused.status.complete).toBe(false);

    await custom.patchNamespacedCustomObject(
      { ...vms, name: 'web', body: { spec: { runStrategy: 'Halted' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    await poll('vmi gone', async () => (await get(vmis, 'web')) === undefined, 30_000);
    await custom.createNamespacedCustomObject({ ...restores, body: restoreBody('after-stop') });
    const done = await poll(
      'restored',
      async () => {
        const r = await get(restores, 'after-stop');
        return r?.status?.complete === true ? r : undefined;
      },
      30_000,
    );
    const vm = await get(vms, 'web');
    expect(vm?.spec.template.spec.volumes[0].persistentVolumeClaim.claimName).toBe(
      done.status.restores[0].persistentVolumeClaim,
    );

    await custom.createNamespacedCustomObject({
      ...clones,
      body: {
        apiVersion: 'clone.kubevirt.io/v1beta1',
        kind: 'VirtualMachineClone',
        metadata: { name: 'web-clone' },
        spec: {
          source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' },
          target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web-copy' },
        },
      },
    });
    await poll('clone done', async () => (await get(clones, 'web-clone'))?.status?.phase === 'Succeeded', 30_000);
    const copy = await get(vms, 'web-copy');
    expect(copy?.spec.runStrategy).toBe('Halted');
    expect(copy?.spec.template.spec.volumes[0].persistentVolumeClaim.claimName).toMatch(/^restore-/);
  });

  it('restores a VM whose disk comes from dataVolumeTemplates, deleting the replaced DataVolume', async () => {
    const body = vmBody('tpl', 'tpl-rootdisk');
    body.spec.dataVolumeTemplates = [
      {
        metadata: { name: 'tpl-rootdisk' },
        spec: { source: { blank: {} }, storage: { resources: { requests: { storage: '2Gi' } } } },
      },
    ];
    body.spec.template.spec.volumes = [{ name: 'rootdisk', dataVolume: { name: 'tpl-rootdisk' } }];
    await custom.createNamespacedCustomObject({ ...vms, body });
    await poll('dv done', async () => (await get(dvs, 'tpl-rootdisk'))?.status?.phase === 'Succeeded', 30_000);
    await custom.createNamespacedCustomObject({
      ...snapshots,
      body: {
        apiVersion: 'snapshot.kubevirt.io/v1beta1',
        kind: 'VirtualMachineSnapshot',
        metadata: { name: 'tpl-snap' },
        spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'tpl' } },
      },
    });
    await poll('snapshot ready', async () => (await get(snapshots, 'tpl-snap'))?.status?.readyToUse === true);
    await custom.createNamespacedCustomObject({
      ...restores,
      body: {
        apiVersion: 'snapshot.kubevirt.io/v1beta1',
        kind: 'VirtualMachineRestore',
        metadata: { name: 'tpl-restore' },
        spec: {
          target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'tpl' },
          virtualMachineSnapshotName: 'tpl-snap',
        },
      },
    });
    const done = await poll(
      'restored',
      async () => {
        const r = await get(restores, 'tpl-restore');
        return r?.status?.complete === true ? r : undefined;
      },
      30_000,
    );
    expect(done.status.deletedDataVolumes).toEqual(['tpl-rootdisk']);
    const vm = await get(vms, 'tpl');
    expect(vm?.spec.dataVolumeTemplates).toBeUndefined();
    expect(vm?.spec.template.spec.volumes[0]).toEqual({
      name: 'rootdisk',
      persistentVolumeClaim: { claimName: done.status.restores[0].persistentVolumeClaim },
    });
    await poll('old dv gone', async () => (await get(dvs, 'tpl-rootdisk')) === undefined);
    // The snapshot still holds the data: its VolumeSnapshot outlives the deleted DataVolume's PVC.
    const volumeSnapshots = {
      group: 'snapshot.storage.k8s.io',
      version: 'v1',
      namespace: NS,
      plural: 'volumesnapshots',
    };
    const ofTpl = async () =>
      ((await custom.listNamespacedCustomObject(volumeSnapshots)) as Json).items.filter(
        (v: Json) => v.spec.source.persistentVolumeClaimName === 'tpl-rootdisk',
      );
    expect(await ofTpl()).toHaveLength(1);
    // Deleting the snapshot takes its content and VolumeSnapshots with it (deletionPolicy Delete, via the GC).
    const snap = await get(snapshots, 'tpl-snap');
    await custom.deleteNamespacedCustomObject({ ...snapshots, name: 'tpl-snap' });
    const contents = {
      group: 'snapshot.kubevirt.io',
      version: 'v1beta1',
      namespace: NS,
      plural: 'virtualmachinesnapshotcontents',
    };
    await poll(
      'content gone',
      async () => (await get(contents, snap?.status.virtualMachineSnapshotContentName)) === undefined,
    );
    await poll('volume snapshots gone', async () => (await ofTpl()).length === 0);
  });

  it('exports a stopped VM and serves the image at the link with the token', async () => {
    // A VM's disk: CDI's mark says it holds a disk image, which KubeVirt exports as raw and gzip.
    await boundClaim('exp-rootdisk', '10Gi', undefined, { 'cdi.kubevirt.io/storage.contentType': 'kubevirt' });
    await custom.createNamespacedCustomObject({ ...vms, body: vmBody('exp', 'exp-rootdisk') });
    await custom.createNamespacedCustomObject({
      ...exportsApi,
      body: {
        apiVersion: 'export.kubevirt.io/v1',
        kind: 'VirtualMachineExport',
        metadata: { name: 'exp' },
        spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'exp' } },
      },
    });
    const exp = await poll(
      'export ready',
      async () => {
        const e = await get(exportsApi, 'exp');
        return e?.status?.phase === 'Ready' ? e : undefined;
      },
      30_000,
    );
    const secret = await core.readNamespacedSecret({ namespace: NS, name: exp.status.tokenSecretRef });
    const token = Buffer.from(String(secret.data?.token), 'base64').toString('utf8');
    const formats = exp.status.links.external.volumes[0].formats as { format: string; url: string }[];
    const rawUrl = formats.find((f) => f.format === 'raw')!.url;
    expect(rawUrl.startsWith(cluster.url)).toBe(true);
    const raw = Buffer.from(
      await (await fetch(rawUrl, { headers: { 'x-kubevirt-export-token': token } })).arrayBuffer(),
    );
    expect(raw.readUInt16LE(510)).toBe(0xaa55);
    const gz = Buffer.from(
      await (
        await fetch(formats.find((f) => f.format === 'gzip')!.url, { headers: { 'x-kubevirt-export-token': token } })
      ).arrayBuffer(),
    );
    expect(gunzipSync(gz).equals(raw)).toBe(true);
    expect((await fetch(rawUrl, { headers: { 'x-kubevirt-export-token': 'nope' } })).status).toBe(401);
  });

  it('runs a Job to Complete', async () => {
    await batch.createNamespacedJob({
      namespace: NS,
      body: {
        metadata: { name: 'hello' },
        spec: {
          backoffLimit: 0,
          template: {
            metadata: { annotations: { 'sim.corral.dev/run-seconds': '3' } },
            spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] },
          },
        },
      },
    });
    const job = await poll(
      'complete',
      async () => {
        const j = await batch.readNamespacedJob({ namespace: NS, name: 'hello' });
        return j.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True') ? j : undefined;
      },
      30_000,
    );
    expect(job.status?.succeeded).toBe(1);
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: 'job-name=hello' });
    const log = await core.readNamespacedPodLog({ namespace: NS, name: pods.items[0]!.metadata!.name! });
    expect(log).toContain('started busybox');
    expect(log).toContain('finished');
  });
});
