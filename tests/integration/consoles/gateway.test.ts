/** The console gateway against a fake virt-api: identity, admin gate, Origin, take-over, refusals, serial log. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { startFakeKubevirt, type FakeKubevirt } from './fake-kubevirt.js';
import { callerFromHeaders, connect, kubeConfigFor, startGatewayServer, type GatewayServer } from './harness.js';

const admin = { 'tailscale-user-login': 'alice@example.com', 'tailscale-user-name': 'Alice' };
const admin2 = { 'tailscale-user-login': 'bob@example.com', 'tailscale-user-name': 'Bob' };
const viewer = { 'tailscale-user-login': 'victor@example.com' };

let kubevirt: FakeKubevirt;
let gw: GatewayServer;

beforeAll(async () => {
  kubevirt = await startFakeKubevirt({ greeting: { console: Buffer.from('\r\nweb login: ') } });
  const kc = kubeConfigFor(kubevirt.url);
  gw = await startGatewayServer({
    cluster: () => kc,
    resolveCaller: callerFromHeaders(['alice@example.com', 'bob@example.com']),
    vmStatus: async (_ns, name) => (name === 'stopped' ? 'Stopped' : name === 'ghost' ? null : 'Running'),
    keepaliveMs: 0,
  });
});

afterAll(async () => {
  await gw.close();
  await kubevirt.close();
});

describe('console gateway', () => {
  it('relays binary bytes unchanged with the cluster credentials and plain.kubevirt.io', async () => {
    const p = connect(`${gw.base}/api/vnc/tailvm/web-a`, admin);
    await p.opened;
    const payload = randomBytes(200_000);
    p.ws.send(payload);
    const got = await p.waitFor((all) => all.length >= payload.length);
    expect(got.equals(payload)).toBe(true);
    const i = kubevirt.urls.findIndex((u) => u.includes('/web-a/vnc'));
    expect(kubevirt.headers[i]?.authorization).toBe('Bearer sim-admin-token');
    expect(kubevirt.headers[i]?.['sec-websocket-protocol']).toBe('plain.kubevirt.io');
    // A plain open must not kick a viewer Corral does not know about.
    expect(kubevirt.urls[i]).toContain('preserveSession=true');
    p.ws.close();
    await p.closed;
  });

  it('refuses a cross-site upgrade before the handshake with 403', async () => {
    const ws = new WebSocket(`${gw.base}/api/vnc/tailvm/web`, { headers: { ...admin, origin: 'http://evil.example' } });
    ws.on('error', () => undefined);
    const status = await new Promise<number>((resolve) =>
      ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(403);
    ws.terminate();
  });

  it('accepts a same-origin browser upgrade', async () => {
    const host = new URL(gw.base.replace('ws', 'http')).host;
    const p = connect(`${gw.base}/api/vnc/tailvm/web-origin`, { ...admin, origin: `http://${host}` });
    await p.opened;
    p.ws.close();
    await p.closed;
  });

  it('refuses the serial console to a read-only caller with a clear reason', async () => {
    const before = kubevirt.urls.length;
    const p = connect(`${gw.base}/api/tty/tailvm/web`, viewer);
    const closed = await p.closed;
    expect(closed.code).toBe(4003);
    expect(closed.reason).toMatch(/Read-only: victor@example.com may not use the serial console/);
    expect(kubevirt.urls.length).toBe(before); // never reached the cluster
  });

  it('lets a read-only caller watch VNC but drops its keystrokes', async () => {
    const p = connect(`${gw.base}/api/vnc/tailvm/web-ro`, viewer);
    await p.opened;
    const handshake = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 1])]);
    const key = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0x61]);
    const fbur = Buffer.from([3, 0, 0, 0, 0, 0, 1, 0, 1, 0]);
    p.ws.send(Buffer.concat([handshake, key, fbur]));
    const got = await p.waitFor((all) => all.length >= handshake.length + fbur.length);
    expect(got.equals(Buffer.concat([handshake, fbur]))).toBe(true);
    p.ws.close();
    await p.closed;
  });

  it('explains a stopped VM and a missing VM', async () => {
    const stopped = await connect(`${gw.base}/api/vnc/tailvm/stopped`, admin).closed;
    expect(stopped.code).toBe(4009);
    expect(stopped.reason).toBe('VM tailvm/stopped is Stopped: start it to open its VNC console');
    const ghost = await connect(`${gw.base}/api/tty/tailvm/ghost`, admin).closed;
    expect(ghost).toEqual({ code: 4004, reason: 'No VM tailvm/ghost' });
  });

  it('relays KubeVirt’s own words for a VMI that is not Running yet', async () => {
    const closed = await connect(`${gw.base}/api/vnc/tailvm/scheduling`, admin).closed;
    expect(closed.code).toBe(4009);
    expect(closed.reason).toMatch(/phase is Scheduling instead of Running/);
  });

  it('refuses malformed paths with 4000', async () => {
    const closed = await connect(`${gw.base}/api/vnc/tailvm`, admin).closed;
    expect(closed.code).toBe(4000);
    const bad = await connect(`${gw.base}/api/tty/TailVM/web`, admin).closed;
    expect(bad.code).toBe(4000);
    expect(bad.reason).toMatch(/Invalid namespace/);
  });

  it('does not steal a held console; Take over does, and tells the previous viewer who took it', async () => {
    const first = connect(`${gw.base}/api/vnc/tailvm/web-held`, admin);
    await first.opened;
    expect(gw.gateway.registry.holder('vnc', 'tailvm', 'web-held', 'ctx')?.login).toBe('alice@example.com');

    const refused = await connect(`${gw.base}/api/vnc/tailvm/web-held`, admin2).closed;
    expect(refused.code).toBe(4029);
    expect(refused.reason).toMatch(/^Alice holds the VNC console of tailvm\/web-held since /);

    const second = connect(`${gw.base}/api/vnc/tailvm/web-held?takeover=1`, admin2);
    await second.opened;
    const kicked = await first.closed;
    expect(kicked).toEqual({ code: 4001, reason: 'Console taken over by Bob' });
    expect(gw.gateway.registry.holder('vnc', 'tailvm', 'web-held', 'ctx')?.login).toBe('bob@example.com');
    // The new session works.
    second.ws.send(Buffer.from('ping'));
    await second.waitFor((all) => all.toString() === 'ping');
    second.ws.close();
    await second.closed;
    await new Promise((r) => setTimeout(r, 50));
    expect(gw.gateway.registry.holder('vnc', 'tailvm', 'web-held', 'ctx')).toBeNull();
  });

  it('read-only callers cannot take over', async () => {
    const closed = await connect(`${gw.base}/api/vnc/tailvm/web-x?takeover=1`, viewer).closed;
    expect(closed.code).toBe(4003);
  });

  it('keeps the serial output it relayed and replays it to the next session', async () => {
    const first = connect(`${gw.base}/api/tty/tailvm/web-log`, admin);
    await first.waitFor((all) => all.toString().includes('login: '));
    kubevirt.sendTo('console', 'web-log', Buffer.from('[    0.000000] Linux version 6.8\r\n'));
    await first.waitFor((all) => all.toString().includes('Linux version'));
    first.ws.close();
    await first.closed;
    expect(gw.gateway.serialLogs.read('tailvm', 'web-log', 'ctx').toString()).toBe(
      '\r\nweb login: [    0.000000] Linux version 6.8\r\n',
    );

    const second = connect(`${gw.base}/api/tty/tailvm/web-log`, admin);
    const all = await second.waitFor((b) => b.toString().split('login: ').length >= 3);
    expect(all.toString().startsWith('\r\nweb login: [    0.000000] Linux version 6.8\r\n')).toBe(true);
    second.ws.close();
    await second.closed;
  });

  it('closes the browser side when the cluster closes the console', async () => {
    const p = connect(`${gw.base}/api/tty/tailvm/web-end`, admin);
    await p.waitFor((all) => all.length > 0);
    // A direct (non-Corral) client kicks the session, like virtctl would.
    const direct = new WebSocket(
      `${kubevirt.url.replace('http', 'ws')}/apis/subresources.kubevirt.io/v1/namespaces/tailvm/virtualmachineinstances/web-end/console`,
      ['plain.kubevirt.io'],
    );
    const closed = await p.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toMatch(/closed the serial console of tailvm\/web-end/);
    direct.on('error', () => undefined);
    direct.terminate();
  });

  it('reports an unreachable cluster with 4502', async () => {
    const dead = await startGatewayServer({
      cluster: () => kubeConfigFor('http://127.0.0.1:1'),
      resolveCaller: callerFromHeaders([]),
      keepaliveMs: 0,
    });
    try {
      const closed = await connect(`${dead.base}/api/vnc/tailvm/web`, admin).closed;
      expect(closed.code).toBe(4502);
      expect(closed.reason).toMatch(/Cannot reach the VNC console of tailvm\/web/);
    } finally {
      await dead.close();
    }
  });

  it("tells the cluster's address to admins only", async () => {
    const dead = await startGatewayServer({
      cluster: () => kubeConfigFor('http://127.0.0.1:1'),
      resolveCaller: callerFromHeaders(['alice@example.com']),
      keepaliveMs: 0,
    });
    try {
      const forAdmin = await connect(`${dead.base}/api/vnc/tailvm/web`, admin).closed;
      expect(forAdmin.reason).toContain('127.0.0.1:1');
      const forViewer = await connect(`${dead.base}/api/vnc/tailvm/web`, viewer).closed;
      expect(forViewer.code).toBe(4502);
      expect(forViewer.reason).toMatch(/Cannot reach the VNC console of tailvm\/web/);
      expect(forViewer.reason).not.toContain('127.0.0.1');
    } finally {
      await dead.close();
    }
  });
});

describe('console gateway: replacing sessions without asking', () => {
  it('your own other session is replaced and told who took it', async () => {
    const first = connect(`${gw.base}/api/vnc/tailvm/web-own`, admin);
    await first.opened;
    const second = connect(`${gw.base}/api/vnc/tailvm/web-own`, admin);
    await second.opened;
    expect(await first.closed).toEqual({ code: 4001, reason: 'Console taken over by Alice' });
    second.ws.close();
    await second.closed;
  });

  it('a watcher never takes a console and has its input dropped; an admin replaces a watcher', async () => {
    const holder = connect(`${gw.base}/api/vnc/tailvm/web-watch`, admin);
    await holder.opened;
    const refused = await connect(`${gw.base}/api/vnc/tailvm/web-watch?watch=1&takeover=1`, admin).closed;
    expect(refused.code).toBe(4029);
    holder.ws.close();
    await holder.closed;
    await new Promise((r) => setTimeout(r, 50));

    const watcher = connect(`${gw.base}/api/vnc/tailvm/web-watch?watch=1`, admin);
    await watcher.opened;
    expect(gw.gateway.registry.holder('vnc', 'tailvm', 'web-watch', 'ctx')?.readOnly).toBe(true);
    const handshake = Buffer.concat([Buffer.from('RFB 003.008\n'), Buffer.from([1, 1])]);
    watcher.ws.send(Buffer.concat([handshake, Buffer.from([5, 1, 0, 1, 0, 1])]));
    expect((await watcher.waitFor((all) => all.length >= handshake.length)).equals(handshake)).toBe(true);

    const bob = connect(`${gw.base}/api/vnc/tailvm/web-watch`, admin2);
    await bob.opened;
    expect(await watcher.closed).toEqual({ code: 4001, reason: 'Console taken over by Bob' });
    bob.ws.close();
    await bob.closed;
  });

  it('refuses watch=1 on the serial console', async () => {
    const closed = await connect(`${gw.base}/api/tty/tailvm/web?watch=1`, admin).closed;
    expect(closed.code).toBe(4000);
  });
});
