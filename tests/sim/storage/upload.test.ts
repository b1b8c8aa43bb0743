import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewObject } from '@/sim/store/types';
import { S, UPLOAD_FILE_ANNOTATION } from '@/sim/storage/keys';
import { readTar, writeTar } from '@/sim/storage/tar';
import { exportClaim, formatsOf, type Harness, NS, phaseOf, startHarness, storageClass, waitFor } from './harness';

let h: Harness | undefined;
let server: Server | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** The module's raw routes on a loopback server, as the embedded apiserver mounts them. */
async function start(): Promise<string> {
  let base = '';
  h = await startHarness({
    speed: 40,
    seed: (store) => store.create(S.storageClasses, storageClass('longhorn', {}, true)),
    baseUrl: () => base,
  });
  const harness = h;
  server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const route = harness.module.rawRoutes?.find((r) => r.matches(url, req.method ?? 'GET'));
    if (!route) return void res.writeHead(404).end();
    void route.handle(harness.ctx, req, res, url);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return base;
}

function uploadDv(name: string, size = '1Mi', contentType?: string): NewObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: { name, namespace: NS },
    spec: {
      ...(contentType ? { contentType } : {}),
      source: { upload: {} },
      storage: { resources: { requests: { storage: size } } },
    },
  };
}

async function uploadReady(base: string, name: string, size?: string, contentType?: string): Promise<string> {
  h!.store.create(S.dataVolumes, uploadDv(name, size, contentType));
  await waitFor('UploadReady', () => phaseOf(h!.store.get(S.dataVolumes, NS, name)) === 'UploadReady');
  const res = await fetch(`${base}/apis/upload.cdi.kubevirt.io/v1beta1/namespaces/${NS}/uploadtokenrequests`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      apiVersion: 'upload.cdi.kubevirt.io/v1beta1',
      kind: 'UploadTokenRequest',
      spec: { pvcName: name },
    }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { kind: string; status: { token: string } };
  expect(body.kind).toBe('UploadTokenRequest');
  return body.status.token;
}

async function exported(base: string, volume: string): Promise<Buffer> {
  h!.store.create(S.vmExports, {
    apiVersion: 'export.kubevirt.io/v1',
    kind: 'VirtualMachineExport',
    metadata: { name: `${volume}-export`, namespace: NS },
    spec: { source: { apiGroup: '', kind: 'PersistentVolumeClaim', name: volume } },
  });
  await waitFor('export Ready', () => phaseOf(h!.store.get(S.vmExports, NS, `${volume}-export`)) === 'Ready', 20_000);
  const secret = h!.store.get(S.secrets, NS, `export-token-${volume}-export`);
  const token = Buffer.from(String((secret?.data as { token: string }).token), 'base64').toString('utf8');
  const res = await fetch(`${base}/sim-export/${NS}/${volume}-export/volumes/${volume}/disk.img`, {
    headers: { 'x-kubevirt-export-token': token },
  });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

describe('CDI upload (UploadTokenRequest + upload proxy)', () => {
  it('stores the streamed bytes as the volume, Succeeded, and an export serves exactly them', async () => {
    const base = await start();
    const token = await uploadReady(base, 'iso');
    const file = randomBytes(300_000);
    const res = await fetch(`${base}/v1beta1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: file,
    });
    expect(res.status).toBe(200);
    const dv = h!.store.get(S.dataVolumes, NS, 'iso');
    expect(phaseOf(dv)).toBe('Succeeded');
    expect((dv?.status as { progress: string }).progress).toBe('100.0%');
    expect(Buffer.compare(await exported(base, 'iso'), file)).toBe(0);
  });

  it('refuses a missing or wrong token (401) and a body larger than the claim (400, not Succeeded)', async () => {
    const base = await start();
    const token = await uploadReady(base, 'small', '64Ki');
    expect((await fetch(`${base}/v1beta1/upload`, { method: 'POST', body: 'x' })).status).toBe(401);
    const wrong = await fetch(`${base}/v1beta1/upload`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
      body: 'x',
    });
    expect(wrong.status).toBe(401);
    const big = await fetch(`${base}/v1beta1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: randomBytes(128 * 1024),
    });
    expect(big.status).toBe(400);
    expect(await big.text()).toContain('larger than the available storage');
    expect(phaseOf(h!.store.get(S.dataVolumes, NS, 'small'))).toBe('UploadReady');
  });

  it('a cut-off upload leaves the DataVolume UploadReady, and a second attempt then succeeds', async () => {
    const base = await start();
    const token = await uploadReady(base, 'cut');
    const url = new URL(`${base}/v1beta1/upload`);
    await new Promise<void>((resolve) => {
      const req = request(url, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-length': '500000' },
      });
      req.on('error', () => resolve());
      req.write(randomBytes(100_000), () => setTimeout(() => (req.destroy(), resolve()), 100));
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(phaseOf(h!.store.get(S.dataVolumes, NS, 'cut'))).toBe('UploadReady');
    expect(h!.store.get(S.pvcs, NS, 'cut')?.metadata.annotations?.[UPLOAD_FILE_ANNOTATION]).toBeUndefined();
    const again = await fetch(url, { method: 'PUT', headers: { authorization: `Bearer ${token}` }, body: 'hello' });
    expect(again.status).toBe(200);
    expect(phaseOf(h!.store.get(S.dataVolumes, NS, 'cut'))).toBe('Succeeded');
    const file = h!.store.get(S.pvcs, NS, 'cut')?.metadata.annotations?.[UPLOAD_FILE_ANNOTATION];
    expect(file && existsSync(file)).toBe(true);
    h!.store.delete(S.pvcs, NS, 'cut');
    await waitFor('file removed with its claim', () => !existsSync(file!));
  });
});

/** POSTs `body` with chunked transfer encoding (no Content-Length), as a client that does not know the length. */
function chunkedUpload(base: string, token: string, body: Buffer): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(`${base}/v1beta1/upload`), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'transfer-encoding': 'chunked' },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    for (let at = 0; at < body.length; at += 700) req.write(body.subarray(at, at + 700));
    req.end();
  });
}

const TREE = [
  { path: 'etc', type: 'dir' as const, mode: 0o755, mtime: 1_796_083_200, size: 0 },
  {
    path: 'etc/hostname',
    type: 'file' as const,
    mode: 0o644,
    mtime: 1_796_083_200,
    size: 4,
    data: Buffer.from('box\n'),
  },
  {
    path: 'srv/data.bin',
    type: 'file' as const,
    mode: 0o600,
    mtime: 1_796_083_200,
    size: 5000,
    data: randomBytes(5000),
  },
];

describe('CDI upload into an archive DataVolume', () => {
  it('unpacks a tar (chunked, plain or gzipped) into the claim; its export serves exactly those files', async () => {
    const base = await start();
    const plain = await uploadReady(base, 'plain', '1Mi', 'archive');
    const zipped = await uploadReady(base, 'zipped', '1Mi', 'archive');
    const archive = writeTar(TREE, './');
    expect(await chunkedUpload(base, plain, archive)).toEqual({ status: 200, text: '' });
    expect(await chunkedUpload(base, zipped, gzipSync(archive))).toEqual({ status: 200, text: '' });
    for (const name of ['plain', 'zipped']) {
      expect(phaseOf(h!.store.get(S.dataVolumes, NS, name))).toBe('Succeeded');
      const { exp, token } = await exportClaim(h!, name);
      const formats = formatsOf(exp, name);
      expect(Object.keys(formats)).toEqual(['dir', 'tar.gz']);
      const res = await fetch(formats['tar.gz']!, { headers: { 'x-kubevirt-export-token': token } });
      const files = readTar(gunzipSync(Buffer.from(await res.arrayBuffer())));
      // `srv` came only as the parent of a member: extraction made it, the export lists it.
      expect(files.map((f) => [f.path, f.type, f.mode, f.data.toString('base64')])).toEqual([
        ['etc', 'dir', 0o755, ''],
        ['etc/hostname', 'file', 0o644, Buffer.from('box\n').toString('base64')],
        ['srv', 'dir', 0o755, ''],
        ['srv/data.bin', 'file', 0o600, TREE[2]!.data!.toString('base64')],
      ]);
      const file = await fetch(`${formats.dir!}/srv/data.bin`, { headers: { 'x-kubevirt-export-token': token } });
      expect(Buffer.from(await file.arrayBuffer()).equals(TREE[2]!.data!)).toBe(true);
    }
    expect(h!.store.get(S.pvcs, NS, 'plain')?.metadata.annotations?.['sim.corral.dev/disk-content']).toMatch(
      /^archive:sha256:[0-9a-f]{64} \(4 entries\)$/,
    );
  }, 40_000);

  it('a body that is not a tar fails with a 500 and leaves the DataVolume UploadReady; a tar then lands', async () => {
    const base = await start();
    const token = await uploadReady(base, 'junk', '1Mi', 'archive');
    const junk = await fetch(`${base}/v1beta1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: randomBytes(10_000),
    });
    expect(junk.status).toBe(500);
    expect(await junk.text()).toMatch(
      /Saving stream failed: unable to untar files from endpoint: .*not look like a tar/,
    );
    const cut = await fetch(`${base}/v1beta1/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new Uint8Array(writeTar(TREE).subarray(0, 2048)),
    });
    expect([cut.status, await cut.text()]).toEqual([500, expect.stringMatching(/Unexpected EOF in archive/)]);
    expect(phaseOf(h!.store.get(S.dataVolumes, NS, 'junk'))).toBe('UploadReady');
    expect(h!.store.get(S.pvcs, NS, 'junk')?.metadata.annotations?.[UPLOAD_FILE_ANNOTATION]).toBeUndefined();
    // The proxy routes by the claim's content type and refuses one it does not know.
    const mark = (value: string) =>
      h!.store.mutate(S.pvcs, NS, 'junk', (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, 'cdi.kubevirt.io/storage.contentType': value };
      });
    mark('weird');
    expect(await chunkedUpload(base, token, writeTar(TREE))).toEqual({
      status: 503,
      text: 'rejecting upload request for PVC junk - upload content-type weird is invalid',
    });
    mark('archive');
    expect(await chunkedUpload(base, token, writeTar(TREE))).toEqual({ status: 200, text: '' });
    expect(phaseOf(h!.store.get(S.dataVolumes, NS, 'junk'))).toBe('Succeeded');
  });
});
