/**
 * Start on boot through both front doors: Proxmox's `onboot` is the domain's start on boot, i.e. the run strategy.
 * Set through /api2/json it shows in /api's Options (`/hardware` → options), set through /api it shows as `onboot`
 * in the PVE config, and neither door starts or stops the VM to say so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
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

type Options = { runStrategy: string; startOnBoot: boolean };

describe('onboot is start on boot (the run strategy)', () => {
  const api = () => px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  const config = async (vmid: number) =>
    (await api().get(`/nodes/corral-1/qemu/${vmid}/config`)).body.data as Record<string, unknown>;
  const status = async (vmid: number) =>
    ((await api().get(`/nodes/corral-1/qemu/${vmid}/status/current`)).body.data as { status: string }).status;
  const options = async (name: string) =>
    ((await rest('GET', `/vms/tailvm/${name}/hardware`)).body as { options: Options }).options;
  const put = async (vmid: number, body: Record<string, string | number>) => {
    const res = await api().put(`/nodes/corral-1/qemu/${vmid}/config`, body);
    expect(res.status).toBe(200);
  };
  const post = async (vmid: number, body: Record<string, string | number>) => {
    const res = await api().post(`/nodes/corral-1/qemu/${vmid}/config`, body);
    expect(res.status).toBe(200);
    if (res.body.data) expect((await waitTask(api(), res.body.data as string)).exitstatus).toBe('OK');
  };
  const create = async (vmid: number, name: string, extra: Record<string, string | number>) => {
    const res = await api().post('/nodes/corral-1/qemu', { vmid, name, memory: 256, ...extra });
    expect((await waitTask(api(), res.body.data as string)).exitstatus).toBe('OK');
  };
  const power = async (vmid: number, verb: 'start' | 'stop') => {
    const res = await api().post(`/nodes/corral-1/qemu/${vmid}/status/${verb}`, {});
    expect((await waitTask(api(), res.body.data as string)).exitstatus).toBe('OK');
  };

  it('creates with onboot=1 and start=1 as Always, then onboot=0 on the running VM is Manual and keeps it up', async () => {
    await create(630, 'boot-a', { onboot: 1, start: 1 });
    await expect.poll(() => status(630), { timeout: 20_000 }).toBe('running');
    expect(await options('boot-a')).toMatchObject({ runStrategy: 'Always', startOnBoot: true });
    expect((await config(630)).onboot).toBe(1);

    await post(630, { onboot: 0 });
    expect(await options('boot-a')).toMatchObject({ runStrategy: 'Manual', startOnBoot: false });
    expect((await config(630)).onboot).toBe(0);
    expect(await status(630)).toBe('running');

    // Corral's Options → Proxmox's onboot.
    expect((await rest('POST', '/vms/tailvm/boot-a/options', { runStrategy: 'Always' })).status).toBe(200);
    await expect.poll(async () => (await config(630)).onboot, { timeout: 10_000 }).toBe(1);

    // Stopping does not lose it: KubeVirt's stop turns Always into Halted, which starts as Always again.
    await power(630, 'stop');
    await expect.poll(async () => (await options('boot-a')).runStrategy, { timeout: 10_000 }).toBe('Halted');
    expect((await config(630)).onboot).toBe(1);
    expect((await options('boot-a')).startOnBoot).toBe(true);
    await power(630, 'start');
    await expect.poll(() => status(630), { timeout: 20_000 }).toBe('running');
    expect(await options('boot-a')).toMatchObject({ runStrategy: 'Always', startOnBoot: true });
  });

  it('changes onboot of a stopped VM without starting it, and the next start honours it', async () => {
    await create(631, 'boot-b', {});
    // PVE's default is onboot 0: a Proxmox-made VM is Manual, so starting it keeps it that way.
    expect(await options('boot-b')).toMatchObject({ runStrategy: 'Manual', startOnBoot: false });
    expect((await config(631)).onboot).toBe(0);

    await put(631, { onboot: 1 });
    await expect.poll(async () => (await config(631)).onboot, { timeout: 10_000 }).toBe(1);
    expect(await options('boot-b')).toMatchObject({ runStrategy: 'Halted', startOnBoot: true });
    // Still stopped a while later: nothing started it.
    await new Promise((r) => setTimeout(r, 500));
    expect(await status(631)).toBe('stopped');

    await put(631, { delete: 'onboot' });
    await expect.poll(async () => (await config(631)).onboot, { timeout: 10_000 }).toBe(0);
    expect(await options('boot-b')).toMatchObject({ runStrategy: 'Manual', startOnBoot: false });
    await power(631, 'start');
    await expect.poll(() => status(631), { timeout: 20_000 }).toBe('running');
    expect((await config(631)).onboot).toBe(0);

    await power(631, 'stop');
    await put(631, { onboot: 1 });
    await expect.poll(async () => (await config(631)).onboot, { timeout: 10_000 }).toBe(1);
    await power(631, 'start');
    await expect.poll(() => status(631), { timeout: 20_000 }).toBe('running');
    expect(await options('boot-b')).toMatchObject({ runStrategy: 'Always', startOnBoot: true });
    expect((await config(631)).onboot).toBe(1);
  });

  it('gives a clone its source onboot, as PVE copies it', async () => {
    const clone = async (vmid: number, newid: number, name: string) => {
      const res = await api().post(`/nodes/corral-1/qemu/${vmid}/clone`, { newid, name });
      expect((await waitTask(api(), res.body.data as string)).exitstatus).toBe('OK');
    };
    await create(633, 'boot-src', {});
    await clone(633, 634, 'boot-off');
    expect(await options('boot-off')).toMatchObject({ runStrategy: 'Manual', startOnBoot: false });
    expect((await config(634)).onboot).toBe(0);
    await put(633, { onboot: 1 });
    await clone(633, 635, 'boot-on');
    expect(await options('boot-on')).toMatchObject({ runStrategy: 'Halted', startOnBoot: true });
    expect((await config(635)).onboot).toBe(1);
    expect(await status(635)).toBe('stopped');
  });

  it('creates with start=1 and no onboot as a running Manual VM', async () => {
    await create(632, 'boot-c', { start: 1 });
    await expect.poll(() => status(632), { timeout: 20_000 }).toBe('running');
    expect(await options('boot-c')).toMatchObject({ runStrategy: 'Manual', startOnBoot: false });
    expect((await config(632)).onboot).toBe(0);
    expect((await api().put('/nodes/corral-1/qemu/632/config', { onboot: 'maybe' })).status).toBe(400);
  });
});
