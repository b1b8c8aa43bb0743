/**
 * End to end: the Corral server (consoles plug-in attached) in front of the embedded cluster's KubeVirt console
 * subresources. VNC completes an RFB handshake and gets a framebuffer; the serial console logs in and runs
 * hostname; cross-origin, read-only serial and stopped VMs are refused with clear reasons.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { KubeConfig } from '@kubernetes/client-node';
import { startEmbeddedCluster, defaultModules, type EmbeddedCluster } from '@/sim/index';
import { consolesModule } from '@/sim/consoles/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { identityFor } from '@/server/identity-http';
import { attachToCorral } from '@/server/consoles/index';
import type { ConsoleGateway } from '@/server/consoles/gateway';
import { connect } from './harness.js';
import { StreamReader, readFramebufferUpdate, rfbHandshake, setEncodingsRaw, updateRequest } from './rfb-client.js';

let sim: EmbeddedCluster;
let corral: RunningCorral;
let gateway: ConsoleGateway;
let ws: string;
let running: string;
let stopped: string;

/** The sim's module list with its consoles module, wherever the sim helpers have registered it. */
function modulesWithConsoles() {
  const modules = defaultModules();
  if (modules.some((m) => m.name === 'consoles')) return modules;
  return [...modules.slice(0, -1), consolesModule(), ...modules.slice(-1)];
}

async function eventually<T>(probe: () => T | undefined | null | false, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'demo', speed: 50, modules: modulesWithConsoles() });
  corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    demo: true,
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
  });
  await corral.cluster.cache.waitForSync(20_000);
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromString(sim.kubeconfig);
  gateway = attachToCorral({ http: corral.http, services: corral.services, kubeConfig, identityFor });
  ws = corral.url.replace('http', 'ws');
  const rows = await eventually(
    () => {
      const all = corral.services.vms.list();
      return all.some((r) => r.running && r.status === 'Running') && all.some((r) => !r.running) ? all : null;
    },
    30_000,
    'a running and a stopped VM in the demo fleet',
  );
  const r = rows.find((row) => row.running && row.status === 'Running')!;
  const s = rows.find((row) => !row.running)!;
  running = `${r.namespace}/${r.name}`;
  stopped = `${s.namespace}/${s.name}`;
}, 60_000);

afterAll(async () => {
  delete process.env.CORRAL_ADMINS;
  await corral?.close();
  await sim?.close();
});

describe('consoles through Corral to the embedded cluster', () => {
  it('VNC: a ws client completes the RFB handshake through /api/vnc and receives a framebuffer update', async () => {
    const socket = new WebSocket(`${ws}/api/vnc/${running}`, { headers: { origin: corral.url } });
    const reader = new StreamReader(socket);
    const init = await rfbHandshake(socket, reader);
    expect(init.width).toBeGreaterThan(0);
    expect(init.height).toBeGreaterThan(0);
    expect(init.name).toContain(running.split('/')[1]);
    socket.send(Buffer.concat([setEncodingsRaw(), updateRequest(false, init.width, init.height)]));
    const rects = await readFramebufferUpdate(reader, init.bitsPerPixel / 8);
    const covered = rects.filter((r) => r.encoding === 0).reduce((sum, r) => sum + r.width * r.height, 0);
    expect(covered).toBe(init.width * init.height);
    // Not a blank screen: more than one distinct pixel value.
    const first = rects[0]!.pixels.readUInt32LE(0);
    expect(
      rects.some((r) => {
        for (let i = 0; i < r.pixels.length; i += 4) if (r.pixels.readUInt32LE(i) !== first) return true;
        return false;
      }),
    ).toBe(true);
    expect(
      gateway.registry.holder(
        'vnc',
        running.split('/')[0]!,
        running.split('/')[1]!,
        corral.services.cluster.info.context,
      ),
    ).not.toBeNull();
    socket.close();
  });

  it('serial: logs in through /api/tty and runs hostname', async () => {
    const name = running.split('/')[1]!;
    const p = connect(`${ws}/api/tty/${running}`, { origin: corral.url });
    await p.opened;
    p.ws.send(Buffer.from('\r'));
    await p.waitFor((all) => all.toString().includes('login: '), 20_000);
    p.ws.send(Buffer.from('fedora\r'));
    await p.waitFor((all) => all.toString().includes('Password: '));
    p.ws.send(Buffer.from('secret\r'));
    await p.waitFor((all) => /\$ $/.test(all.toString()));
    const before = Buffer.concat(p.data).length;
    p.ws.send(Buffer.from('hostname\r'));
    const out = await p.waitFor((all) => all.subarray(before).toString().includes(`\r\n${name}\r\n`));
    expect(out.subarray(before).toString()).toMatch(new RegExp(`hostname\\r\\n${name}\\r\\n`));
    p.ws.close();
    await p.closed;
    // What was relayed is retained for the Terminal tab and the download.
    expect(
      gateway.serialLogs.read(running.split('/')[0]!, name, corral.services.cluster.info.context).toString(),
    ).toContain(`hostname\r\n${name}\r\n`);
  });

  it('refuses a cross-origin upgrade with 403 before the handshake', async () => {
    const socket = new WebSocket(`${ws}/api/tty/${running}`, { headers: { origin: 'https://evil.example' } });
    socket.on('error', () => undefined);
    const status = await new Promise<number>((resolve) =>
      socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0)),
    );
    expect(status).toBe(403);
  });

  it('refuses the serial console to a read-only caller', async () => {
    process.env.CORRAL_ADMINS = 'admin@example.com';
    try {
      const closed = await connect(`${ws}/api/tty/${running}`, { 'tailscale-user-login': 'viewer@example.com' }).closed;
      expect(closed.code).toBe(4003);
      expect(closed.reason).toMatch(/^Read-only: viewer@example.com may not use the serial console/);
    } finally {
      delete process.env.CORRAL_ADMINS;
    }
  });

  it('refuses a stopped VM with a clear reason', async () => {
    const closed = await connect(`${ws}/api/vnc/${stopped}`).closed;
    expect(closed.code).toBe(4009);
    expect(closed.reason).toMatch(new RegExp(`^VM ${stopped} is \\w+: start it to open its VNC console$`));
  });

  it('serves who holds a console and the retained serial log over REST', async () => {
    const [ns, name] = running.split('/') as [string, string];
    const res = await fetch(`${corral.url}/api/vms/${ns}/${name}/console-log?format=text`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { bytes: number; log: string };
    expect(body.bytes).toBeGreaterThan(0);
    expect(body.log).toContain('login: ');
    const sessions = await fetch(`${corral.url}/api/vms/${ns}/${name}/console-sessions`);
    expect(sessions.status).toBe(200);
    expect(await sessions.json()).toEqual({ vnc: null, serial: null });
  });

  // Last: it shuts this Corral down (afterAll's close is then a no-op).
  it('a graceful shutdown closes an open console with 1001 and a reason before the sockets go', async () => {
    const p = connect(`${ws}/api/tty/${running}`, { origin: corral.url });
    await p.opened;
    await corral.shutdown({ drainDelayMs: 0, graceMs: 2000 });
    expect(await p.closed).toEqual({ code: 1001, reason: 'Corral is shutting down' });
  });
});
