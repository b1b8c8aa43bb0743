/**
 * Adding and removing devices after create, as Ansible's proxmox_disk / proxmox_nic do it: POST …/config with a
 * new disk (async, UPID), PUT …/config with a new NIC, delete=netN, PUT …/unlink, and refusals for what cannot change.
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

describe('devices after create', () => {
  it('adds a disk and a NIC, removes them again, and refuses changes it cannot make', async () => {
    const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 600,
      name: 'devs',
      memory: 256,
      scsi0: 'local-lvm:1',
      net0: 'virtio,bridge=vmbr0',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const config = async () => (await api.get('/nodes/corral-1/qemu/600/config')).body.data as Record<string, string>;

    // proxmox_disk present: POST …/config {scsi1=local-lvm:2} → a task that ends when the disk is ready.
    const addDisk = await api.post('/nodes/corral-1/qemu/600/config', { scsi1: 'local-lvm:2,discard=on' });
    expect(addDisk.body.data).toMatch(/^UPID:/);
    expect((await waitTask(api, addDisk.body.data as string)).exitstatus).toBe('OK');
    await expect
      .poll(async () => (await config()).scsi1, { timeout: 10_000 })
      .toBe('local-lvm:devs-scsi1,discard=on,format=raw,size=2G');

    // proxmox_nic present: a second NIC must name a NetworkAttachmentDefinition (vmbr0 is the pod network).
    const podAgain = await api.put('/nodes/corral-1/qemu/600/config', { net1: 'virtio,bridge=vmbr0' });
    expect(podAgain.status).toBe(400);
    expect(podAgain.body.errors).toHaveProperty('net1');
    // A bridge naming no network is refused before anything changes, not discovered when the VM next starts.
    const typo = await api.put('/nodes/corral-1/qemu/600/config', { net1: 'virtio,bridge=lna', cores: 2 });
    expect(typo.status).toBe(400);
    expect(typo.body.errors).toEqual({
      net1: expect.stringContaining("no NetworkAttachmentDefinition 'lna' in namespace tailvm") as unknown,
    });
    expect(await config()).toMatchObject({ cores: 1 });
    expect((await config()).net1).toBeUndefined();
    expect((await api.put('/nodes/corral-1/qemu/600/config', { net1: 'e1000,bridge=lan,tag=5' })).body.data).toBeNull();
    await expect
      .poll(async () => (await config()).net1, { timeout: 10_000 })
      .toMatch(/^e1000=BC:24:11(:[0-9A-F]{2}){3},bridge=lan,tag=5$/);

    // Changing an attached disk or a MAC is refused, naming the key.
    const net0 = (await config()).net0 ?? '';
    const mac = await api.put('/nodes/corral-1/qemu/600/config', {
      net0: net0.replace(/=([0-9A-F:]+),/, '=02:00:00:00:00:09,'),
    });
    expect(mac.status).toBe(400);
    expect(mac.body.errors).toHaveProperty('net0');
    const disk = await api.put('/nodes/corral-1/qemu/600/config', { scsi0: 'local-lvm:5' });
    expect(disk.status).toBe(400);
    expect(disk.body.errors).toHaveProperty('scsi0');

    // proxmox_nic absent, proxmox_disk absent.
    expect((await api.put('/nodes/corral-1/qemu/600/config', { delete: 'net1' })).body.data).toBeNull();
    await expect.poll(async () => (await config()).net1, { timeout: 10_000 }).toBeUndefined();
    expect((await api.put('/nodes/corral-1/qemu/600/unlink', { idlist: 'scsi1', force: 1 })).body.data).toBeNull();
    await expect.poll(async () => (await config()).scsi1, { timeout: 10_000 }).toBeUndefined();
    await expect
      .poll(async () => (await h.corral.cluster.fetch('DataVolume', 'tailvm', 'devs-scsi1')) === undefined, {
        timeout: 10_000,
      })
      .toBe(true);
    expect((await config()).scsi0).toMatch(/^local-lvm:devs-scsi0,/);
  });

  it('accepts an attached disk re-sent unchanged as a no-op, as PVE does (proxmox_disk present, run twice)', async () => {
    const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 601,
      name: 'resend',
      memory: 256,
      scsi0: 'local-lvm:1',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const config = async () => (await api.get('/nodes/corral-1/qemu/601/config')).body.data as Record<string, string>;
    // First run: proxmox_disk creates scsi1.
    const add = await api.post('/nodes/corral-1/qemu/601/config', { scsi1: 'local-lvm:2,iothread=1' });
    expect((await waitTask(api, add.body.data as string)).exitstatus).toBe('OK');
    await expect
      .poll(async () => (await config()).scsi1, { timeout: 10_000 })
      .toBe('local-lvm:resend-scsi1,format=raw,iothread=1,size=2G');
    const before = await config();
    // Second run: the module re-sends the volume it read back, with its options (no format, no size).
    for (const scsi1 of [
      'local-lvm:resend-scsi1,iothread=1',
      'local-lvm:resend-scsi1,iothread=1,size=2G',
      'local-lvm:resend-scsi1,format=raw,iothread=1,size=2G',
      'local-lvm:2,iothread=1', // the storage:size form of the same disk
    ]) {
      const again = await api.post('/nodes/corral-1/qemu/601/config', { scsi1 });
      expect(again.status, `${scsi1}: ${again.reason}`).toBe(200);
      expect((await waitTask(api, again.body.data as string)).exitstatus).toBe('OK');
      expect((await api.put('/nodes/corral-1/qemu/601/config', { scsi1 })).status).toBe(200);
    }
    expect(await config()).toMatchObject({ scsi0: before.scsi0, scsi1: before.scsi1 });
    expect((await h.corral.cluster.fetch('DataVolume', 'tailvm', 'resend-scsi2')) ?? null).toBeNull();
    // A real change is still refused, naming the key.
    for (const scsi1 of [
      'local-lvm:3,iothread=1',
      'local-lvm:resend-scsi1,size=5G,iothread=1',
      'local-lvm:resend-scsi0,iothread=1',
      'local-lvm:resend-scsi1,iothread=0',
      'other:resend-scsi1,iothread=1',
    ]) {
      const changed = await api.put('/nodes/corral-1/qemu/601/config', { scsi1 });
      expect(changed.status, scsi1).toBe(400);
      expect(changed.body.errors).toHaveProperty('scsi1');
    }
  });
});
