/**
 * The CT terminal end to end: Corral's `/api/ctty/{ns}/{name}` (consoles plug-in attached) in front of the
 * embedded cluster's pods/exec. A real shell runs commands (inside the persistent root of a privileged CT), the
 * exit status closes the socket, and the VM consoles' rules hold: Origin, admins only, one holder with take-over,
 * clear refusals for a stopped or unknown CT.
 */
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { attachToCorral } from '@/server/consoles/index';
import { identityFor } from '@/server/identity-http';
import { eventually, startHarness, type Harness } from '../server/harness';
import { connect } from './harness.js';

const NS = 'tailvm';
let h: Harness;
let ws: string;

const taskDone = (id: string) =>
  eventually(
    async () => {
      const t = (await h.get(`/api/tasks/${id}`)).body as { status: string; error: string };
      if (t.status === 'error') throw new Error(t.error);
      return t.status === 'done';
    },
    30_000,
    `task ${id}`,
  );

beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(h.sim.kubeconfig);
  attachToCorral({ http: h.corral.http, services: h.corral.services, kubeConfig, identityFor });
  ws = h.url.replace('http', 'ws');
  for (const [name, privileged] of [
    ['term', true],
    ['idle', false],
  ] as const) {
    const r = await h.post('/api/cts', { name, image: 'debian:bookworm', privileged });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    await taskDone((r.body as { task: string }).task);
  }
  const stop = await h.post(`/api/cts/${NS}/idle/stop`);
  await taskDone((stop.body as { task: string }).task);
}, 60_000);

afterAll(async () => {
  delete process.env.CORRAL_ADMINS;
  await h?.close();
});

const text = (all: Buffer) => all.toString('utf8');

describe('CT terminal', () => {
  it('is a shell in the CT: commands run in its persistent root, exit closes with the status', async () => {
    const p = connect(`${ws}/api/ctty/${NS}/term`, { origin: h.url });
    await p.opened;
    p.ws.send(JSON.stringify({ cols: 120, rows: 40 }));
    await p.waitFor((all) => text(all).includes('root@term:/# '));
    p.ws.send(Buffer.from('echo persisted > /root/hello; cat /root/hello\r'));
    await p.waitFor((all) => text(all).includes('\r\npersisted\r\n'));
    p.ws.send(Buffer.from('exit 3\r'));
    expect(await p.closed).toEqual({ code: 1000, reason: 'The shell exited (status 3)' });
    // The file is on the CT's volume, inside the seeded root.
    const stop = await h.post(`/api/cts/${NS}/term/restart`);
    await taskDone((stop.body as { task: string }).task);
    const again = connect(`${ws}/api/ctty/${NS}/term`, { origin: h.url });
    await again.waitFor((all) => text(all).includes('# '));
    again.ws.send(Buffer.from('cat /root/hello\r'));
    await again.waitFor((all) => text(all).includes('\r\npersisted\r\n'));
    again.ws.close();
    await again.closed;
  });

  it('one holder: another user is refused naming the holder, takeover=1 takes it', async () => {
    const alice = connect(`${ws}/api/ctty/${NS}/term`, { 'tailscale-user-login': 'alice@example.com' });
    await alice.waitFor((all) => text(all).includes('# '));
    const bob = await connect(`${ws}/api/ctty/${NS}/term`, { 'tailscale-user-login': 'bob@example.com' }).closed;
    expect(bob.code).toBe(4029);
    expect(bob.reason).toMatch(/^alice@example.com holds the terminal of CT tailvm\/term since /);
    const taker = connect(`${ws}/api/ctty/${NS}/term?takeover=1`, { 'tailscale-user-login': 'bob@example.com' });
    expect(await alice.closed).toEqual({ code: 4001, reason: 'Terminal taken over by bob@example.com' });
    await taker.waitFor((all) => text(all).includes('# '));
    taker.ws.close();
    await taker.closed;
  });

  it('refuses read-only callers, stopped and unknown CTs, and foreign origins', async () => {
    process.env.CORRAL_ADMINS = 'admin@example.com';
    try {
      const viewer = await connect(`${ws}/api/ctty/${NS}/term`, { 'tailscale-user-login': 'viewer@example.com' })
        .closed;
      expect(viewer.code).toBe(4003);
      expect(viewer.reason).toMatch(/^Read-only: viewer@example.com may not use the terminal of CT tailvm\/term/);
    } finally {
      delete process.env.CORRAL_ADMINS;
    }
    expect(await connect(`${ws}/api/ctty/${NS}/idle`).closed).toEqual({
      code: 4009,
      reason: 'CT tailvm/idle is Stopped: start it to open its terminal',
    });
    expect(await connect(`${ws}/api/ctty/${NS}/ghost`).closed).toEqual({ code: 4004, reason: 'No CT tailvm/ghost' });
    expect((await connect(`${ws}/api/ctty/${NS}/Bad_Name`).closed).code).toBe(4000);
    const socket = new WebSocket(`${ws}/api/ctty/${NS}/term`, { headers: { origin: 'https://evil.example' } });
    socket.on('error', () => undefined);
    const status = await new Promise<number>((resolve) =>
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(403);
  });
});
