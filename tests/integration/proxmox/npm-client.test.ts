/**
 * The npm `proxmox-api` client (what TypeScript users of Proxmox reach for) through a full lifecycle against
 * Corral on the embedded cluster over HTTPS — once with an API token, once with a ticket login (cookie + CSRF on
 * every request, as that client sends them). It compares the content type with ===, so every answer must carry
 * exactly `application/json;charset=UTF-8`, and it throws on any non-2xx.
 */
import proxmoxApi, { type ProxmoxEngineOptions } from 'proxmox-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, startProxmoxHarness, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
  // An ISO in the library: a PVC nobody owns in the default namespace (what `local:iso/…` resolves to).
  await h.corral.cluster.create('PersistentVolumeClaim', {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'debian-12-iso', namespace: 'tailvm' },
    spec: { accessModes: ['ReadOnlyMany'], resources: { requests: { storage: '1Gi' } } },
  });
});
afterAll(async () => {
  await h?.close();
});

type Api = ReturnType<typeof proxmoxApi>;
type ClientFetch = NonNullable<ProxmoxEngineOptions['fetch']>;

/**
 * proxmox-api 1.1.1 sets `Content-Length` itself, which the undici 6 it bundles refuses on Node 24 ("invalid
 * content-length header") before anything is sent. Its documented `fetch` option lets the runtime's own fetch
 * compute the length instead; nothing else about the requests changes.
 */
const clientFetch = ((url: string | URL, init?: { headers?: Record<string, string> } & Record<string, unknown>) => {
  const headers = Object.fromEntries(
    Object.entries(init?.headers ?? {}).filter(([k]) => k.toLowerCase() !== 'content-length'),
  );
  return fetch(url, { ...(init as RequestInit), headers });
}) as unknown as ClientFetch;

async function waitTask(api: Api, upid: string): Promise<{ status: string; exitstatus?: string }> {
  const node = upid.split(':')[1] ?? '';
  for (let i = 0; i < 300; i++) {
    const s = (await api.nodes.$(node).tasks.$(upid).status.$get()) as { status: string; exitstatus?: string };
    if (s.status === 'stopped') return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`task ${upid} did not stop`);
}

async function lifecycle(api: Api, vmid: number, name: string): Promise<void> {
  expect((await api.version.$get()).version).toMatch(/^8\./);
  const nodes = await api.nodes.$get();
  const node = nodes[0]?.node ?? '';
  expect(node).toMatch(/^corral-/);
  expect(Number(await api.cluster.nextid.$get({ vmid }))).toBe(vmid);

  // Create with a disk, an ISO and a NIC.
  const create = await api.nodes.$(node).qemu.$post({
    vmid,
    name,
    cores: 1,
    memory: '1024',
    ostype: 'l26',
    scsihw: 'virtio-scsi-pci',
    scsi0: 'local-lvm:2,iothread=1',
    ide2: 'local:iso/debian-12.iso,media=cdrom',
    net0: 'virtio,bridge=vmbr0,firewall=1',
    agent: '1',
    onboot: false,
  });
  expect(create).toMatch(new RegExp(`^UPID:${node}:[0-9A-F]{8}:[0-9A-F]{8}:[0-9A-F]{8}:qmcreate:${vmid}:`));
  expect(await waitTask(api, create)).toMatchObject({ status: 'stopped', exitstatus: 'OK' });

  const vms = await api.cluster.resources.$get({ type: 'vm' });
  const row = vms.find((v) => v.vmid === vmid);
  expect(row).toMatchObject({ type: 'qemu', name, status: 'stopped', template: 0 });
  const vmNode = row?.node ?? node;
  const vm = api.nodes.$(vmNode).qemu.$(vmid);

  const config = await vm.config.$get();
  expect(config.name).toBe(name);
  expect(config.cores).toBe(1);
  expect(config.memory).toBe('1024');
  expect(config.scsi0).toMatch(new RegExp(`^local-lvm:${name}-scsi0,format=raw,iothread=1,size=2G$`));
  expect(config.ide2).toBe('local:iso/debian-12.iso,media=cdrom,size=1G');
  expect(config.net0).toMatch(/^virtio=BC:24:11(:[0-9A-F]{2}){3},bridge=vmbr0,firewall=1$/);
  expect(config.onboot).toBe(0);
  const mac = /=(.*?),/.exec(String(config.net0))?.[1];

  // Start → running.
  expect(await waitTask(api, await vm.status.start.$post())).toMatchObject({ exitstatus: 'OK' });
  const status = await vm.status.current.$get();
  expect(status).toMatchObject({ vmid, status: 'running', qmpstatus: 'running', cpus: 1, maxmem: 1024 * 1024 * 1024 });
  await expect(vm.status.start.$post()).rejects.toThrow(/already running/);

  // Update cores/memory; resize the disk.
  expect(await vm.config.$put({ cores: 2, memory: '2048', description: 'managed by npm proxmox-api' })).toBeNull();
  expect(
    await waitTask(api, (await vm.resize.$put({ disk: 'scsi0', size: '+1G' })) as unknown as string),
  ).toMatchObject({ exitstatus: 'OK' });
  const updated = await vm.config.$get();
  expect(updated).toMatchObject({ cores: 2, memory: '2048', description: 'managed by npm proxmox-api' });
  expect(updated.scsi0).toMatch(/size=3G$/);
  expect(/=(.*?),/.exec(String(updated.net0))?.[1]).toBe(mac);

  // Snapshot create, rollback, delete.
  expect(await waitTask(api, await vm.snapshot.$post({ snapname: 'npmsnap', description: 'before' }))).toMatchObject({
    exitstatus: 'OK',
  });
  const snaps = await vm.snapshot.$get();
  expect(snaps.map((s) => s.name)).toEqual(['npmsnap', 'current']);
  expect(await waitTask(api, await vm.snapshot.$('npmsnap').rollback.$post())).toMatchObject({ exitstatus: 'OK' });
  expect(await waitTask(api, await vm.snapshot.$('npmsnap').$delete())).toMatchObject({ exitstatus: 'OK' });
  expect((await vm.snapshot.$get()).map((s) => s.name)).toEqual(['current']);

  // Stop (a rollback leaves the VM stopped, as PVE does; start it again first so stop has work to do).
  expect(await waitTask(api, await vm.status.start.$post())).toMatchObject({ exitstatus: 'OK' });
  expect(await waitTask(api, await vm.status.stop.$post())).toMatchObject({ exitstatus: 'OK' });
  expect((await vm.status.current.$get()).status).toBe('stopped');

  // Delete; status/current fails right away.
  expect(await waitTask(api, await api.nodes.$(vmNode).qemu.$(vmid).$delete({ purge: true }))).toMatchObject({
    exitstatus: 'OK',
  });
  await expect(vm.status.current.$get()).rejects.toThrow(/404.*does not exist/);
  expect((await api.cluster.resources.$get({ type: 'vm' })).some((v) => v.vmid === vmid)).toBe(false);
}

describe('npm proxmox-api client', () => {
  it('completes a full lifecycle with an API token', async () => {
    const api = proxmoxApi({
      host: '127.0.0.1',
      port: h.port,
      schema: 'https',
      fetch: clientFetch,
      tokenID: 'root@pam!ci',
      tokenSecret: ADMIN_SECRET,
    });
    await lifecycle(api, 201, 'npm-token');
  });

  it('completes a full lifecycle with a ticket login', async () => {
    const api = proxmoxApi({
      host: '127.0.0.1',
      port: h.port,
      schema: 'https',
      fetch: clientFetch,
      username: 'root@pam',
      password: ADMIN_SECRET,
    });
    await lifecycle(api, 202, 'npm-ticket');
  });

  it('is refused with a wrong password', async () => {
    const api = proxmoxApi({
      host: '127.0.0.1',
      port: h.port,
      schema: 'https',
      fetch: clientFetch,
      username: 'root@pam',
      password: 'not-the-secret',
    });
    await expect(api.version.$get()).rejects.toThrow(/access\/ticket Failed/);
  });
});
