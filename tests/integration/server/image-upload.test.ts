/**
 * Uploading an image through POST /api/datavolumes/{ns}/{name}/upload on the embedded cluster: the bytes reach
 * CDI's upload proxy and become the volume (read back from the embedded cluster's copy), an upload cut off by the
 * client leaves the DataVolume not Succeeded with the reason on its row, bad input is a 400 naming the field and
 * creates nothing, read-only and cross-site callers get 403.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 20 });
});
afterAll(async () => {
  await h?.close();
});

interface DvRow {
  name: string;
  phase: string;
  progress: number | null;
  source: string;
  contentType: string;
  error: string;
}
const row = async (name: string) => ((await h.get('/api/datavolumes')).body as DvRow[]).find((r) => r.name === name);
const upload = (path: string, body: Uint8Array<ArrayBuffer>, headers: Record<string, string> = {}) =>
  fetch(`${h.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream', ...headers },
    body,
  });

describe('image upload', () => {
  it('streams the file into a new DataVolume: Succeeded, the volume holds exactly the bytes, a task', async () => {
    const file = randomBytes(3 * 1024 * 1024 + 17);
    const res = await upload('/api/datavolumes/tailvm/my-iso/upload?size=1Gi&contentType=iso', file);
    const body = (await res.json()) as { name: string; namespace: string; task: string; bytes: number };
    expect(res.status).toBe(200);
    expect(body).toMatchObject({ name: 'my-iso', namespace: 'tailvm', bytes: file.length });
    const claim = h.sim.store.get('/persistentvolumeclaims', 'tailvm', 'my-iso');
    const stored = readFileSync(claim!.metadata.annotations!['sim.corral.dev/upload-file']!);
    expect(Buffer.compare(stored, file)).toBe(0);
    await eventually(async () => (await row('my-iso'))?.phase === 'Succeeded', 10_000, 'row Succeeded');
    expect(await row('my-iso')).toMatchObject({ source: 'upload', contentType: 'iso', progress: 100, error: '' });
    const task = (await h.get(`/api/tasks/${body.task}`)).body as { status: string; progress: number };
    expect(task.status).toBe('done');
  }, 60_000);

  it('a client that disconnects mid-upload leaves the DataVolume not Succeeded, and its row says why', async () => {
    const url = new URL(`${h.url}/api/datavolumes/tailvm/cut-iso/upload?size=1Gi`);
    await new Promise<void>((resolve) => {
      const req = request(url, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(64 * 1024 * 1024) },
      });
      req.on('error', () => resolve());
      const chunk = randomBytes(1024 * 1024);
      const push = (n: number) => {
        if (n === 0) return setTimeout(() => (req.destroy(), resolve()), 300);
        req.write(chunk, () => push(n - 1));
      };
      // Wait for the DataVolume to be UploadReady (the relay starts then), send some, then hang up.
      void eventually(async () => (await row('cut-iso'))?.phase === 'UploadReady', 20_000, 'UploadReady').then(() =>
        push(4),
      );
      req.flushHeaders();
    });
    await eventually(async () => (await row('cut-iso'))?.error !== '', 10_000, 'row error');
    const r = await row('cut-iso');
    expect(r?.phase).not.toBe('Succeeded');
    expect(r?.error).toMatch(/cut off after \d+ bytes/);
    expect(
      h.sim.store.get('/persistentvolumeclaims', 'tailvm', 'cut-iso')?.metadata.annotations?.[
        'sim.corral.dev/upload-file'
      ],
    ).toBeUndefined();
  }, 60_000);

  it('a second upload under the cut-off name finishes that DataVolume; one while an upload runs is a 409', async () => {
    // cut-iso was left UploadReady by the test before: the retry is the cancelled upload done again.
    const file = randomBytes(2 * 1024 * 1024 + 5);
    const uid = h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'cut-iso')?.metadata.uid;
    const res = await upload('/api/datavolumes/tailvm/cut-iso/upload?size=1Gi&contentType=iso', file);
    expect({ status: res.status, body: (await res.json()) as unknown }).toMatchObject({
      status: 200,
      body: { name: 'cut-iso', bytes: file.length },
    });
    expect(h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'cut-iso')?.metadata.uid).toBe(uid);
    const claim = h.sim.store.get('/persistentvolumeclaims', 'tailvm', 'cut-iso');
    expect(Buffer.compare(readFileSync(claim!.metadata.annotations!['sim.corral.dev/upload-file']!), file)).toBe(0);
    await eventually(async () => (await row('cut-iso'))?.phase === 'Succeeded', 10_000, 'row Succeeded');
    expect((await row('cut-iso'))?.error).toBe('');
    // Once Succeeded the name is taken for good.
    const again = await upload('/api/datavolumes/tailvm/cut-iso/upload?size=1Gi&contentType=iso', file);
    expect(((await again.json()) as { error: string }).error).toMatch(/already exists \(Succeeded\)/);

    // While an upload is being sent, another one into the same DataVolume is refused, naming the running task.
    const held = request(new URL(`${h.url}/api/datavolumes/tailvm/busy-iso/upload?size=1Gi`), {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(16 * 1024 * 1024) },
    });
    held.on('error', () => undefined);
    held.flushHeaders();
    await eventually(async () => (await row('busy-iso'))?.phase === 'UploadReady', 20_000, 'UploadReady');
    held.write(randomBytes(1024 * 1024));
    const second = await upload('/api/datavolumes/tailvm/busy-iso/upload?size=1Gi', randomBytes(1024));
    expect({ status: second.status, error: ((await second.json()) as { error: string }).error }).toEqual({
      status: 409,
      error: expect.stringMatching(/^an upload into DataVolume tailvm\/busy-iso is already running \(task upload-/),
    });
    held.destroy();
    await eventually(async () => (await row('busy-iso'))?.error !== '', 10_000, 'busy-iso cut off');
    const wrongType = await upload(
      '/api/datavolumes/tailvm/busy-iso/upload?size=1Gi&contentType=disk',
      randomBytes(1024),
    );
    expect(((await wrongType.json()) as { error: string }).error).toMatch(/made for an ISO, not a disk image/);
  }, 60_000);

  it('refuses bad input with 400 naming the field, read-only and cross-site callers with 403 — creating nothing', async () => {
    const small = new Uint8Array(new ArrayBuffer(16));
    const cases: [string, number, RegExp, Record<string, string>?][] = [
      ['/api/datavolumes/tailvm/Bad_Name/upload?size=1Gi', 400, /^name: /],
      ['/api/datavolumes/tailvm/ok-name/upload?size=12', 400, /^size: /],
      ['/api/datavolumes/tailvm/ok-name/upload?size=1Gi&colour=red', 400, /colour/],
      ['/api/datavolumes/tailvm/ok-name/upload?size=1Gi&contentType=zip', 400, /^contentType: /],
      ['/api/datavolumes/tailvm/ok-name/upload?size=1Gi', 400, /^content-type: /, { 'content-type': 'text/plain' }],
      ['/api/datavolumes/tailvm/ok-name/upload?size=1Gi', 403, /cross-site/, { 'sec-fetch-site': 'cross-site' }],
      ['/api/datavolumes/nope/ok-name/upload?size=1Gi', 400, /^namespace: no namespace 'nope'/],
    ];
    for (const [path, status, message, headers] of cases) {
      const res = await upload(path, small, headers);
      const error = ((await res.json()) as { error: string }).error;
      expect({ path, status: res.status, error }).toEqual({ path, status, error: expect.stringMatching(message) });
    }
    const admins = process.env.CORRAL_ADMINS;
    process.env.CORRAL_ADMINS = 'alice@example';
    try {
      expect((await upload('/api/datavolumes/tailvm/ok-name/upload?size=1Gi', small)).status).toBe(403);
    } finally {
      if (admins === undefined) delete process.env.CORRAL_ADMINS;
      else process.env.CORRAL_ADMINS = admins;
    }
    // A file larger than the declared size is refused from its Content-Length, before a byte is read.
    const tooBig = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(new URL(`${h.url}/api/datavolumes/tailvm/ok-name/upload?size=1Gi`), {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(2 * 1024 ** 3) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    expect(tooBig.status).toBe(400);
    expect(tooBig.body).toMatch(/size: the file \(2147483648 bytes\) does not fit in 1Gi/);
    expect(await row('ok-name')).toBeUndefined();
    expect((await upload('/api/datavolumes/tailvm/my-iso/upload?size=1Gi', small)).status).toBe(409);
  }, 60_000);
});
