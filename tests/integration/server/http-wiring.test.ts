/**
 * The one-port server's mount points: WebSocket upgrades routed by prefix (consoles), unknown upgrades refused
 * instead of left hanging, /api2/json answered 501 until the Proxmox handler is mounted, then by it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

function rawUpgrade(path: string): Promise<string> {
  const { port } = new URL(h.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
    });
    let data = '';
    socket.on('data', (d) => {
      data += d.toString();
      if (data.includes('\r\n\r\n')) {
        socket.destroy();
        resolve(data.split('\r\n')[0] ?? '');
      }
    });
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      resolve(`no answer: ${data}`);
    }, 3000);
  });
}

describe('upgrade routing and mounts', () => {
  it('refuses unknown upgrades with 404 instead of hanging', async () => {
    expect(await rawUpgrade('/api/nothing')).toBe('HTTP/1.1 404 Not Found');
  });

  it('routes registered prefixes (longest first) to their handler', async () => {
    const seen: string[] = [];
    h.corral.http.registerUpgrade('/api/vnc/', (req, socket) => {
      seen.push(`vnc ${req.url}`);
      socket.end('HTTP/1.1 418 I am a teapot\r\nContent-Length: 0\r\n\r\n');
    });
    h.corral.http.registerUpgrade('/api/vnc/special/', (req, socket) => {
      seen.push(`special ${req.url}`);
      socket.end('HTTP/1.1 409 Conflict\r\nContent-Length: 0\r\n\r\n');
    });
    expect(await rawUpgrade('/api/vnc/tailvm/web')).toBe('HTTP/1.1 418 I am a teapot');
    expect(await rawUpgrade('/api/vnc/special/x')).toBe('HTTP/1.1 409 Conflict');
    expect(seen).toEqual(['vnc /api/vnc/tailvm/web', 'special /api/vnc/special/x']);
  });

  it('answers /api2/json with 501 until the Proxmox handler is mounted', async () => {
    expect((await h.get('/api2/json/version')).status).toBe(501);
    h.corral.http.mountProxmox((req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ data: { url: req.url } }));
    });
    expect(await h.get('/api2/json/version')).toMatchObject({
      status: 200,
      body: { data: { url: '/api2/json/version' } },
    });
  });
});
