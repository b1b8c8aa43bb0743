/**
 * An upload from a slow client may take longer than the server's request time-out (CORRAL_REQUEST_TIMEOUT_MS)
 * and the idle limit: here 2 MiB trickle in over about 4 s against a 1.5 s request time-out and still arrive.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { expect, it } from 'vitest';
import { startHarness } from './harness';

it('a slow upload is not cut by the request time-out', async () => {
  const h = await startHarness({ fleet: 'empty', speed: 20, corral: { limits: { requestTimeoutMs: 1500 } } });
  try {
    const piece = 256 * 1024;
    const pieces = 8;
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(new URL(`${h.url}/api/datavolumes/tailvm/slow/upload?size=1Gi`), {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream', 'content-length': String(piece * pieces) },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      let left = pieces;
      const tick = () => {
        if (left-- === 0) return void req.end();
        req.write(randomBytes(piece));
        setTimeout(tick, 500);
      };
      tick();
    });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ name: 'slow', bytes: piece * pieces });
  } finally {
    await h.close();
  }
}, 60_000);
