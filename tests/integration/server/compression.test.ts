/**
 * gzip/brotli negotiation on the APIs (src/server/http/compression.ts): large JSON answers of /api, /trpc and
 * /api2/json are compressed with the coding the client prefers and decode to the same bytes; small answers, clients
 * that accept no coding, HEAD requests and event streams are sent as they are.
 */
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESS_MIN_BYTES } from '@/server/http/compression';
import { startHarness, type Harness } from './harness';

let h: Harness;
const proxmoxBody = JSON.stringify({
  data: Array.from({ length: 400 }, (_, i) => ({ vmid: 100 + i, name: `vm-${i}` })),
});

beforeAll(async () => {
  h = await startHarness({ fleet: 60, speed: 50 });
  // A stand-in for the Proxmox handler: what matters here is the route's wiring, not the answer's content.
  h.corral.http.mountProxmox((_req, res) => {
    res.setHeader('Content-Type', 'application/json;charset=UTF-8');
    res.end(proxmoxBody);
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** A raw GET: status, headers and the body bytes as they came over the wire. */
function get(path: string, headers: Record<string, string>, method = 'GET') {
  return new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      const req = request(`${h.url}${path}`, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    },
  );
}

describe('response compression', () => {
  it('GET /api/vms: gzip when offered, brotli for a client offering only that; both decode to the identity answer', async () => {
    const plain = await get('/api/vms', {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(plain.body.length).toBeGreaterThan(COMPRESS_MIN_BYTES);

    const br = await get('/api/vms', { 'accept-encoding': 'br' });
    expect(br.status).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toBe('Accept-Encoding');
    expect(Number(br.headers['content-length'])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(plain.body.length / 4);
    expect(JSON.parse(brotliDecompressSync(br.body).toString())).toEqual(JSON.parse(plain.body.toString()));

    const gz = await get('/api/vms', { 'accept-encoding': 'gzip, deflate, br' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gz.body).toString())).toEqual(JSON.parse(plain.body.toString()));

    const refused = await get('/api/vms', { 'accept-encoding': 'br;q=0, gzip;q=0' });
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.equals(plain.body)).toBe(true);
  });

  it('procedure answers through trpc-to-openapi and /trpc are compressed too', async () => {
    // `?namespace=` takes the procedure (trpc-to-openapi) rather than the cached /api/vms answer.
    const listed = await get('/api/vms?namespace=fleet-00', { 'accept-encoding': 'gzip' });
    expect(listed.status).toBe(200);
    expect(listed.headers['content-encoding']).toBe('gzip');
    expect((JSON.parse(gunzipSync(listed.body).toString()) as unknown[]).length).toBe(60);
    const trpc = await get('/trpc/vms.list', { 'accept-encoding': 'br' });
    expect(trpc.status).toBe(200);
    expect(trpc.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(trpc.body).toString())).toHaveProperty('result');
    // Small answers go out as they are.
    const small = await get('/api/whoami', { 'accept-encoding': 'br' });
    expect(small.status).toBe(200);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.body.length).toBeLessThan(COMPRESS_MIN_BYTES);
    expect(JSON.parse(small.body.toString())).toHaveProperty('login');
  });

  it('errors keep their {"error"} body; HEAD and event streams are never held back or encoded', async () => {
    const missing = await get('/api/vms/tailvm/no-such-vm', { 'accept-encoding': 'br' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body.toString())).toEqual({ error: expect.stringContaining('not found') });

    const head = await get('/api/vms', { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.headers['content-encoding']).toBeUndefined();

    const abort = new AbortController();
    const sse = await fetch(`${h.url}/trpc/live.fleet`, {
      signal: abort.signal,
      headers: { accept: 'text/event-stream', 'accept-encoding': 'br, gzip' },
    });
    expect(sse.headers.get('content-type')).toMatch(/text\/event-stream/);
    expect(sse.headers.get('content-encoding')).toBeNull();
    const reader = sse.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toMatch(/data:|:/);
    abort.abort();
  });

  it('the Proxmox API under /api2/json is negotiated the same way', async () => {
    const gz = await get('/api2/json/cluster/resources', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(proxmoxBody);
    const plain = await get('/api2/json/cluster/resources', {});
    expect(plain.body.toString()).toBe(proxmoxBody);
  });
});
