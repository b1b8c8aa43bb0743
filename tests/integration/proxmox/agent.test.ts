/**
 * The guest agent through the Proxmox door (`/nodes/{n}/qemu/{vmid}/agent/…`): PVE's `{"result": …}` shapes with
 * qemu-guest-agent's field names, the same facts `GET /api/vms/{ns}/{name}/guestinfo` reports, and PVE's own 500
 * texts for a VM without an agent and a stopped VM.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
const vms: Record<string, { vmid: number; node: string }> = {};

const rest = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${h.corral.url}/api${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

async function create(name: string, source: Record<string, unknown>, start: boolean): Promise<void> {
  const r = await rest('POST', '/vms', { name, cpu: 1, mem: '1G', start, ...source });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}

async function until(probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  await create('ga-fedora', { containerDisk: 'quay.io/containerdisks/fedora:42' }, true);
  await create('ga-cirros', { image: 'cirros' }, true);
  await create('ga-off', { containerDisk: 'quay.io/containerdisks/fedora:42' }, false);
  for (const name of ['ga-fedora', 'ga-cirros', 'ga-off']) {
    if (name !== 'ga-off')
      await until(async () => (await rest('GET', `/vms/tailvm/${name}/row`)).body.status === 'Running');
    const r = (await rest('GET', `/vms/tailvm/${name}/row`)).body as { vmid: number; node: string };
    vms[name] = { vmid: r.vmid, node: r.node || 'corral-1' };
  }
  // The Fedora guest's agent connects a little after Running.
  await until(async () => (await rest('GET', '/vms/tailvm/ga-fedora/guestinfo')).status === 200);
}, 90_000);
afterAll(async () => {
  await h?.close();
});

const path = (name: string, cmd: string) => `/nodes/${vms[name]!.node}/qemu/${vms[name]!.vmid}/agent/${cmd}`;
const result = async (name: string, cmd: string) => {
  const r = await api.get(path(name, cmd));
  expect(r.status, `${cmd}: ${r.reason}`).toBe(200);
  return (r.body.data as { result: unknown }).result;
};

describe('agent commands', () => {
  it('get-osinfo, get-host-name and get-timezone match /api guestinfo', async () => {
    const info = (await rest('GET', '/vms/tailvm/ga-fedora/guestinfo')).body as {
      os: Record<string, string>;
      hostname: string;
    };
    expect(await result('ga-fedora', 'get-osinfo')).toEqual({
      id: 'fedora',
      name: 'Fedora Linux',
      'pretty-name': 'Fedora Linux 42 (Cloud Edition)',
      version: '42 (Cloud Edition)',
      'version-id': '42',
      'kernel-release': info.os.kernelRelease,
      'kernel-version': info.os.kernelVersion,
      machine: 'x86_64',
    });
    expect(await result('ga-fedora', 'get-host-name')).toEqual({ 'host-name': info.hostname });
    expect(await result('ga-fedora', 'get-timezone')).toEqual({ zone: 'UTC', offset: 0 });
  });

  it('get-users, get-fsinfo and network-get-interfaces in qemu-guest-agent shapes', async () => {
    const users = (await result('ga-fedora', 'get-users')) as { user: string; 'login-time': number }[];
    expect(users).toEqual([{ user: 'fedora', 'login-time': expect.any(Number) }]);
    expect(users[0]!['login-time']).toBeGreaterThan(1_700_000_000);
    expect(users[0]!['login-time']).toBeLessThan(Date.now() / 1000 + 60);

    const fs = (await result('ga-fedora', 'get-fsinfo')) as Record<string, unknown>[];
    expect(fs).toEqual([
      {
        name: 'vda4',
        mountpoint: '/',
        type: 'btrfs',
        'used-bytes': expect.any(Number),
        'total-bytes': expect.any(Number),
        disk: [{ dev: '/dev/vda4' }],
      },
    ]);
    expect(fs[0]!['total-bytes'] as number).toBeGreaterThan(fs[0]!['used-bytes'] as number);

    const nics = (await result('ga-fedora', 'network-get-interfaces')) as {
      name: string;
      'hardware-address': string;
      'ip-addresses': { 'ip-address': string; 'ip-address-type': string }[];
    }[];
    expect(nics.length).toBeGreaterThan(0);
    expect(nics[0]!['hardware-address']).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/);
    expect(nics[0]!['ip-addresses'][0]).toMatchObject({ 'ip-address-type': 'ipv4' });
  });

  it('lists its commands and answers ping', async () => {
    const r = await api.get(`/nodes/${vms['ga-fedora']!.node}/qemu/${vms['ga-fedora']!.vmid}/agent`);
    expect((r.body.data as { name: string }[]).map((c) => c.name)).toEqual([
      'ping',
      'get-osinfo',
      'get-host-name',
      'get-users',
      'get-fsinfo',
      'get-timezone',
      'network-get-interfaces',
      'fsfreeze-status',
      'fsfreeze-freeze',
      'fsfreeze-thaw',
    ]);
    const ping = await api.post(path('ga-fedora', 'ping'));
    expect(ping.status).toBe(200);
    expect(ping.body.data).toEqual({ result: {} });
  });

  it("answers PVE's 500s for a guest without an agent and for a stopped VM", async () => {
    for (const cmd of ['get-osinfo', 'get-fsinfo', 'network-get-interfaces', 'get-users']) {
      const r = await api.get(path('ga-cirros', cmd));
      expect(r.status).toBe(500);
      expect(r.reason).toContain('QEMU guest agent is not running');
    }
    const off = await api.get(path('ga-off', 'get-osinfo'));
    expect(off.status).toBe(500);
    expect(off.reason).toContain(`VM ${vms['ga-off']!.vmid} is not running`);
    expect((await api.post(path('ga-off', 'ping'))).status).toBe(500);
    expect((await api.get(`/nodes/corral-1/qemu/99999/agent/get-osinfo`)).status).not.toBe(200);
  });

  it('fsfreeze-freeze, -status and -thaw go through the VMI freeze subresources', async () => {
    const vmiStatus = async () => {
      const res = await fetch(`${h.sim.url}/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachineinstances/ga-fedora`);
      return ((await res.json()) as { status: { fsFreezeStatus?: string } }).status.fsFreezeStatus;
    };
    const status = async () =>
      ((await api.post(path('ga-fedora', 'fsfreeze-status'))).body.data as { result: string }).result;
    expect(await status()).toBe('thawed');
    const frozen = await api.post(path('ga-fedora', 'fsfreeze-freeze'));
    expect(frozen.status, frozen.reason).toBe(200);
    // qemu-ga answers the number of filesystems: the agent reports one (the root) for this guest.
    expect(frozen.body.data).toEqual({ result: 1 });
    expect(await vmiStatus()).toBe('frozen');
    await expect.poll(status, { timeout: 5000 }).toBe('frozen');
    expect((await api.post(path('ga-fedora', 'fsfreeze-thaw'))).body.data).toEqual({ result: 1 });
    expect(await vmiStatus()).toBeUndefined();
    await expect.poll(status, { timeout: 5000 }).toBe('thawed');
    const noAgent = await api.post(path('ga-cirros', 'fsfreeze-freeze'));
    expect([noAgent.status, noAgent.reason]).toEqual([500, 'QEMU guest agent is not running']);
    expect((await api.post(path('ga-fedora', 'fsfreeze-freeze'), { timeout: 5 })).status).toBe(400);
  });

  it('exec, file-read, get-time and the other commands KubeVirt cannot pass answer as a disabled agent command', async () => {
    const { vmid } = vms['ga-fedora']!;
    const exec = await api.post(path('ga-fedora', 'exec'), { command: 'uname' });
    expect(exec.status).toBe(500);
    expect(exec.reason).toBe(
      `VM ${vmid} qmp command 'guest-exec' failed - The command guest-exec has been disabled for this instance`,
    );
    for (const [method, cmd, params] of [
      ['get', 'exec-status', { pid: 1 }],
      ['get', 'file-read', { file: '/etc/hostname' }],
      ['get', 'get-time', {}],
      ['post', 'set-user-password', { username: 'fedora', password: 'secret12' }],
      ['post', 'fstrim', {}],
    ] as const) {
      const r = await (method === 'get' ? api.get : api.post)(path('ga-fedora', cmd), params);
      expect([r.status, r.reason]).toEqual([
        500,
        `VM ${vmid} qmp command 'guest-${cmd}' failed - The command guest-${cmd} has been disabled for this instance`,
      ]);
    }
    // The usual checks come first, as in PVE: a guest without an agent, a stopped VM.
    expect((await api.post(path('ga-cirros', 'exec'), { command: 'uname' })).reason).toBe(
      'QEMU guest agent is not running',
    );
    expect((await api.get(path('ga-off', 'get-time'))).reason).toBe(`VM ${vms['ga-off']!.vmid} is not running`);
    expect(h.gaps.filter((g) => /agent/.test(g))).toEqual([]);
  });

  it('needs VM.Monitor', async () => {
    const anon = px(h.url);
    expect((await anon.get(path('ga-fedora', 'get-osinfo'))).status).toBe(401);
  });
});
