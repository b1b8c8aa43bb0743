/**
 * The request time-out (CORRAL_REQUEST_TIMEOUT_MS, here 1.5 s) and the uploads it spares. A JSON body that trickles
 * in past it gets a 408 and changes nothing; an upload from a slow client (2 MiB over about 4 s) still arrives,
 * through the library's upload route and through the Proxmox API's storage upload alike.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createProxmoxHandler } from '@/proxmox/index';
import { parseGrants } from '@/proxmox/auth/tokens';
import { startHarness, type Harness } from './harness';

const TIMEOUT_MS = 1500;
const SECRET = 'slow-upload-secret';
const TOKEN = `PVEAPIToken=root@pam!slow=${SECRET}`;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 20, corral: { limits: { requestTimeoutMs: TIMEOUT_MS } } });
  const proxmox = createProxmoxHandler({
    services: h.corral.services,
    grants: parseGrants(`root@pam!slow=${SECRET}`),
    log: () => undefined,
  });
  h.corral.http.mountProxmox((req, res) => proxmox.handle(req, res));
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** POSTs `pieces` one every `everyMs` (the body's length declared up front) and resolves with the answer. */
function trickle(
  path: string,
  headers: Record<string, string>,
  pieces: Buffer[],
  everyMs: number,
): Promise<{ status: number; body: string; ms: number }> {
  const started = Date.now();
  const length = pieces.reduce((n, p) => n + p.length, 0);
  return new Promise((resolve, reject) => {
    const req = request(new URL(`${h.url}${path}`), {
      method: 'POST',
      headers: { ...headers, 'content-length': String(length) },
    });
    let timer: NodeJS.Timeout | undefined;
    req.on('response', (res) => {
      clearTimeout(timer);
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ms: Date.now() - started }));
    });
    req.on('error', reject);
    let next = 0;
    const tick = () => {
      if (next === pieces.length) return void req.end();
      req.write(pieces[next++]);
      timer = setTimeout(tick, everyMs);
    };
    tick();
  });
}

it('a request body still arriving after the request time-out gets a 408, and nothing is created', async () => {
  const json = Buffer.from(JSON.stringify({ name: 'never', import: 'https://example.com/x.img', disk: '1G' }));
  const pieces = Array.from({ length: Math.ceil(json.length / 4) }, (_, i) => json.subarray(i * 4, i * 4 + 4));
  const answer = await trickle('/api/vms', { 'content-type': 'application/json' }, pieces, 300);
  expect(answer.status).toBe(408);
  expect(JSON.parse(answer.body)).toEqual({ error: `the request was not complete within ${TIMEOUT_MS} ms` });
  expect(answer.ms).toBeLessThan(pieces.length * 300);
  expect((await h.get('/api/vms/tailvm/never')).status).toBe(404);
});

it('a slow upload to the library is not cut by the request time-out', async () => {
  const piece = 256 * 1024;
  const answer = await trickle(
    '/api/datavolumes/tailvm/slow/upload?size=1Gi',
    { 'content-type': 'application/octet-stream' },
    Array.from({ length: 8 }, () => randomBytes(piece)),
    500,
  );
  expect(answer.ms).toBeGreaterThan(2 * TIMEOUT_MS);
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toMatchObject({ name: 'slow', bytes: piece * 8 });
}, 60_000);

it("a slow upload through the Proxmox API's storage upload is not cut either", async () => {
  const nodes = await fetch(`${h.url}/api2/json/nodes`, { headers: { authorization: TOKEN } });
  const node = ((await nodes.json()) as { data: { node: string }[] }).data[0]!.node;
  const boundary = 'corral-slow-boundary';
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="content"\r\n\r\niso\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="filename"; filename="slow.iso"\r\n` +
      `Content-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  const pieces = [head, ...Array.from({ length: 7 }, () => randomBytes(256 * 1024)), tail];
  const answer = await trickle(
    `/api2/json/nodes/${node}/storage/local/upload`,
    { authorization: TOKEN, 'content-type': `multipart/form-data; boundary=${boundary}` },
    pieces,
    500,
  );
  expect(answer.ms).toBeGreaterThan(2 * TIMEOUT_MS);
  expect(answer.status).toBe(200);
  expect((JSON.parse(answer.body) as { data: string }).data).toMatch(/^UPID:/);
}, 60_000);
