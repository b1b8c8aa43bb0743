/**
 * One hardware implementation, two front doors: disks, NICs and sizes changed through Corral's /api show in a
 * Proxmox client's config, and a NIC added by a Proxmox client (`bridge=lan`) shows in /api's hardware view.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, createNetwork, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
  await createNetwork(h, 'lan');
});
afterAll(async () => {
  await h?.close();
});

const rest = async (method: string, path: string, body?: unknown) => {
  const res = await fetch(`${h.corral.url}/api${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};
const restTaskDone = async (id: unknown) =>
  expect.poll(async () => (await rest('GET', `/tasks/${String(id)}`)).body.status, { timeout: 20_000 }).toBe('done');

describe('hardware through /api and /api2/json', () => {
  it('shows each side the changes made through the other', async () => {
    const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 610,
      name: 'doors',
      memory: 256,
      scsi0: 'local-lvm:1',
      net0: 'virtio,bridge=vmbr0',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const config = async () => (await api.get('/nodes/corral-1/qemu/610/config')).body.data as Record<string, string>;

    // /api → Proxmox: a new volume, a NIC on lan, a new size.
    const vol = await rest('POST', '/vms/tailvm/doors/volumes', { size: '2Gi' });
    expect(vol).toMatchObject({ status: 202, body: { pvc: 'doors-disk-1' } });
    await restTaskDone(vol.body.task);
    const nic = await rest('POST', '/vms/tailvm/doors/nics', { nad: 'lan' });
    expect(nic).toMatchObject({ status: 200, body: { iface: 'net1' } });
    const scaled = await rest('POST', '/vms/tailvm/doors/scale', { cpu: 2, mem: '512Mi' });
    expect(scaled).toMatchObject({ status: 202, body: { mode: 'offline' } });
    await restTaskDone(scaled.body.task);
    await expect
      .poll(async () => Object.values(await config()).join(' '), { timeout: 10_000 })
      .toContain('doors-disk-1');
    const cfg = await config();
    expect(cfg.net1).toMatch(/^virtio=02(:[0-9A-F]{2}){5},bridge=lan$/);
    expect(Number(cfg.sockets ?? 1) * Number(cfg.cores ?? 1)).toBe(2);
    expect(Number(cfg.memory)).toBe(512);

    // The description: whichever door wrote it last, both show it.
    expect((await rest('POST', '/vms/tailvm/doors/options', { description: 'from the api' })).status).toBe(200);
    await expect.poll(async () => (await config()).description, { timeout: 10_000 }).toBe('from the api');
    expect((await api.put('/nodes/corral-1/qemu/610/config', { description: 'from pve' })).status).toBe(200);
    const described = async () =>
      ((await rest('GET', '/vms/tailvm/doors/hardware')).body as { options: { description: string } }).options
        .description;
    await expect.poll(described, { timeout: 10_000 }).toBe('from pve');
    expect((await rest('POST', '/vms/tailvm/doors/options', { description: 'api again' })).status).toBe(200);
    await expect.poll(async () => (await config()).description, { timeout: 10_000 }).toBe('api again');
    expect(await described()).toBe('api again');

    // Proxmox clients find lan among the bridges (GET /nodes/{node}/network), as /api lists it among the NADs.
    const bridges = (await api.get('/nodes/corral-1/network')).body.data as { iface: string; type: string }[];
    expect(bridges.map((b) => [b.iface, b.type])).toEqual([
      ['vmbr0', 'bridge'],
      ['lan', 'bridge'],
    ]);
    expect((await rest('GET', '/nads')).body).toEqual([expect.objectContaining({ name: 'lan', namespace: 'tailvm' })]);

    // Proxmox → /api: a NIC on bridge=lan, then the hardware view lists it with its network.
    expect((await api.put('/nodes/corral-1/qemu/610/config', { net2: 'e1000,bridge=lan' })).status).toBe(200);
    await expect
      .poll(
        async () => {
          const hw = (await rest('GET', '/vms/tailvm/doors/hardware')).body as {
            nics: { name: string; network: string; model: string }[];
          };
          return hw.nics.find((n) => n.name === 'net2');
        },
        { timeout: 10_000 },
      )
      .toMatchObject({ network: 'lan', model: 'e1000' });
  }, 60_000);
});
