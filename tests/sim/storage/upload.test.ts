import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { NewObject } from '@/sim/store/types';
import { S, UPLOAD_FILE_ANNOTATION } from '@/sim/storage/keys';
import { type Harness, NS, phaseOf, startHarness, storageClass, waitFor } from './harness';

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

function uploadDv(name: string, size = '1Mi'): NewObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: { name, namespace: NS },
    spec: { source: { upload: {} }, storage: { resources: { requests: { storage: size } } } },
  };
}

async function uploadReady(base: string, name: string, size?: string): Promise<string> {
  h!.store.create(S.dataVolumes, uploadDv(name, size));
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
