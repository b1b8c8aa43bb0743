/** clone and template over the Proxmox API: a real VirtualMachineClone, the new vmid on the copy, the template flag. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('clone and template', () => {
  it('clones a stopped VM to a new vmid with its own MAC, and marks a template', async () => {
    const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 500,
      name: 'golden',
      memory: 512,
      scsi0: 'local-lvm:1',
      net0: 'virtio,bridge=vmbr0',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const source = (await api.get('/nodes/corral-1/qemu/500/config')).body.data as Record<string, string>;

    const cloned = await api.post('/nodes/corral-1/qemu/500/clone', {
      newid: 501,
      name: 'golden-copy',
      full: 1,
      description: 'a copy',
    });
    expect(cloned.status).toBe(200);
    expect(cloned.body.data).toMatch(/:qmclone:500:/);
    expect((await waitTask(api, cloned.body.data as string, 60_000)).exitstatus).toBe('OK');
    await expect
      .poll(async () => (await api.get('/nodes/corral-1/qemu/501/config')).status, { timeout: 10_000 })
      .toBe(200);
    const copy = (await api.get('/nodes/corral-1/qemu/501/config')).body.data as Record<string, string>;
    expect(copy).toMatchObject({ name: 'golden-copy', description: 'a copy', memory: '512' });
    expect(copy.net0).not.toBe(source.net0);
    expect((await api.get('/nodes/corral-1/qemu/500/config')).body.data).toMatchObject({ name: 'golden' });
    const taken = await api.post('/nodes/corral-1/qemu/500/clone', { newid: 501, name: 'again' });
    expect(taken.status).toBe(500);
    expect(taken.reason).toMatch(/already exists/);

    const tpl = await api.post('/nodes/corral-1/qemu/500/template');
    expect((await waitTask(api, tpl.body.data as string)).exitstatus).toBe('OK');
    await expect
      .poll(
        async () =>
          (
            (await api.get('/cluster/resources', { type: 'vm' })).body.data as { vmid: number; template: number }[]
          ).find((r) => r.vmid === 500)?.template,
        { timeout: 10_000 },
      )
      .toBe(1);
    expect(
      ((await api.get('/nodes/corral-1/qemu/501/status/current')).body.data as { template: number }).template,
    ).toBe(0);
  });
});
