/**
 * `qm migrate` over the Proxmox API (the request shapes bpg and Ansible send: `POST …/migrate {target, online,
 * with-local-disks}`) ending with the VMI on the target node; offline migration of a stopped VM (proxmoxer's
 * `{target}`, bpg's `{target, online: 0, with-local-disks: 1}`), which pins it to the target where it is listed and
 * starts; PVE's preconditions (`GET …/migrate`) and refusals, and the task listings (`/nodes/{n}/tasks` filters, `/cluster/tasks`) that the migration and its neighbours leave.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TaskCancelled } from '@/server/domain/tasks';
import { ADMIN_SECRET, VIEWER_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;

const rest = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${h.corral.url}/api${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const row = async (name: string) =>
  (await rest('GET', `/vms/tailvm/${name}/row`)).body as { vmid: number; node: string; status: string };
const vmiNode = async (name: string) => {
  const res = await fetch(`${h.sim.url}/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachineinstances/${name}`);
  return ((await res.json()) as { status?: { nodeName?: string } }).status?.nodeName ?? '';
};

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
  // A containerDisk VM has no PVC, so KubeVirt may live-migrate it; the other one keeps a ReadWriteOnce disk.
  for (const [name, source] of [
    ['mig-live', { containerDisk: 'quay.io/containerdisks/fedora:42' }],
    ['mig-off', { containerDisk: 'quay.io/containerdisks/fedora:42' }],
  ] as const) {
    const r = await rest('POST', '/vms', { name, cpu: 1, mem: '1G', start: false, ...source });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
  }
  // Keep the live one on an Intel node: there are two, so it always has somewhere to go.
  const pinned = await fetch(`${h.sim.url}/apis/kubevirt.io/v1/namespaces/tailvm/virtualmachines/mig-live`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/merge-patch+json' },
    body: JSON.stringify({
      spec: { template: { spec: { nodeSelector: { 'cpu-vendor.node.kubevirt.io/Intel': 'true' } } } },
    }),
  });
  expect(pinned.status).toBe(200);
  expect((await rest('POST', '/vms/tailvm/mig-live/start')).status).toBeLessThan(300);
  const created = await api.post('/nodes/corral-1/qemu', {
    vmid: 700,
    name: 'mig-rwo',
    memory: 512,
    scsi0: 'local-lvm:1',
    start: 1,
  });
  expect((await waitTask(api, created.body.data as string, 60_000)).exitstatus).toBe('OK');
  // A stopped VM with a ReadWriteOnce disk (bpg's offline shape moves it).
  const cold = await api.post('/nodes/corral-1/qemu', {
    vmid: 701,
    name: 'mig-cold',
    memory: 512,
    scsi0: 'local-lvm:1',
  });
  expect((await waitTask(api, cold.body.data as string, 60_000)).exitstatus).toBe('OK');
  for (const name of ['mig-live', 'mig-rwo']) await until(async () => (await row(name)).status === 'Running');
}, 120_000);
afterAll(async () => {
  await h?.close();
});

describe('migrate', () => {
  it('GET …/migrate lists the allowed nodes and says why the others are not', async () => {
    const { vmid, node } = await row('mig-live');
    const r = await api.get(`/nodes/${node}/qemu/${vmid}/migrate`);
    expect(r.status, r.reason).toBe(200);
    const data = r.body.data as {
      running: number;
      allowed_nodes: string[];
      not_allowed_nodes: Record<string, { reason: string }>;
      local_disks: unknown[];
      local_resources: unknown[];
    };
    expect(data.running).toBe(1);
    expect(data.local_disks).toEqual([]);
    expect(data.local_resources).toEqual([]);
    const all = ['corral-1', 'corral-2', 'corral-3'].filter((n) => n !== node);
    expect([...data.allowed_nodes, ...Object.keys(data.not_allowed_nodes)].sort()).toEqual(all);
    // corral-1 and corral-2 are Intel, corral-3 AMD: KubeVirt keeps a VM on its CPU vendor.
    const vendor = (n: string) => (n === 'corral-3' ? 'AMD' : 'Intel');
    for (const n of all) {
      if (vendor(n) === vendor(node)) expect(data.allowed_nodes).toContain(n);
      else expect(data.not_allowed_nodes[n]?.reason).toMatch(/CPU vendor .* differs/);
    }
  });

  it('POST …/migrate {target, online: 1} moves the VMI and its qmigrate task ends OK', async () => {
    const { vmid, node } = await row('mig-live');
    const target = ['corral-1', 'corral-2', 'corral-3'].find(
      (n) => n !== node && (n === 'corral-3') === (node === 'corral-3'),
    );
    expect(target).toBeDefined();
    // bpg's shape: target, online=1 and with-local-disks=1 (it always sends both).
    const r = await api.post(`/nodes/${node}/qemu/${vmid}/migrate`, {
      target: target!,
      online: 1,
      'with-local-disks': 1,
    });
    expect(r.status, r.reason).toBe(200);
    const upid = r.body.data as string;
    expect(upid).toMatch(new RegExp(`^UPID:${node}:[0-9A-F]+:[0-9A-F]+:[0-9A-F]+:qmigrate:${vmid}:root@pam!ci:$`));
    const end = await waitTask(api, upid, 60_000);
    expect(end.exitstatus).toBe('OK');
    expect(await vmiNode('mig-live')).toBe(target);
    await expect.poll(async () => (await row('mig-live')).node, { timeout: 10_000 }).toBe(target);
    const log = (await api.get(`/nodes/${node}/tasks/${encodeURIComponent(upid)}/log`)).body.data as { t: string }[];
    expect(log.map((l) => l.t).join('\n')).toMatch(/Succeeded[\s\S]*TASK OK/);
  });

  it('refuses as PVE does: no --online, the local node, an unknown node, a running VM with local disks', async () => {
    const live = await row('mig-live');
    const base = `/nodes/${live.node}/qemu/${live.vmid}/migrate`;
    const other = live.node === 'corral-1' ? 'corral-2' : 'corral-1';
    const noOnline = await api.post(base, { target: other });
    expect([noOnline.status, noOnline.reason]).toEqual([500, "can't migrate running VM without --online"]);
    const local = await api.post(base, { target: live.node, online: 1 });
    expect(local.status).toBe(400);
    expect(local.body.errors).toEqual({ target: 'target is local node.' });
    const nowhere = await api.post(base, { target: 'nowhere', online: 1 });
    expect(nowhere.body.errors).toEqual({ target: "no such cluster node 'nowhere'" });
    const colour = await api.post(base, { target: other, online: 1, colour: 'red' });
    expect(colour.status).toBe(400);
    expect(Object.keys(colour.body.errors ?? {})).toEqual(['colour']);

    const rwo = await row('mig-rwo');
    const pre = (await api.get(`/nodes/${rwo.node}/qemu/700/migrate`)).body.data as {
      local_disks: { volid: string; drivename: string; size: number }[];
      allowed_nodes: string[];
    };
    expect(pre.allowed_nodes).toEqual([]);
    expect(pre.local_disks).toEqual([
      expect.objectContaining({ volid: 'longhorn:mig-rwo-scsi0', drivename: 'scsi0', size: 1024 ** 3, is_attached: 1 }),
    ]);
    const target = rwo.node === 'corral-1' ? 'corral-2' : 'corral-1';
    const refused = await api.post(`/nodes/${rwo.node}/qemu/700/migrate`, { target, online: 1 });
    expect(refused.status).toBe(500);
    expect(refused.reason).toMatch(/^can't live migrate attached local disks without with-local-disks option/);
    const still = await api.post(`/nodes/${rwo.node}/qemu/700/migrate`, {
      target,
      online: 1,
      'with-local-disks': 1,
    });
    expect(still.reason).toMatch(/KubeVirt live migration needs ReadWriteMany volumes/);
    expect(await vmiNode('mig-rwo')).toBe(rwo.node);
  });
});

describe('offline migrate', () => {
  const listed = async (node: string) =>
    ((await api.get(`/nodes/${node}/qemu`)).body.data as { vmid: number }[]).map((v) => v.vmid);

  it("proxmoxer's {target}: a stopped VM is pinned to the target, listed there, and starts there", async () => {
    const off = await row('mig-off');
    expect(off).toMatchObject({ status: 'Stopped', node: '' });
    // Not pinned: shown on the home node (corral-1), from which every other node is allowed.
    const pre = (await api.get(`/nodes/corral-1/qemu/${off.vmid}/migrate`)).body.data as Record<string, unknown>;
    expect(pre).toMatchObject({ running: 0, allowed_nodes: ['corral-2', 'corral-3'], not_allowed_nodes: {} });
    expect(pre.local_disks).toEqual([]);

    const r = await api.post(`/nodes/corral-1/qemu/${off.vmid}/migrate`, { target: 'corral-3' });
    expect(r.status, r.reason).toBe(200);
    const upid = r.body.data as string;
    expect(upid).toMatch(new RegExp(`^UPID:corral-1:[0-9A-F]+:[0-9A-F]+:[0-9A-F]+:qmigrate:${off.vmid}:root@pam!ci:$`));
    expect((await waitTask(api, upid)).exitstatus).toBe('OK');
    const log = (await api.get(`/nodes/corral-1/tasks/${encodeURIComponent(upid)}/log`)).body.data as { t: string }[];
    expect(log.map((l) => l.t).join('\n')).toMatch(/pinned to corral-3[\s\S]*TASK OK/);

    await expect.poll(async () => (await row('mig-off')).node, { timeout: 10_000 }).toBe('corral-3');
    expect(await listed('corral-3')).toContain(off.vmid);
    expect(await listed('corral-1')).not.toContain(off.vmid);
    const status = (await api.get(`/nodes/corral-3/qemu/${off.vmid}/status/current`)).body.data as { status: string };
    expect(status.status).toBe('stopped');
    // Now on corral-3: migrating it there again is PVE's "target is local node."; an unknown target is refused.
    const again = await api.post(`/nodes/corral-3/qemu/${off.vmid}/migrate`, { target: 'corral-3' });
    expect([again.status, again.body.errors]).toEqual([400, { target: 'target is local node.' }]);
    const nowhere = await api.post(`/nodes/corral-3/qemu/${off.vmid}/migrate`, { target: 'nowhere' });
    expect([nowhere.status, nowhere.body.errors]).toEqual([400, { target: "no such cluster node 'nowhere'" }]);
    const pinned = (await api.get(`/nodes/corral-3/qemu/${off.vmid}/migrate`)).body.data as { allowed_nodes: string[] };
    expect(pinned.allowed_nodes).toEqual(['corral-1', 'corral-2']);

    const start = await api.post(`/nodes/corral-3/qemu/${off.vmid}/status/start`);
    expect((await waitTask(api, start.body.data as string, 30_000)).exitstatus).toBe('OK');
    await until(async () => (await vmiNode('mig-off')) === 'corral-3');
    const stop = await api.post(`/nodes/corral-3/qemu/${off.vmid}/status/stop`);
    expect((await waitTask(api, stop.body.data as string, 30_000)).exitstatus).toBe('OK');
    await expect.poll(async () => (await row('mig-off')).node, { timeout: 10_000 }).toBe('corral-3');
  });

  it("bpg's {target, online: 0, with-local-disks: 1}: a stopped VM's disk stays, and it moves", async () => {
    const pre = (await api.get('/nodes/corral-1/qemu/701/migrate')).body.data as {
      running: number;
      allowed_nodes: string[];
      local_disks: { volid: string; drivename: string }[];
    };
    expect(pre.running).toBe(0);
    expect(pre.allowed_nodes).toEqual(['corral-2', 'corral-3']);
    expect(pre.local_disks).toEqual([
      expect.objectContaining({ volid: 'longhorn:mig-cold-scsi0', drivename: 'scsi0' }),
    ]);
    const r = await api.post('/nodes/corral-1/qemu/701/migrate', {
      target: 'corral-2',
      online: 0,
      'with-local-disks': 1,
    });
    expect(r.status, r.reason).toBe(200);
    expect((await waitTask(api, r.body.data as string)).exitstatus).toBe('OK');
    await expect.poll(async () => (await row('mig-cold')).node, { timeout: 10_000 }).toBe('corral-2');
    const config = (await api.get('/nodes/corral-2/qemu/701/config')).body.data as { scsi0: string };
    expect(config.scsi0).toMatch(/^local-lvm:/);
  });

  it('REST: POST /api/vms/{ns}/{name}/migrate pins a stopped VM to targetNode; refusals name the field or state', async () => {
    const moved = await rest('POST', '/vms/tailvm/mig-cold/migrate', { targetNode: 'corral-3' });
    expect(moved.status, JSON.stringify(moved.body)).toBe(202);
    await expect.poll(async () => (await row('mig-cold')).node, { timeout: 10_000 }).toBe('corral-3');
    const same = await rest('POST', '/vms/tailvm/mig-cold/migrate', { targetNode: 'corral-3' });
    expect(same.status).toBe(409);
    expect(JSON.stringify(same.body)).toContain('already on corral-3');
    const unknown = await rest('POST', '/vms/tailvm/mig-cold/migrate', { targetNode: 'nowhere' });
    expect(unknown.status).toBe(400);
    expect(JSON.stringify(unknown.body)).toContain('targetNode');
    const noTarget = await rest('POST', '/vms/tailvm/mig-cold/migrate', {});
    expect(noTarget.status).toBe(409);
    expect(JSON.stringify(noTarget.body)).toContain('a stopped one moves offline to a targetNode');
  });
});

describe('task listings', () => {
  type TaskRow = { upid: string; type: string; id: string; user: string; status?: string; starttime: number };
  const list = async (node: string, params: Record<string, string | number> = {}) => {
    const r = await api.get(`/nodes/${node}/tasks`, params);
    expect(r.status, r.reason).toBe(200);
    return r.body.data as TaskRow[];
  };

  it('filters by vmid, typefilter, userfilter, errors, source and paging, as PVE does', async () => {
    const { node, vmid } = await row('mig-live');
    // A failed task on that VM: starting it again while it runs.
    const again = await api.post(`/nodes/${node}/qemu/${vmid}/status/start`);
    expect(again.status).toBe(500);
    const stop = await api.post(`/nodes/${node}/qemu/${vmid}/status/stop`);
    expect((await waitTask(api, stop.body.data as string, 30_000)).exitstatus).toBe('OK');

    const nodes = ['corral-1', 'corral-2', 'corral-3'];
    const everything = (await Promise.all(nodes.map((n) => list(n, { source: 'all', limit: 1000 })))).flat();
    expect(everything.some((t) => t.type === 'qmigrate' && t.id === String(vmid))).toBe(true);
    const archived = await list(node, { limit: 1000 });
    expect(archived.every((t) => t.status !== undefined)).toBe(true);
    expect(archived.map((t) => t.starttime)).toEqual([...archived.map((t) => t.starttime)].sort((a, b) => b - a));

    const ofVm = await list(node, { vmid, limit: 1000 });
    expect(ofVm.length).toBeGreaterThan(0);
    expect(ofVm.every((t) => t.id === String(vmid))).toBe(true);
    const stops = await list(node, { typefilter: 'qmstop', limit: 1000 });
    expect(stops.map((t) => t.upid)).toContain(stop.body.data);
    expect(stops.every((t) => t.type === 'qmstop')).toBe(true);
    expect(await list(node, { userfilter: 'nobody-here' })).toEqual([]);
    expect((await list(node, { userfilter: 'ROOT@pam' })).map((t) => t.upid)).toContain(stop.body.data);
    const failed = await list(node, { errors: 1, limit: 1000 });
    expect(failed.every((t) => t.status !== 'OK')).toBe(true);
    expect(await list(node, { source: 'active' })).toEqual(
      expect.not.arrayContaining([expect.objectContaining({ upid: stop.body.data })]),
    );
    const okOnly = await list(node, { statusfilter: 'ok', limit: 1000 });
    expect(okOnly.length).toBeGreaterThan(0);
    expect(okOnly.every((t) => t.status === 'OK')).toBe(true);
    const page = await list(node, { start: 1, limit: 1 });
    expect(page).toEqual(archived.slice(1, 2));

    const bad = await api.get(`/nodes/${node}/tasks`, { source: 'yesterday' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors ?? {})).toEqual(['source']);
    const unknown = await api.get(`/nodes/${node}/tasks`, { typefiltr: 'qmstart' });
    expect(Object.keys(unknown.body.errors ?? {})).toEqual(['typefiltr']);
  });

  it("/cluster/tasks lists every node's tasks with PVE's row fields", async () => {
    const rows = (await api.get('/cluster/tasks')).body.data as (TaskRow & Record<string, unknown>)[];
    const migration = rows.find((t) => t.type === 'qmigrate');
    expect(migration).toBeDefined();
    for (const key of ['upid', 'node', 'pid', 'pstart', 'starttime', 'type', 'id', 'user', 'status', 'endtime'])
      expect(migration).toHaveProperty(key);
    expect(typeof migration!.pid).toBe('number');
    expect(migration!.status).toBe('OK');
  });

  it("DELETE /nodes/{node}/tasks/{upid} is PVE's stop task: the owner or Sys.Modify, only a task that can stop", async () => {
    // A running task that accepts a cancel, as a cross-cluster move registers one (tests/integration/server/move.test.ts).
    const task = h.corral.registry.default.journal.start('move', 'tailvm/mig-off', 'root@pam!ci');
    const heard: string[] = [];
    task.onCancel((by) => heard.push(by));
    const rows = (await api.get('/cluster/tasks')).body.data as TaskRow[];
    const row = rows.find((t) => t.type === 'move' && t.status === undefined)!;
    const path = `/nodes/${row.upid.split(':')[1]}/tasks/${encodeURIComponent(row.upid)}`;
    const viewer = px(h.url, { token: `monitor@pve!ro=${VIEWER_SECRET}` });
    expect((await viewer.del(path)).status).toBe(403);
    expect(heard).toEqual([]);
    const stopped = await api.del(path);
    expect([stopped.status, stopped.body.data]).toEqual([200, null]);
    expect(heard).toEqual(['root@pam!ci']);
    task.fail(new TaskCancelled('root@pam!ci'));
    const status = await waitTask(api, row.upid);
    expect(status.exitstatus).toBe('interrupted by signal');
    const log = (await api.get(`${path}/log`)).body.data as { t: string }[];
    expect(log.map((l) => l.t)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/cancel requested by root@pam!ci$/),
        'TASK ERROR: interrupted by signal',
      ]),
    );
    // An ended task, and one that cannot stop part-way, are refused with the reason.
    const again = await api.del(path);
    expect([again.status, again.reason]).toEqual([500, expect.stringMatching(/has already ended/)]);
    const plain = rows.find((t) => t.type === 'qmigrate')!;
    const other = await api.del(`/nodes/${plain.upid.split(':')[1]}/tasks/${encodeURIComponent(plain.upid)}`);
    expect([other.status, other.reason]).toEqual([500, expect.stringMatching(/has already ended|cannot be cancelled/)]);
  });
});
