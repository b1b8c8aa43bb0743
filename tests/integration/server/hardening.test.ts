/**
 * Issue 14's front-door defects, each replayed against a running Corral: oversized streamed bodies, spoofed
 * identity headers, DNS-rebinding Host names, silent coercion of JSON bodies, lax names and sizes, unknown fields,
 * limits on URLs, headers, slow clients and connections per peer, and a repeated delete of a terminating VM.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTRPCClient, httpLink } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from '@/server/routers/_app';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
let port: number;

beforeAll(async () => {
  h = await startHarness({
    fleet: 'demo',
    corral: { limits: { headersTimeoutMs: 800, maxConnectionsPerPeer: 40 } },
  });
  port = h.corral.port;
});
afterAll(async () => {
  await h?.close();
});

/** Writes raw bytes on a fresh socket and resolves with everything the server sends until it closes or `ms` pass. */
function raw(write: (s: Socket) => void, ms = 5_000): Promise<{ text: string; closed: boolean; socket: Socket }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      resolve({ text, closed, socket });
    };
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => write(socket));
    setTimeout(() => finish(false), ms);
  });
}

describe('request bodies are limited while they stream', () => {
  it('answers 413 to a chunked body past 1 MiB before the client has finished sending it', async () => {
    // The client sends 2 MiB in chunks and then stalls without ending the body: a server that reads the body whole
    // before checking its size never answers.
    const r = await raw((s) => {
      s.write(
        'POST /api/vms HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n',
      );
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      for (let i = 0; i < 32; i++) s.write(`${chunk.length.toString(16)}\r\n${chunk.toString('latin1')}\r\n`);
    });
    r.socket.destroy();
    expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
    expect(r.text).toContain('request body larger than 1048576 bytes');
  });

  it('refuses a declared Content-Length past the limit without reading it', async () => {
    const r = await raw((s) =>
      s.write(
        'POST /api/vms HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 300000000\r\n\r\n{',
      ),
    );
    r.socket.destroy();
    expect(r.text).toMatch(/^HTTP\/1\.1 413 /);
  });

  it('checks the cross-site guard before reading a body', async () => {
    const r = await raw((s) =>
      s.write(
        'POST /api/vms HTTP/1.1\r\nHost: localhost\r\nOrigin: http://evil.example\r\nContent-Type: application/json\r\nContent-Length: 900000\r\n\r\n',
      ),
    );
    r.socket.destroy();
    expect(r.text).toMatch(/^HTTP\/1\.1 403 /);
    expect(r.text).toContain('cross-site request refused');
  });
});

describe('Host allow-list (DNS rebinding)', () => {
  it('answers 421 to a request for a Host this server is not', async () => {
    // fetch() will not send a foreign Host header, so this goes over a raw socket as a rebinding page's request would.
    const r = await raw((s) =>
      s.write(
        'POST /api2/json/nodes/node-1/qemu/100/status/start HTTP/1.1\r\nHost: rebind.attacker.example:8006\r\n\r\n',
      ),
    );
    r.socket.destroy();
    expect(r.text).toMatch(/^HTTP\/1\.1 421 /);
    expect(r.text).toContain('CORRAL_ALLOWED_HOSTS');
  });

  it('refuses a WebSocket upgrade for such a Host before any handler', async () => {
    const r = await raw((s) =>
      s.write(
        'GET /api/tty/tailvm/web HTTP/1.1\r\nHost: rebind.attacker.example:8006\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
          'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      ),
    );
    expect(r.text).toMatch(/^HTTP\/1\.1 421 /);
  });

  it('still answers loopback names and addresses', async () => {
    for (const host of ['localhost:1', '127.0.0.1', '[::1]:8006', 'corral.localhost'])
      expect(
        (await raw((s) => s.write(`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`))).text,
        host,
      ).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('strict input', () => {
  it('never reads "false" as true in a JSON body, over REST or over tRPC afterwards', async () => {
    const created = await h.post('/api/vms', { name: 'strict-1', image: 'fedora', start: 'false' });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({ error: expect.stringMatching(/^start: /) });
    const tag = await h.post('/api/vms/tailvm/web/tags', { tag: 'x', on: 'false' });
    expect(tag.status).toBe(400);
    expect(tag.body).toEqual({ error: expect.stringMatching(/^on: /) });
    // The REST adapter used to switch coercion on in the shared schema, so tRPC coerced from then on too.
    const trpc = createTRPCClient<AppRouter>({ links: [httpLink({ url: `${h.url}/trpc`, transformer: superjson })] });
    await expect(
      trpc.vms.setTag.mutate({ namespace: 'tailvm', name: 'web', tag: 'x', on: 'false' as unknown as boolean }),
    ).rejects.toThrow(/on: /);
    const row = await h.get('/api/vms/tailvm/web/row');
    expect((row.body as { tags: string[] }).tags).not.toContain('x');
  });

  it('names unknown fields in the body and the query', async () => {
    const r = await h.post('/api/vms/tailvm/web/tags', { tag: 'x', on: true, colour: 'red' });
    expect(r).toMatchObject({ status: 400, body: { error: expect.stringContaining('"colour"') } });
    const q = await h.get('/api/tasks?limit=5&verbose=1');
    expect(q).toMatchObject({ status: 400, body: { error: expect.stringContaining('"verbose"') } });
    const none = await h.get('/api/nodes?x=1');
    expect(none).toMatchObject({ status: 400, body: { error: expect.stringContaining('"x"') } });
  });

  it('parses query numbers strictly', async () => {
    expect((await h.get('/api/tasks?limit=5')).status).toBe(200);
    for (const bad of ['', 'abc', '1e2', '0', '5.5'])
      expect((await h.get(`/api/tasks?limit=${bad}`)).status, `limit=${bad}`).toBe(400);
  });

  it('refuses a deeply nested body with a 400, not a stack overflow', async () => {
    const res = await fetch(`${h.url}/api/vms/tailvm/web/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    });
    const r = { status: res.status, body: (await res.json()) as unknown };
    expect(r).toMatchObject({ status: 400, body: { error: expect.stringContaining('nests deeper') } });
  });

  it('takes only application/json as JSON', async () => {
    const r = await h.post('/api/vms/tailvm/web/tags', { tag: 'x', on: true }, { 'content-type': 'application/jsonx' });
    expect(r.status).toBe(403);
    const ok = await h.post(
      '/api/vms/tailvm/web/tags',
      { tag: 'y', on: false },
      {
        'content-type': 'application/json; charset=utf-8',
      },
    );
    expect(ok.status).toBe(200);
  });

  it('limits free text by its UTF-8 size', async () => {
    const r = await h.post('/api/vms', { name: 'emoji', image: 'fedora', cloudInit: '😀'.repeat(20_000) });
    expect(r).toMatchObject({ status: 400, body: { error: 'cloudInit: must be at most 65536 bytes' } });
  });

  it('answers 404 for the consoles of a VM that does not exist', async () => {
    expect((await h.get('/api/vms/tailvm/ghost/console-sessions')).status).toBe(404);
    expect((await h.get('/api/vms/tailvm/ghost/console-log')).status).toBe(404);
  });

  it('wants a JSON object as the body', async () => {
    for (const body of [[1, 2], 'start', 5, null])
      expect((await h.post('/api/vms', body)).status, JSON.stringify(body)).toBe(400);
  });
});

describe('limits', () => {
  it('answers 414 to an overlong URL and 431 to an oversized header block', async () => {
    expect((await fetch(`${h.url}/api/vms?${'a'.repeat(9000)}`)).status).toBe(414);
    expect((await fetch(`${h.url}/healthz`, { headers: { 'x-big': 'b'.repeat(20_000) } })).status).toBe(431);
  });

  it('closes a connection that never finishes its headers', async () => {
    const started = Date.now();
    const r = await raw((s) => s.write('GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: '), 10_000);
    expect(r.closed).toBe(true);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('caps concurrent connections from one peer', async () => {
    const sockets: Socket[] = [];
    const closed: boolean[] = [];
    for (let i = 0; i < 60; i++) {
      const s = connect(port, '127.0.0.1');
      const index = i;
      closed[index] = false;
      s.on('close', () => (closed[index] = true));
      s.on('error', () => undefined);
      sockets.push(s);
    }
    try {
      await eventually(() => closed.filter(Boolean).length >= 20, 5_000, '20 connections closed');
      expect(closed.filter(Boolean).length).toBe(20);
    } finally {
      for (const s of sockets) s.destroy();
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${h.url}/healthz`)).status).toBe(200);
  });
});

describe('errors', () => {
  it('carry nosniff on API answers', async () => {
    const res = await fetch(`${h.url}/api/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });
});

describe('repeated delete', () => {
  it('answers 409 to a second delete of a VM that is still terminating', async () => {
    expect((await h.post('/api/vms', { name: 'held', image: 'fedora' })).status).toBe(201);
    await eventually(async () => (await h.get('/api/vms/tailvm/held/row')).status === 200, 10_000, 'VM in cache');
    // A finalizer nobody removes keeps the VM terminating after Corral's delete, as a busy controller would.
    const held = await fetch(`${h.sim.url}/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/held`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer sim-admin-token', 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { finalizers: ['test.corral.dev/hold'] } }),
    });
    expect(held.status).toBe(200);
    const first = await h.del('/api/vms/tailvm/held');
    expect(first.status).toBe(200);
    await eventually(
      async () =>
        ((await h.get('/api/vms/tailvm/held')).body as { metadata?: { deletionTimestamp?: string } }).metadata
          ?.deletionTimestamp,
      10_000,
      'deletionTimestamp',
    );
    const again = await h.del('/api/vms/tailvm/held');
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: expect.stringContaining('already being deleted') });
  });
});
