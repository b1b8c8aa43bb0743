/**
 * termproxy + vncwebsocket inside `corral web` (plug-ins attached, as server.ts does): the termproxy ticket opens the
 * WebSocket, the client speaks PVE's termproxy protocol (login line → OK, `0:LEN:DATA` input frames), and the
 * translator bridges it to the VM's serial console through Corral's console gateway.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { ADMIN_SECRET, TOKEN_CONFIG, VIEWER_SECRET, px, waitTask } from './harness';

let sim: EmbeddedCluster;
let corral: RunningCorral;
const token = `PVEAPIToken=root@pam!ci=${ADMIN_SECRET}`;
const api = () => px(corral.url, { token: `root@pam!ci=${ADMIN_SECRET}` });

beforeAll(async () => {
  process.env.CORRAL_PROXMOX_TOKEN = TOKEN_CONFIG;
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
  corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    config: { pollMs: 50, waitTimeoutMs: 30_000 },
  });
  await corral.cluster.cache.waitForSync(20_000);
  const created = await api().post('/nodes/corral-1/qemu', { vmid: 410, name: 'term-vm', memory: 256, start: 1 });
  expect((await waitTask(api(), created.body.data as string)).exitstatus).toBe('OK');
  const deadline = Date.now() + 20_000;
  while (
    ((await api().get('/nodes/corral-1/qemu/410/status/current')).body.data as { status: string }).status !== 'running'
  ) {
    if (Date.now() > deadline) throw new Error('VM 410 did not start within 20 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);
afterAll(async () => {
  delete process.env.CORRAL_PROXMOX_TOKEN;
  await corral?.close();
  await sim?.close();
});

interface TermProxy {
  port: number;
  ticket: string;
  upid: string;
  user: string;
}

async function termproxy(): Promise<TermProxy> {
  const reply = await api().post('/nodes/corral-1/qemu/410/termproxy', {});
  expect(reply.status).toBe(200);
  return reply.body.data as TermProxy;
}

/** A termproxy client: everything the server sent, as text, plus helpers to wait for output and send frames. */
function connect(proxy: TermProxy, urlTicket = proxy.ticket) {
  const base = corral.url.replace(/^http/, 'ws');
  const ws = new WebSocket(
    `${base}/api2/json/nodes/corral-1/qemu/410/vncwebsocket?port=${proxy.port}&vncticket=${encodeURIComponent(urlTicket)}`,
    ['binary'],
    {
      headers: { authorization: token },
    },
  );
  let output = '';
  const messages: string[] = [];
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  const refused = new Promise<number>((resolve) =>
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
  );
  ws.on('error', () => undefined);
  ws.on('message', (data: Buffer) => {
    messages.push(data.toString('utf8'));
    output += data.toString('utf8');
  });
  const opened = new Promise<void>((resolve) => ws.on('open', () => resolve()));
  return {
    ws,
    opened,
    closed,
    refused,
    messages,
    output: () => output,
    /** Output received from now on matching `re`. */
    async waitFor(re: RegExp, from = output.length, timeout = 15_000): Promise<string> {
      await expect.poll(() => re.test(output.slice(from)), { timeout }).toBe(true);
      return output.slice(from);
    },
    type(text: string): void {
      ws.send(`0:${Buffer.byteLength(text)}:${text}`);
    },
  };
}

describe('termproxy / vncwebsocket (serial terminal)', () => {
  it('answers a port, a PVEVNC ticket, a vncproxy task UPID and the user', async () => {
    const proxy = await termproxy();
    expect(Object.keys(proxy).sort()).toEqual(['port', 'ticket', 'upid', 'user']);
    expect(Number.isInteger(proxy.port)).toBe(true);
    expect(proxy.ticket).toMatch(/^PVEVNC:[0-9A-F]{8}::[A-Za-z0-9+/=]+$/);
    expect(proxy.upid).toMatch(/^UPID:corral-\d+:[0-9A-F]+:[0-9A-F]+:[0-9A-F]+:vncproxy:410:root@pam!ci:$/);
    expect(proxy.user).toBe('root@pam!ci');
    expect((await waitTask(api(), proxy.upid)).exitstatus).toBe('OK');
  });

  it('logs in with the ticket line, then types into the serial console through 0:LEN:DATA frames', async () => {
    const proxy = await termproxy();
    const term = connect(proxy);
    await term.opened;
    term.ws.send(`${proxy.user}:${proxy.ticket}\n`);
    await expect.poll(() => term.messages[0], { timeout: 10_000 }).toBe('OK');
    // A resize and a ping are accepted and ignored on a serial line; Enter brings up a fresh login prompt.
    term.ws.send('1:120:40:');
    term.ws.send('2');
    term.type('\n');
    await term.waitFor(/login: $/, 0);
    let mark = term.output().length;
    term.type('root\n');
    await term.waitFor(/Password: $/, mark);
    mark = term.output().length;
    // Two frames in one message, and a frame split over two messages: the decoder reassembles them.
    term.ws.send('0:3:sec0:4:ret\n');
    await term.waitFor(/[#$] $/, mark);
    mark = term.output().length;
    term.ws.send('0:9:host');
    term.ws.send('name\n');
    const after = await term.waitFor(/\nterm-vm\r?\n/, mark);
    expect(after).toContain('hostname');
    term.ws.close();
  }, 60_000);

  it('refuses a wrong ticket in the URL, a wrong login line, and a Viewer', async () => {
    const proxy = await termproxy();
    const badUrl = connect(proxy, 'PVEVNC:00000000::x');
    expect(await badUrl.refused).toBe(401);

    const badLogin = connect(proxy);
    await badLogin.opened;
    badLogin.ws.send(`${proxy.user}:PVEVNC:00000000::AAAA\n`);
    expect(await badLogin.closed).toEqual({ code: 1008, reason: 'permission denied - invalid termproxy ticket' });
    expect(badLogin.messages).toEqual([]);

    // A VNC ticket is scoped to the framebuffer and does not log into the serial terminal.
    const vnc = (await api().post('/nodes/corral-1/qemu/410/vncproxy', {})).body.data as { ticket: string };
    const vncAsTerm = connect(proxy);
    await vncAsTerm.opened;
    vncAsTerm.ws.send(`${proxy.user}:${vnc.ticket}\n`);
    expect((await vncAsTerm.closed).code).toBe(1008);

    const viewer = await px(corral.url, { token: `monitor@pve!ro=${VIEWER_SECRET}` }).post(
      '/nodes/corral-1/qemu/410/termproxy',
      {},
    );
    expect(viewer.status).toBe(403);
  });

  it('gives a caller who is read-only under CORRAL_ADMINS no terminal, as /api/tty does, even with a valid ticket', async () => {
    const proxy = await termproxy();
    // The console gateway reads CORRAL_ADMINS per connection: this caller (no Tailscale login) is not on the list.
    process.env.CORRAL_ADMINS = 'alice@example.com';
    try {
      const term = connect(proxy);
      await term.opened;
      term.ws.send(`${proxy.user}:${proxy.ticket}\n`);
      const closed = await term.closed;
      expect(closed.code).toBe(4003);
      expect(closed.reason).toMatch(/^Read-only: .* may not use the serial console of .*\/term-vm/);
      // The gateway refuses right after its handshake, so the login's OK may precede the refusal; no output does.
      expect(term.messages.filter((m) => m !== 'OK')).toEqual([]);
    } finally {
      delete process.env.CORRAL_ADMINS;
    }
  });
});
