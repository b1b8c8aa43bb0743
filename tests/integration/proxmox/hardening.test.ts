/**
 * Issue 14 against a running Proxmox API: identity headers and claimed user names never lift a token's role,
 * open mode refuses relayed and rebinding requests, failed logins are throttled and logged once per burst, the gap
 * log is for authenticated callers only and deduplicated, and cluster errors hide internal addresses from
 * non-Administrators.
 */
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxmoxHandler, type ProxmoxHandler } from '@/proxmox/index';
import { parseAdmins } from '@/proxmox/auth/authenticate';
import { parseGrants } from '@/proxmox/auth/tokens';
import { serveProxmox, type ServingProxmox } from '@/proxmox/serve';
import { ADMIN_SECRET, VIEWER_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

const SHARED_SECRET = '3d2c1b0a-9f8e-4d7c-8b6a-5f4e3d2c1b0a';
const OPERATOR_SECRET = '1a2b3c4d-5e6f-4a7b-8c9d-0e1f2a3b4c5d';

let h: ProxmoxHarness;
/** A second API on the same Corral: CORRAL_ADMINS set, a shared secret among the grants, plain HTTP. */
let gated: { handler: ProxmoxHandler; serving: ServingProxmox; logs: string[] };
/** Open mode (no secret), plain HTTP on loopback. */
let open: { handler: ProxmoxHandler; serving: ServingProxmox; logs: string[] };

async function serve(grants: string, admins?: string) {
  const logs: string[] = [];
  const handler = createProxmoxHandler({
    services: h.corral.services,
    grants: parseGrants(grants),
    ...(admins ? { admins: parseAdmins(admins) } : {}),
    log: (l) => logs.push(l),
  });
  const serving = await serveProxmox({ handle: handler.handle, host: '127.0.0.1', port: 0 });
  return { handler, serving, logs };
}

beforeAll(async () => {
  h = await startProxmoxHarness();
  gated = await serve(
    `${SHARED_SECRET} root@pam!ci=${ADMIN_SECRET} ops@pve!ci=${OPERATOR_SECRET}:Operator monitor@pve!ro=${VIEWER_SECRET}:Viewer`,
    'alice@github root@pam ops@pve',
  );
  open = await serve('');
});
afterAll(async () => {
  for (const s of [gated, open]) {
    await s?.serving.close();
    s?.handler.close();
  }
  await h?.close();
});

async function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await fetch(`${base}/api2/json${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  return {
    status: res.status,
    reason: res.statusText,
    body: (text ? JSON.parse(text) : {}) as Record<string, unknown>,
  };
}

/** A plain HTTP request with exactly these headers (fetch does not let a caller set Host). */
function exact(base: string, method: string, path: string, headers: Record<string, string>) {
  return new Promise<{ status: number; reason: string }>((resolve, reject) => {
    const req = request(`${base}/api2/json${path}`, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reason: res.statusMessage ?? '' }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function createVm(vmid: number): Promise<void> {
  const admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  const r = await admin.post('/nodes/corral-1/qemu', { vmid, name: `hard-${vmid}`, memory: 512, cores: 1 });
  expect(r.status, r.reason).toBe(200);
  expect((await waitTask(admin, r.body.data as string)).exitstatus).toBe('OK');
}

describe('roles come from the Proxmox principal only', () => {
  it('replays the attack: a non-admin token with an admin Tailscale login stays read-only', async () => {
    await createVm(9101);
    const base = gated.serving.url;
    const attack = (token: string) =>
      raw(base, 'POST', '/nodes/corral-1/qemu/9101/status/start', {
        authorization: `PVEAPIToken=${token}`,
        'tailscale-user-login': 'alice@github',
        'content-type': 'application/x-www-form-urlencoded',
      });
    // The shared secret under a made-up user, and under the name of a user on CORRAL_ADMINS.
    for (const token of [
      `mallory@pve!x=${SHARED_SECRET}`,
      `root@pam!x=${SHARED_SECRET}`,
      `alice@github!x=${SHARED_SECRET}`,
    ]) {
      const r = await attack(token);
      expect(r.status, token).toBe(403);
      expect(r.reason).toBe('Permission check failed (/vms/9101, VM.PowerMgmt)');
    }
    // A Viewer grant bound to a listed user is still a Viewer.
    expect((await attack(`monitor@pve!ro=${VIEWER_SECRET}`)).status).toBe(403);
    // A password login with the shared secret under a listed name gets a Viewer ticket.
    const login = await raw(
      base,
      'POST',
      '/access/ticket',
      { 'content-type': 'application/x-www-form-urlencoded', 'tailscale-user-login': 'alice@github' },
      new URLSearchParams({ username: 'root@pam', password: SHARED_SECRET }).toString(),
    );
    expect(login.status).toBe(200);
    expect((login.body.data as { cap: { vms: Record<string, number> } }).cap.vms).toEqual({ 'VM.Audit': 1 });
    // The bound Operator grant on the list keeps exactly its role.
    const ops = await raw(base, 'GET', '/access/permissions', {
      authorization: `PVEAPIToken=ops@pve!ci=${OPERATOR_SECRET}`,
    });
    expect(ops.body.data).toHaveProperty(['/vms', 'VM.PowerMgmt'], 1);
    expect(ops.body.data).not.toHaveProperty(['/', 'Sys.Modify']);
  });
});

describe('open mode', () => {
  it('serves a direct loopback caller, but not one relayed by a proxy', async () => {
    const base = open.serving.url;
    expect((await raw(base, 'GET', '/version', {})).status).toBe(200);
    for (const header of [
      { 'x-forwarded-for': '203.0.113.7' } as Record<string, string>,
      { forwarded: 'for=203.0.113.7' },
      { 'tailscale-user-login': 'alice@github' },
    ]) {
      const r = await raw(base, 'GET', '/version', header);
      expect(r.status).toBe(403);
      expect(r.reason).toMatch(/CORRAL_PROXMOX_TOKEN/);
    }
  });

  it('refuses a DNS-rebinding page at the front door of the standalone server (Host allow-list)', async () => {
    const port = new URL(open.serving.url).port;
    const r = await exact(open.serving.url, 'GET', '/version', { host: `rebind.attacker.example:${port}` });
    expect(r.status).toBe(421);
    expect(r.reason).toMatch(/CORRAL_ALLOWED_HOSTS/);
  });

  it('refuses a state-changing request from a DNS-rebinding page in the handler too', async () => {
    await createVm(9102);
    // The handler alone (no front door: mounted behind a proxy that passes any Host, or CORRAL_ALLOWED_HOSTS=*).
    const bare: Server = createServer((req, res) => void open.handler.handle(req, res));
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    const port = (bare.address() as AddressInfo).port;
    const base = `http://127.0.0.1:${port}`;
    try {
      // Origin equals Host: the attacker's name resolves to 127.0.0.1.
      const rebinding = await exact(base, 'POST', '/nodes/corral-1/qemu/9102/status/start', {
        host: `rebind.attacker.example:${port}`,
        origin: `http://rebind.attacker.example:${port}`,
      });
      expect(rebinding.status).toBe(403);
      expect(rebinding.reason).toBe('Permission denied - cross-site request refused');
      expect(
        (await px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` }).get('/nodes/corral-1/qemu/9102/status/current')).body
          .data,
      ).toMatchObject({ status: 'stopped' });
      // The same page served from localhost is this machine's own.
      const local = await exact(base, 'POST', '/nodes/corral-1/qemu/9102/status/stop', {
        host: `localhost:${port}`,
        origin: `http://localhost:${port}`,
      });
      expect(local.status, local.reason).toBe(200);
    } finally {
      bare.closeAllConnections();
      await new Promise((resolve) => bare.close(resolve));
    }
  });
});

describe('failed logins', () => {
  it('answers 429 after a handful of wrong passwords and logs one line for the burst', async () => {
    const form = (password: string) =>
      raw(
        gated.serving.url,
        'POST',
        '/access/ticket',
        { 'content-type': 'application/x-www-form-urlencoded' },
        new URLSearchParams({ username: 'root@pam', password }).toString(),
      );
    const codes: number[] = [];
    for (let i = 0; i < 50; i++) codes.push((await form(`wrong-${i}`)).status);
    expect(codes.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(codes.slice(5).every((c) => c === 429)).toBe(true);
    const blocked = await form(ADMIN_SECRET);
    expect(blocked.status).toBe(429);
    expect(blocked.body).toMatchObject({ data: null });
    const lines = gated.logs.filter((l) => l.startsWith('[proxmox] login failure'));
    expect(lines).toEqual(['[proxmox] login failure for root@pam from 127.0.0.1 (1 in the last minute)']);
  });
});

describe('gap log', () => {
  it('answers unauthenticated callers 401 without a log line, and logs each gap once', async () => {
    const before = h.gaps.length;
    for (let i = 0; i < 20; i++) {
      const r = await px(h.url).get(`/nodes/corral-1/flood-${i}`);
      expect(r.status).toBe(401);
    }
    expect(h.gaps.length).toBe(before);
    const admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    for (const node of ['corral-1', 'corral-2', 'corral-3'])
      for (const vmid of [100, 101]) expect((await admin.post(`/nodes/${node}/qemu/${vmid}/sendkey`)).status).toBe(501);
    expect(h.gaps.slice(before)).toEqual(['[proxmox-gap] POST /nodes/corral-1/qemu/100/sendkey']);
  });
});

describe('error redaction', () => {
  it('hides the apiserver address from non-Administrators and anonymous callers', async () => {
    await createVm(9103);
    h.sim.faults.set({ unresponsive: 'refuse' });
    try {
      const put = (token: string) =>
        raw(
          gated.serving.url,
          'PUT',
          '/nodes/corral-1/qemu/9103/config',
          { authorization: `PVEAPIToken=${token}`, 'content-type': 'application/x-www-form-urlencoded' },
          'cores=2',
        );
      const admin = await put(`root@pam!ci=${ADMIN_SECRET}`);
      const operator = await put(`ops@pve!ci=${OPERATOR_SECRET}`);
      expect(admin.status).toBeGreaterThanOrEqual(500);
      expect(operator.status).toBe(admin.status);
      const simAddress = new URL(h.sim.url).host;
      expect(`${admin.reason} ${String(admin.body.message)}`).toContain(simAddress);
      expect(`${operator.reason} ${String(operator.body.message)}`).not.toContain(simAddress);
      expect(String(operator.body.message)).toContain('the cluster');
    } finally {
      h.sim.faults.set({ unresponsive: 'no' });
    }
  });
});

describe('strict input', () => {
  it('refuses out-of-range sizes, dangling volumes and unknown keys with named 400s, creating nothing', async () => {
    const admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const base = { vmid: 9110, name: 'strict', cores: 1, memory: 512 };
    for (const [extra, key] of [
      [{ cores: 513 }, 'cores'],
      [{ cores: 256, sockets: 4 }, 'cores'],
      [{ memory: 63 }, 'memory'],
      [{ memory: 4 * 1024 * 1024 + 1 }, 'memory'],
      [{ scsi0: 'local-lvm:abc' }, 'scsi0'],
      [{ ide2: 'local-lvm:abc' }, 'ide2'],
      [{ scsi0: 'local-lvm:1,size=abc' }, 'scsi0'],
      [{ scsi0: 'local-lvm:65537' }, 'scsi0'],
    ] as const) {
      const r = await admin.post('/nodes/corral-1/qemu', { ...base, ...extra });
      expect(r.status, JSON.stringify(extra)).toBe(400);
      expect(r.body.errors, JSON.stringify(extra)).toHaveProperty(key);
    }
    expect((await admin.get('/nodes/corral-1/qemu/9110/status/current')).status).toBe(404);
    await createVm(9111);
    for (const [params, key] of [
      [{ cores: 513 }, 'cores'],
      [{ memory: 63 }, 'memory'],
      [{ scsi1: 'local-lvm:abc' }, 'scsi1'],
    ] as const) {
      const r = await admin.put('/nodes/corral-1/qemu/9111/config', params);
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(Object.keys(r.body.errors ?? {}).join(), JSON.stringify(params)).toMatch(key);
    }
    const snap = await admin.post('/nodes/corral-1/qemu/9111/snapshot', { snapname: 'fz1', fuzzextra: 1 });
    expect(snap.status).toBe(400);
    expect(snap.body.errors).toHaveProperty('fuzzextra');
    expect(((await admin.get('/nodes/corral-1/qemu/9111/snapshot')).body.data as unknown[]).length).toBe(1);
  });

  it('answers unknown nodes, storages and snapshots with 404, not a server error', async () => {
    const admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    expect((await admin.get('/nodes/nope/time')).status).toBe(404);
    expect((await admin.get('/storage/nope')).status).toBe(404);
    expect((await admin.get('/nodes/corral-1/storage/nope/status')).status).toBe(404);
    await createVm(9112);
    expect((await admin.get('/nodes/corral-1/qemu/9112/snapshot/nope/config')).status).toBe(404);
  });
});
