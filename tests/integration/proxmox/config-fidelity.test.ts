/**
 * Config answers real clients found wrong (issue 14): the agent flag must read the same in `…/config` and
 * `…/status/current` once a VM runs, and a VM sized by an instancetype shows that instancetype's memory and CPUs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_VMID } from '@/server/domain/labels';
import { agentEnabled } from '@/proxmox/vm-view';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
});
afterAll(async () => {
  await h?.close();
});

describe('agent', () => {
  it('reads the same in config and status/current once the VM runs (bpg-shaped create, then start)', async () => {
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 9301,
      name: 'agent-vm',
      memory: 512,
      scsi0: 'local-lvm:1',
      agent: 'enabled=1,fstrim_cloned_disks=0,type=virtio',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const read = async () => ({
      config: (await api.get('/nodes/corral-1/qemu/9301/config')).body.data as Record<string, unknown>,
      status: (await api.get('/nodes/corral-1/qemu/9301/status/current')).body.data as Record<string, unknown>,
    });
    // Stopped: the client's setting, and status/current says an agent is configured.
    const stopped = await read();
    expect(stopped.config.agent).toBe('enabled=1,fstrim_cloned_disks=0,type=virtio');
    expect(stopped.status.agent).toBe(1);
    const start = await api.post('/nodes/corral-1/qemu/9301/status/start');
    expect((await waitTask(api, start.body.data as string)).exitstatus).toBe('OK');
    await expect.poll(async () => (await read()).status.status, { timeout: 10_000 }).toBe('running');
    // Running with a guest that has no agent: both say no agent (bpg would otherwise wait 15 minutes per read).
    const running = await read();
    expect(typeof running.config.agent).toBe('string');
    expect(agentEnabled(String(running.config.agent))).toBe(running.status.agent === 1);
  });
});

describe('instancetype-sized VMs', () => {
  it("report the instancetype's memory (MiB) and CPUs in config", async () => {
    await h.corral.cluster.create('VirtualMachine', {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'sized', namespace: 'tailvm', labels: { [LABEL_VMID]: '9302' } },
      spec: {
        runStrategy: 'Halted',
        instancetype: { kind: 'VirtualMachineClusterInstancetype', name: 'cx1.2xlarge' },
        template: {
          spec: {
            domain: { devices: { disks: [{ name: 'root', disk: { bus: 'virtio' } }] } },
            volumes: [{ name: 'root', containerDisk: { image: 'quay.io/containerdisks/fedora:40' } }],
          },
        },
      },
    });
    await expect
      .poll(async () => (await api.get('/nodes/corral-1/qemu/9302/config')).status, { timeout: 10_000 })
      .toBe(200);
    const config = (await api.get('/nodes/corral-1/qemu/9302/config')).body.data as Record<string, unknown>;
    // cx1.2xlarge: 8 vCPUs, 16Gi.
    expect(config).toMatchObject({ memory: '16384', cores: 8, sockets: 1 });
  });
});
