/**
 * The Proxmox API's wire contract and guard rails over HTTPS: exact content type, envelope and reason phrases,
 * token/ticket/CSRF handling, Viewer tokens read-only, the gap log, bad input as named 400s with nothing
 * half-created, vmid allocation and collisions, and the mount inside Corral's own server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_VMID } from '@/server/domain/labels';
import { fallbackVmid } from '@/server/domain/vmids';
import { buildUploadDataVolume } from '@/server/domain/datavolume-upload';
import { eventually } from '../server/harness';
import { ADMIN_SECRET, VIEWER_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let admin: ReturnType<typeof px>;
beforeAll(async () => {
  h = await startProxmoxHarness();
  admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
});
afterAll(async () => {
  await h?.close();
});

const PVE_TYPE = 'application/json;charset=UTF-8';

describe('wire format', () => {
  it('answers every call, success or error, with the exact content type and the data envelope', async () => {
    const ok = await admin.get('/version');
    expect(ok.contentType).toBe(PVE_TYPE);
    // proxmox-api.md: static 8.2.0, repoid corral-kubevirt.
    expect(ok.body.data).toEqual({ version: '8.2.0', release: '8.2', repoid: 'corral-kubevirt' });
    const err = await admin.get('/nodes/corral-1/qemu/999999/status/current');
    expect(err.contentType).toBe(PVE_TYPE);
    expect(err.status).toBe(404);
    expect(err.reason).toBe("Configuration file 'nodes/corral-1/qemu-server/999999.conf' does not exist");
    expect(err.body).toEqual({
      data: null,
      message: "Configuration file 'nodes/corral-1/qemu-server/999999.conf' does not exist\n",
    });
  });

  it('logs unknown endpoints as gaps and answers a Proxmox-shaped 501', async () => {
    const r = await admin.get('/nodes/corral-1/ceph/status');
    expect(r.status).toBe(501);
    expect(r.reason).toBe("Method 'GET /nodes/corral-1/ceph/status' not implemented");
    expect(r.body.data).toBeNull();
    expect(h.gaps).toContain('[proxmox-gap] GET /nodes/corral-1/ceph/status');
  });

  it('answers /nodes/{n}/hosts as PVE does: the hosts file and its digest', async () => {
    const r = await admin.get('/nodes/corral-1/hosts');
    expect(r.status).toBe(200);
    const data = r.body.data as { data: string; digest: string };
    expect(data.data).toMatch(/^127\.0\.0\.1 localhost\.localdomain localhost\n/);
    expect(data.data).toMatch(/ corral-1\.cluster\.local corral-1\n/);
    expect(data.digest).toMatch(/^[0-9a-f]{40}$/);
    expect((await admin.get('/nodes/nope/hosts')).status).toBeGreaterThanOrEqual(400);
  });

  it('returns lists, never null, for pools, lxc and HA groups', async () => {
    for (const path of ['/pools', '/nodes/corral-1/lxc', '/cluster/ha/groups'])
      expect((await admin.get(path)).body.data).toEqual([]);
  });

  it('honours the resource type filter with integer vmids and no storage rows in type=vm', async () => {
    const nodes = (await admin.get('/cluster/resources', { type: 'node' })).body.data as { type: string }[];
    expect(nodes.length).toBeGreaterThan(0);
    expect(nodes.every((n) => n.type === 'node')).toBe(true);
    const storage = (await admin.get('/cluster/resources', { type: 'storage' })).body.data as { content: string }[];
    expect(storage.some((s) => s.content === 'iso,vztmpl,snippets,import')).toBe(true);
    expect((await admin.get('/cluster/resources', { type: 'bogus' })).status).toBe(400);
  });
});

describe('authentication', () => {
  it('says No ticket without credentials and refuses a wrong token', async () => {
    const none = await px(h.url).get('/version');
    expect([none.status, none.reason]).toEqual([401, 'No ticket']);
    const wrong = await px(h.url, { token: 'root@pam!ci=00000000-0000-0000-0000-000000000000' }).get('/version');
    expect(wrong.status).toBe(401);
  });

  it('fails a login with 401 and data: null (proxmoxer reads .json()["data"])', async () => {
    const r = await px(h.url).post('/access/ticket', { username: 'root@pam', password: 'wrong' });
    expect([r.status, r.reason]).toEqual([401, 'authentication failure']);
    expect(r.body.data).toBeNull();
  });

  it('issues tickets that never contain the secret, require CSRF on writes, and renew with the ticket as password', async () => {
    const login = await px(h.url).post('/access/ticket', { username: 'root@pam', password: ADMIN_SECRET });
    const data = login.body.data as {
      username: string;
      ticket: string;
      CSRFPreventionToken: string;
      cap: Record<string, unknown>;
    };
    expect(data.username).toBe('root@pam');
    expect(data.ticket).toMatch(/^PVE:root@pam:[0-9A-F]{8}::/);
    expect(data.ticket).not.toContain(ADMIN_SECRET);
    expect(data.cap.vms).toHaveProperty('VM.Allocate', 1);
    const cookieOnly = px(h.url, { cookie: data.ticket });
    expect((await cookieOnly.get('/nodes')).status).toBe(200);
    const noCsrf = await cookieOnly.post('/nodes/corral-1/qemu', { vmid: 150 });
    expect([noCsrf.status, noCsrf.reason]).toEqual([401, 'Permission denied - invalid csrf token']);
    const renewed = await px(h.url).post('/access/ticket', { username: 'root@pam', password: data.ticket });
    expect((renewed.body.data as { ticket: string }).ticket).toMatch(/^PVE:root@pam:/);
    const forged = await px(h.url, { cookie: data.ticket.replace('root@pam', 'evil@pam') }).get('/nodes');
    expect([forged.status, forged.reason]).toEqual([401, 'permission denied - invalid PVE ticket']);
  });

  it('keeps Viewer tokens read-only and says so in /access/permissions', async () => {
    const viewer = px(h.url, { token: `monitor@pve!ro=${VIEWER_SECRET}` });
    expect((await viewer.get('/cluster/resources')).status).toBe(200);
    const perms = (await viewer.get('/access/permissions')).body.data as Record<string, Record<string, number>>;
    expect(perms['/vms']).toEqual({ 'VM.Audit': 1 });
    const create = await viewer.post('/nodes/corral-1/qemu', { vmid: 151, scsi0: 'local-lvm:1' });
    expect([create.status, create.reason]).toEqual([403, 'Permission check failed (/vms/151, VM.Allocate)']);
  });
});

describe('bad input and vmids', () => {
  it('names the parameter in 400s and creates nothing', async () => {
    const cases: [Record<string, string | number>, string][] = [
      [{ vmid: 'abc' }, 'vmid'],
      [{ vmid: 160, scsi0: 'nowhere:4' }, 'scsi0'],
      [{ vmid: 160, scsi0: 'local-lvm:4,media=floppy' }, 'scsi0'],
      [{ vmid: 160, net0: 'ne3000,bridge=vmbr0' }, 'net0'],
      [{ vmid: 160, ide2: 'local:iso/missing.iso,media=cdrom' }, 'ide2'],
      [{ vmid: 160, name: 'Not_A_DNS_Name' }, 'name'],
      [{ vmid: 160, bogus: 1 }, 'bogus'],
      [{ vmid: 160, cores: 0 }, 'cores'],
    ];
    for (const [params, param] of cases) {
      const r = await admin.post('/nodes/corral-1/qemu', params);
      expect(r.status, JSON.stringify(params)).toBe(400);
      expect(r.reason).toBe('Parameter verification failed.');
      expect(Object.keys(r.body.errors ?? {})).toEqual([param]);
    }
    expect(await h.corral.cluster.fetchList('VirtualMachine', { namespace: 'tailvm' })).toEqual([]);
    expect(await h.corral.cluster.fetchList('DataVolume', { namespace: 'tailvm' })).toEqual([]);
  });

  it('refuses a library ISO or import-from volume that has not finished importing, naming the parameter', async () => {
    // An upload that never got its bytes: CDI waits (UploadReady) and the claim is not a whole image.
    await h.corral.cluster.create(
      'DataVolume',
      buildUploadDataVolume({ namespace: 'tailvm', name: 'half', size: '1Gi', contentType: 'iso', bytes: 1 }),
    );
    await eventually(() => h.corral.cluster.cache.get('PersistentVolumeClaim', 'tailvm', 'half'), 10_000, 'claim');
    try {
      for (const [params, param] of [
        [{ vmid: 161, ide2: 'local:iso/half.iso,media=cdrom' }, 'ide2'],
        [{ vmid: 161, scsi0: 'local-lvm:0,import-from=local:iso/half' }, 'scsi0'],
      ] as const) {
        const r = await admin.post('/nodes/corral-1/qemu', params);
        expect([r.status, r.reason]).toEqual([400, 'Parameter verification failed.']);
        expect(r.body.errors?.[param]).toMatch(/is not ready: DataVolume tailvm\/half is \w+, not Succeeded/);
      }
      expect(await h.corral.cluster.fetchList('VirtualMachine', { namespace: 'tailvm' })).toEqual([]);
    } finally {
      await h.corral.cluster.remove('DataVolume', 'tailvm', 'half');
    }
  });

  it('allocates ids with nextid, refuses taken ones, and says "already exists" on a second create', async () => {
    const id = Number((await admin.get('/cluster/nextid')).body.data);
    expect(id).toBeGreaterThanOrEqual(100);
    const upid = (await admin.post('/nodes/corral-1/qemu', { vmid: id, name: 'taken', memory: 256 })).body
      .data as string;
    expect((await waitTask(admin, upid)).exitstatus).toBe('OK');
    const taken = await admin.get('/cluster/nextid', { vmid: id });
    expect(taken.status).toBe(400);
    expect(taken.body.errors).toEqual({ vmid: `VM ${id} already exists` });
    expect(Number((await admin.get('/cluster/nextid')).body.data)).not.toBe(id);
    const again = await admin.post('/nodes/corral-1/qemu', { vmid: id, name: 'taken-2' });
    expect(again.status).toBe(500);
    expect(again.reason).toMatch(/already exists/);
    const running = await admin.post(`/nodes/corral-1/qemu/${id}/status/start`);
    await waitTask(admin, running.body.data as string);
    const destroy = await admin.del(`/nodes/corral-1/qemu/${id}`);
    expect([destroy.status, destroy.reason]).toEqual([500, `VM ${id} is running - destroy failed`]);
  });

  it('gives VMs made outside the Proxmox API their fallback vmid, and relabels the newcomer of a collision', async () => {
    const make = (name: string) =>
      h.corral.cluster.create('VirtualMachine', {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachine',
        metadata: { name, namespace: 'tailvm' },
        spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
      });
    await make('outsider');
    const id = fallbackVmid('outsider');
    await expect
      .poll(async () => (await admin.get(`/nodes/corral-1/qemu/${id}/config`)).status, { timeout: 10_000 })
      .toBe(200);
    // A VM labelled with that id arrives: the label wins, and the unlabelled holder moves to a free id that is
    // persisted as its label (never two VMs on one vmid).
    await h.corral.cluster.create('VirtualMachine', {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'copycat', namespace: 'tailvm', labels: { [LABEL_VMID]: String(id) } },
      spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
    });
    await expect
      .poll(
        async () =>
          (await h.corral.cluster.fetch('VirtualMachine', 'tailvm', 'outsider'))?.metadata.labels?.[LABEL_VMID],
        { timeout: 10_000 },
      )
      .toMatch(/^\d+$/);
    const outsiderId = (await h.corral.cluster.fetch('VirtualMachine', 'tailvm', 'outsider'))?.metadata.labels?.[
      LABEL_VMID
    ];
    expect(outsiderId).not.toBe(String(id));
    expect((await h.corral.cluster.fetch('VirtualMachine', 'tailvm', 'copycat'))?.metadata.labels?.[LABEL_VMID]).toBe(
      String(id),
    );
    expect(((await admin.get(`/nodes/corral-1/qemu/${id}/config`)).body.data as { name: string }).name).toBe('copycat');
    expect(((await admin.get(`/nodes/corral-1/qemu/${outsiderId}/config`)).body.data as { name: string }).name).toBe(
      'outsider',
    );
    const rows = (await admin.get('/cluster/resources', { type: 'vm' })).body.data as { vmid: number; name: string }[];
    const mine = rows.filter((r) => ['outsider', 'copycat'].includes(r.name));
    expect(new Set(mine.map((r) => r.vmid)).size).toBe(2);
  });
});

describe('a Terraform bpg/proxmox-shaped create', () => {
  it('accepts the provider’s full form body and reads back what it needs', async () => {
    const body = {
      acpi: 1,
      agent: 'enabled=0,fstrim_cloned_disks=0,type=virtio',
      balloon: 0,
      bios: 'seabios',
      boot: 'order=scsi0;net0',
      cores: 1,
      cpu: 'qemu64',
      keyboard: 'en-us',
      memory: 512,
      name: 'tf-vm',
      net0: 'model=virtio,bridge=vmbr0,firewall=0',
      numa: 0,
      onboot: 1,
      ostype: 'l26',
      protection: 0,
      scsi0:
        'file=local-lvm:8,size=8589934592,aio=io_uring,backup=1,iothread=0,ssd=0,discard=ignore,cache=none,replicate=1',
      scsihw: 'virtio-scsi-pci',
      sockets: 1,
      tablet: 1,
      template: 0,
      vmid: 700,
      tags: 'terraform;web',
      description: 'managed by terraform',
    };
    const created = await admin.post('/nodes/corral-1/qemu', body);
    expect(created.status).toBe(200);
    expect((await waitTask(admin, created.body.data as string)).exitstatus).toBe('OK');
    const resources = (await admin.get('/cluster/resources', { type: 'vm' })).body.data as {
      vmid: number;
      node: string;
      tags?: string;
    }[];
    const row = resources.find((r) => r.vmid === 700);
    expect(row?.tags).toBe('terraform;web');
    const config = (await admin.get(`/nodes/${row?.node}/qemu/700/config`)).body.data as Record<string, unknown>;
    expect(config).toMatchObject({
      acpi: 1,
      balloon: 0,
      bios: 'seabios',
      cpu: 'qemu64',
      numa: 0,
      onboot: 1,
      protection: 0,
      tablet: 1,
      sockets: 1,
      cores: 1,
      memory: '512',
      boot: 'order=scsi0;net0',
    });
    expect(config.agent).toBe('enabled=0,fstrim_cloned_disks=0,type=virtio');
    expect(config.scsi0).toBe(
      'local-lvm:tf-vm-scsi0,aio=io_uring,backup=1,cache=none,discard=ignore,format=raw,iothread=0,replicate=1,ssd=0,size=8G',
    );
    expect(config.net0).toMatch(/^virtio=BC:24:11(:[0-9A-F]{2}){3},bridge=vmbr0,firewall=0$/);
    expect(config).not.toHaveProperty('template');
    // bpg's update: only changed keys plus delete=; answers data: null.
    const put = await admin.put(`/nodes/${row?.node}/qemu/700/config`, {
      memory: 1024,
      delete: 'description,tags',
      digest: String(config.digest),
    });
    expect([put.status, put.body.data]).toEqual([200, null]);
    const after = (await admin.get(`/nodes/${row?.node}/qemu/700/config`)).body.data as Record<string, unknown>;
    expect(after.memory).toBe('1024');
    expect(after).not.toHaveProperty('description');
    expect(after).not.toHaveProperty('tags');
    const stale = await admin.put(`/nodes/${row?.node}/qemu/700/config`, {
      memory: 2048,
      digest: String(config.digest),
    });
    expect([stale.status, stale.reason]).toEqual([
      500,
      'detected modified configuration - file changed by other user? Try again.',
    ]);
  });
});

describe('mounting', () => {
  it('serves the same API inside corral web at /api2/json', async () => {
    const r = await fetch(`${h.corral.url}/api2/json/version`, {
      headers: { authorization: `PVEAPIToken=root@pam!ci=${ADMIN_SECRET}` },
    });
    expect(r.headers.get('content-type')).toBe(PVE_TYPE);
    expect(((await r.json()) as { data: { version: string } }).data.version).toBe('8.2.0');
  });
});
