/**
 * vncproxy + vncwebsocket inside `corral web` (plug-ins attached from disk, as server.ts does): the ticket from
 * vncproxy opens the WebSocket, which is passed through to Corral's VNC bridge, and the VM's RFB server greets.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { ADMIN_SECRET, TOKEN_CONFIG, px, waitTask } from './harness';

let sim: EmbeddedCluster;
let corral: RunningCorral;
const token = `PVEAPIToken=root@pam!ci=${ADMIN_SECRET}`;

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
});
afterAll(async () => {
  delete process.env.CORRAL_PROXMOX_TOKEN;
  await corral?.close();
  await sim?.close();
});

function firstMessage(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: 'open'; data: Buffer } | { status: 'refused'; code: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, ['binary'], { headers });
    ws.on('message', (data: Buffer) => {
      resolve({ status: 'open', data });
      ws.close();
    });
    ws.on('unexpected-response', (_req, res) => resolve({ status: 'refused', code: res.statusCode ?? 0 }));
    ws.on('error', reject);
  });
}

describe('vncproxy / vncwebsocket', () => {
  it('passes a ticketed WebSocket through to the VM’s VNC console, and refuses a bad ticket', async () => {
    const api = px(corral.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const created = await api.post('/nodes/corral-1/qemu', { vmid: 400, name: 'vnc-vm', memory: 256, start: 1 });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    await expect
      .poll(
        async () => ((await api.get('/nodes/corral-1/qemu/400/status/current')).body.data as { status: string }).status,
        { timeout: 20_000 },
      )
      .toBe('running');
    const proxy = (await api.post('/nodes/corral-1/qemu/400/vncproxy', { websocket: 1 })).body.data as {
      port: string;
      ticket: string;
      upid: string;
    };
    expect(proxy.ticket).toMatch(/^PVEVNC:[0-9A-F]{8}::/);
    expect(proxy.upid).toMatch(/:vncproxy:400:/);
    const base = corral.url.replace(/^http/, 'ws');
    const ok = await firstMessage(
      `${base}/api2/json/nodes/corral-1/qemu/400/vncwebsocket?port=${proxy.port}&vncticket=${encodeURIComponent(proxy.ticket)}`,
      { authorization: token },
    );
    expect(ok.status).toBe('open');
    if (ok.status === 'open') expect(ok.data.toString('latin1')).toMatch(/^RFB 003\.00\d\n/);
    const bad = await firstMessage(
      `${base}/api2/json/nodes/corral-1/qemu/400/vncwebsocket?port=5900&vncticket=PVEVNC:00000000::x`,
      { authorization: token },
    );
    expect(bad).toEqual({ status: 'refused', code: 401 });
  });
});
