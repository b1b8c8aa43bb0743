import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { KObject, NewObject } from '@/sim/store/types';
import { buildRawImage, IMAGE_BYTES } from '@/sim/storage/disk-image';
import { CDI_ANN, DISK_CONTENT_ANNOTATION, S } from '@/sim/storage/keys';
import { type Harness, NS, phaseOf, pvc, startHarness, st, storageClass, waitFor } from './harness';

let h: Harness | undefined;
let server: Server | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** The module's raw routes mounted on a loopback server, as the embedded apiserver mounts them. */
async function startWithServer(): Promise<string> {
  let base = '';
  h = await startHarness({
    seed: (store) => store.create(S.storageClasses, storageClass('longhorn', {}, true)),
    baseUrl: () => base,
  });
  const harness = h;
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = harness.module.rawRoutes?.find((r) => r.matches(url, req.method ?? 'GET'));
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    void route.handle(harness.ctx, req, res, url);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return base;
}

function vm(name: string, claim: string): NewObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS },
    spec: {
      runStrategy: 'Halted',
      template: { spec: { volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: claim } }] } },
    },
  };
}

function vmExport(name: string, source: Record<string, unknown>): NewObject {
  return {
    apiVersion: 'export.kubevirt.io/v1',
    kind: 'VirtualMachineExport',
    metadata: { name, namespace: NS },
    spec: { source },
  };
}

/** A VM's disk: a claim CDI marked as a disk image (kubevirt content), so it exports as raw and gzip. */
async function diskReady(): Promise<void> {
  const claim = pvc('web-rootdisk', '10Gi');
  claim.metadata.annotations = { [CDI_ANN.contentType]: 'kubevirt' };
  h!.store.create(S.pvcs, claim);
  await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'web-rootdisk')) === 'Bound');
  h!.store.mutate(S.pvcs, NS, 'web-rootdisk', (o) => {
    o.metadata.annotations = {
      ...o.metadata.annotations,
      [DISK_CONTENT_ANNOTATION]: 'http:https://example.org/web.img',
    };
  });
}

function token(): string {
  const secret = h!.store.get(S.secrets, NS, 'export-token-web-export');
  return Buffer.from(String((secret?.data as { token: string }).token), 'base64').toString('utf8');
}

async function ready(name: string): Promise<KObject> {
  return waitFor(
    'Ready',
    () => {
      const o = h!.store.get(S.vmExports, NS, name);
      return phaseOf(o) === 'Ready' ? o : undefined;
    },
    15_000,
  );
}

function linkOf(exp: KObject, format: string): string {
  const volumes = (
    st(exp).links as { external: { volumes: { name: string; formats: { format: string; url: string }[] }[] } }
  ).external.volumes;
  return volumes[0]!.formats.find((f) => f.format === format)!.url;
}

describe('disk image', () => {
  it('is a 4 MiB MBR disk with a Linux partition holding an ext2 superblock', () => {
    const image = buildRawImage({ namespace: NS, volume: 'web-rootdisk', content: 'blank' });
    expect(image.length).toBe(IMAGE_BYTES);
    expect(image.readUInt16LE(510)).toBe(0xaa55);
    expect(image[446 + 4]).toBe(0x83);
    expect(image.readUInt32LE(446 + 8)).toBe(2048);
    expect(image.readUInt16LE(2048 * 512 + 1024 + 56)).toBe(0xef53);
    expect(image.toString('utf8', 2048 * 512 + 1024 + 120, 2048 * 512 + 1024 + 132)).toBe('web-rootdisk');
    expect(buildRawImage({ namespace: NS, volume: 'web-rootdisk', content: 'blank' }).equals(image)).toBe(true);
    expect(buildRawImage({ namespace: NS, volume: 'other', content: 'blank' }).equals(image)).toBe(false);
  });
});

describe('VirtualMachineExport', () => {
  it('goes Ready for a stopped VM and serves raw + gzip behind the export token', async () => {
    const base = await startWithServer();
    await diskReady();
    h!.store.create(S.vms, vm('web', 'web-rootdisk'));
    h!.store.create(
      S.vmExports,
      vmExport('web-export', { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' }),
    );
    const exp = await ready('web-export');
    expect(st(exp)).toMatchObject({
      serviceName: 'virt-export-web-export',
      tokenSecretRef: 'export-token-web-export',
      virtualMachineName: 'web',
    });
    expect(typeof st(exp).ttlExpirationTime).toBe('string');
    expect(h!.store.get(S.services, NS, 'virt-export-web-export')).toBeDefined();
    expect(h!.store.get(S.pods, NS, 'virt-export-web-export')).toBeDefined();
    const rawUrl = linkOf(exp, 'raw');
    expect(rawUrl).toBe(`${base}/sim-export/${NS}/web-export/volumes/web-rootdisk/disk.img`);

    const raw = Buffer.from(
      await (await fetch(rawUrl, { headers: { 'x-kubevirt-export-token': token() } })).arrayBuffer(),
    );
    expect(raw.length).toBe(IMAGE_BYTES);
    expect(raw.readUInt16LE(510)).toBe(0xaa55);
    expect(raw.readUInt16LE(2048 * 512 + 1024 + 56)).toBe(0xef53);
    expect(raw.toString('utf8')).toContain('content: http:https://example.org/web.img');

    const gz = await fetch(linkOf(exp, 'gzip'), { headers: { 'x-kubevirt-export-token': token() } });
    expect(gz.headers.get('content-type')).toBe('application/gzip');
    const gzBytes = Buffer.from(await gz.arrayBuffer());
    expect(gzBytes.length).toBeLessThan(raw.length / 10);
    expect(gunzipSync(gzBytes).equals(raw)).toBe(true);

    expect((await fetch(`${rawUrl}?x-kubevirt-export-token=${encodeURIComponent(token())}`)).status).toBe(200);
    expect((await fetch(rawUrl)).status).toBe(401);
    expect((await fetch(rawUrl, { headers: { 'x-kubevirt-export-token': 'wrong' } })).status).toBe(401);
    expect(
      (await fetch(rawUrl.replace('web-rootdisk', 'nope'), { headers: { 'x-kubevirt-export-token': token() } })).status,
    ).toBe(404);
  });

  it('stays Pending with PVCReady=False reason InUse while the VM runs, then becomes Ready once it stops', async () => {
    await startWithServer();
    await diskReady();
    h!.store.create(S.vms, vm('web', 'web-rootdisk'));
    h!.store.create(S.vmis, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachineInstance',
      metadata: { name: 'web', namespace: NS },
      spec: { volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: 'web-rootdisk' } }] },
      status: { phase: 'Running', nodeName: 'node-1' },
    });
    h!.store.create(
      S.vmExports,
      vmExport('web-export', { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' }),
    );
    const pending = await waitFor('InUse', () => {
      const o = h!.store.get(S.vmExports, NS, 'web-export');
      const c = (st(o).conditions as { type: string; reason?: string }[] | undefined)?.find(
        (x) => x.type === 'PVCReady',
      );
      return c?.reason === 'InUse' ? o : undefined;
    });
    expect(phaseOf(pending)).toBe('Pending');
    await new Promise((r) => setTimeout(r, 300));
    expect(phaseOf(h!.store.get(S.vmExports, NS, 'web-export'))).toBe('Pending');
    h!.store.delete(S.vmis, NS, 'web');
    await ready('web-export');
  });

  it("a PVC export stays Pending (InUse) while a pod mounts the claim (a CT's), and goes Ready once the pod is gone", async () => {
    await startWithServer();
    await diskReady();
    h!.store.create(S.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'box', namespace: NS },
      spec: {
        containers: [{ name: 'main', image: 'debian' }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'web-rootdisk' } }],
      },
      status: { phase: 'Running' },
    });
    h!.store.create(S.vmExports, vmExport('pvc-busy', { kind: 'PersistentVolumeClaim', name: 'web-rootdisk' }));
    const pending = await waitFor('InUse', () => {
      const o = h!.store.get(S.vmExports, NS, 'pvc-busy');
      const c = (st(o).conditions as { type: string; reason?: string }[] | undefined)?.find(
        (x) => x.type === 'PVCReady',
      );
      return c?.reason === 'InUse' ? o : undefined;
    });
    expect(phaseOf(pending)).toBe('Pending');
    h!.store.delete(S.pods, NS, 'box');
    await ready('pvc-busy');
  });

  it('exports a VM snapshot: one volume per backed-up PVC, content from the snapshot', async () => {
    await startWithServer();
    h!.store.create(S.volumeSnapshotClasses, {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: 'snap' },
      driver: 'driver.longhorn.io',
      deletionPolicy: 'Delete',
    });
    await diskReady();
    h!.store.create(S.vms, vm('web', 'web-rootdisk'));
    h!.store.create(S.vmSnapshots, {
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineSnapshot',
      metadata: { name: 'snap', namespace: NS },
      spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' } },
    });
    h!.store.create(
      S.vmExports,
      vmExport('web-export', { apiGroup: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot', name: 'snap' }),
    );
    const exp = await ready('web-export');
    expect(st(exp).virtualMachineName).toBe('web');
    const raw = Buffer.from(
      await (await fetch(linkOf(exp, 'raw'), { headers: { 'x-kubevirt-export-token': token() } })).arrayBuffer(),
    );
    expect(raw.toString('utf8')).toContain('content: http:https://example.org/web.img');
  });

  it('is Skipped for a source kind it cannot export', async () => {
    await startWithServer();
    h!.store.create(S.vmExports, vmExport('odd', { kind: 'ConfigMap', name: 'x' }));
    await waitFor('Skipped', () => phaseOf(h!.store.get(S.vmExports, NS, 'odd')) === 'Skipped');
  });

  it('exports a PVC directly and is deleted at its TTL', async () => {
    await startWithServer();
    await diskReady();
    h!.store.create(S.vmExports, {
      ...vmExport('pvc-export', { kind: 'PersistentVolumeClaim', name: 'web-rootdisk' }),
      spec: { source: { kind: 'PersistentVolumeClaim', name: 'web-rootdisk' }, ttlDuration: '30s' },
    });
    const exp = await ready('pvc-export');
    expect(linkOf(exp, 'raw')).toContain('/volumes/web-rootdisk/disk.img');
    await waitFor('expired', () => !h!.store.get(S.vmExports, NS, 'pvc-export'), 15_000);
  });
});
