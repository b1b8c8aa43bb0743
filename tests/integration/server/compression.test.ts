/**
 * gzip/brotli negotiation on the APIs (src/server/http/compression.ts): large JSON answers of /api, /trpc and
 * /api2/json are compressed with the coding the client prefers and decode to the same bytes; small answers, clients
 * that accept no coding and HEAD requests are sent as they are. Event streams (`live.fleet`) are gzipped frame by
 * frame: the opening snapshot shrinks, and a later change still arrives at once (each frame is flushed).
 */
import { request, type IncomingMessage } from 'node:http';
import { brotliDecompressSync, createGunzip, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPRESS_MIN_BYTES } from '@/server/http/compression';
import type { FleetEvent } from '@/server/schemas/live';
import { resourceKey } from '@/sim/store/types';
import { eventually, startHarness, type Harness } from './harness';

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

const VMS = resourceKey('kubevirt.io', 'virtualmachines');

/** A raw `live.fleet` subscription (one event per change): its parsed events and the bytes on the wire vs decoded. */
function openStream(acceptEncoding: string) {
  const events: FleetEvent[] = [];
  let wire = 0;
  let decoded = 0;
  let buffered = '';
  const req = request(`${h.url}/trpc/live.fleet`, {
    headers: { accept: 'text/event-stream', 'accept-encoding': acceptEncoding },
  });
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req.on('response', (res) => {
      res.on('data', (c: Buffer) => (wire += c.length));
      const body = res.headers['content-encoding'] === 'gzip' ? res.pipe(createGunzip()) : res;
      body.on('data', (c: Buffer) => {
        decoded += c.length;
        buffered += c.toString();
        let cut: number;
        while ((cut = buffered.indexOf('\n\n')) >= 0) {
          const data = /^data: ?(.*)$/m.exec(buffered.slice(0, cut))?.[1];
          buffered = buffered.slice(cut + 2);
          // Skips tRPC's own `connected` frame and pings: only tracked events carry `{ json }`.
          const event = data ? (JSON.parse(data) as { json?: FleetEvent }).json : undefined;
          if (event) events.push(event);
        }
      });
      body.on('error', () => undefined);
      resolve(res);
    });
    req.on('error', reject);
  });
  req.end();
  return { response, events, wire: () => wire, decoded: () => decoded, close: () => req.destroy() };
}

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

  it('errors keep their {"error"} body; HEAD is never held back or encoded', async () => {
    const missing = await get('/api/vms/tailvm/no-such-vm', { 'accept-encoding': 'br' });
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body.toString())).toEqual({ error: expect.stringContaining('not found') });

    const head = await get('/api/vms', { 'accept-encoding': 'br' }, 'HEAD');
    expect(head.headers['content-encoding']).toBeUndefined();
  });

  it('live.fleet with gzip: the snapshot travels compressed and a later change arrives without the stream ending', async () => {
    const stream = openStream('gzip, deflate, br');
    try {
      const res = await stream.response;
      expect(res.headers['content-type']).toMatch(/text\/event-stream/);
      expect(res.headers['content-encoding']).toBe('gzip');
      expect(res.headers.vary).toBe('Accept-Encoding');
      const snapshot = await eventually(() => stream.events.find((e) => e.type === 'snapshot'), 10_000);
      if (snapshot.type !== 'snapshot') throw new Error('not a snapshot');
      // Compressed on the wire, whole when decoded.
      expect(stream.wire()).toBeLessThan(stream.decoded() / 4);
      const vm = snapshot.vms.find((v) => v.status === 'Stopped')!;
      h.sim.store.mutate(VMS, vm.namespace, vm.name, (o) => {
        const obj = o as { status?: Record<string, unknown> };
        obj.status = { ...obj.status, printableStatus: 'Paused' };
      });
      // Only a per-frame flush gets this small event out: unflushed it would wait in the compressor.
      await eventually(
        () =>
          stream.events.some(
            (e) => e.type === 'vm' && e.op === 'upsert' && e.vm.name === vm.name && e.vm.status === 'Paused',
          ),
        10_000,
      );
    } finally {
      stream.close();
    }
  });

  it('live.fleet for a client without gzip (brotli only, or none) is sent as it is', async () => {
    for (const coding of ['br', 'identity']) {
      const stream = openStream(coding);
      try {
        const res = await stream.response;
        expect(res.headers['content-type']).toMatch(/text\/event-stream/);
        expect(res.headers['content-encoding']).toBeUndefined();
        await eventually(() => stream.events.find((e) => e.type === 'snapshot'), 10_000);
        expect(stream.wire()).toBe(stream.decoded());
      } finally {
        stream.close();
      }
    }
  });

  it('the Proxmox API under /api2/json is negotiated the same way', async () => {
    const gz = await get('/api2/json/cluster/resources', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(proxmoxBody);
    const plain = await get('/api2/json/cluster/resources', {});
    expect(plain.body.toString()).toBe(proxmoxBody);
  });
});
