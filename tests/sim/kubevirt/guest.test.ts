import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createVm,
  eventually,
  getVm,
  getVmi,
  rawGet,
  startHarness,
  verb,
  vmBody,
  waitForStatus,
  type Harness,
  type Wire,
} from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await createVm(h, vmBody('fed', { image: 'quay.io/containerdisks/fedora:42' }));
  await createVm(h, vmBody('tiny', { image: 'quay.io/containerdisks/cirros:6.2' }));
  await waitForStatus(h, 'tailvm', 'fed', 'Running');
  await waitForStatus(h, 'tailvm', 'tiny', 'Running');
});
afterAll(async () => {
  await h.cluster.close();
});

describe('guest agent', () => {
  it('connects for images that ship qemu-guest-agent and answers guestosinfo, userlist and filesystemlist', async () => {
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'fed');
      expect(vmi.status.conditions.find((c: Wire) => c.type === 'AgentConnected')).toMatchObject({ status: 'True' });
    });
    const vmi = await getVmi(h, 'tailvm', 'fed');
    expect(vmi.status.guestOSInfo).toMatchObject({ id: 'fedora', versionId: '42' });
    expect(vmi.status.interfaces[0]).toMatchObject({ interfaceName: 'eth0', infoSource: 'domain, guest-agent' });
    const vm = await getVm(h, 'tailvm', 'fed');
    expect(vm.status.conditions.find((c: Wire) => c.type === 'AgentConnected')).toMatchObject({ status: 'True' });

    const info = await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'guestosinfo', undefined, 'GET');
    expect(info.status).toBe(200);
    expect(info.json).toMatchObject({
      hostname: 'fed',
      os: { id: 'fedora', prettyName: 'Fedora Linux 42 (Cloud Edition)' },
      guestAgentVersion: '9.2.0',
    });
    const users = await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'userlist', undefined, 'GET');
    expect(users.status).toBe(200);
    expect(users.json?.items[0]).toMatchObject({ userName: 'fedora' });
    const fs = await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'filesystemlist', undefined, 'GET');
    expect(fs.status).toBe(200);
    expect(fs.json?.items[0]).toMatchObject({ mountPoint: '/', fileSystemType: 'btrfs' });
    expect(fs.json?.items[0].totalBytes).toBeGreaterThan(fs.json?.items[0].usedBytes);
  });

  it('CirrOS has no agent: the agent verbs fail with 500 like virt-api', async () => {
    await new Promise((r) => setTimeout(r, 1200)); // longer than any agent connect delay at speed 50
    const vmi = await getVmi(h, 'tailvm', 'tiny');
    expect(vmi.status.conditions.find((c: Wire) => c.type === 'AgentConnected')).toBeUndefined();
    for (const action of ['guestosinfo', 'userlist', 'filesystemlist']) {
      const res = await verb(h, 'virtualmachineinstances', 'tailvm', 'tiny', action, undefined, 'GET');
      expect(res.status).toBe(500);
      expect(res.json?.message).toBe(
        'Operation cannot be fulfilled on virtualmachineinstance.kubevirt.io "tiny": VMI does not have guest agent connected',
      );
    }
  });

  it('freezes and thaws filesystems through the agent and survives a soft reboot', async () => {
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'freeze', {})).status).toBe(200);
    expect(
      (await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'guestosinfo', undefined, 'GET')).json?.fsFreezeStatus,
    ).toBe('frozen');
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'unfreeze', {})).status).toBe(200);
    expect(
      (await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'guestosinfo', undefined, 'GET')).json?.fsFreezeStatus,
    ).toBe('thawed');
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'tiny', 'freeze', {})).status).toBe(409);

    const uid = (await getVmi(h, 'tailvm', 'fed')).metadata.uid as string;
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'softreboot', {})).status).toBe(200);
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'guestosinfo', undefined, 'GET')).status).toBe(
      500,
    );
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'fed');
      expect(vmi.metadata.uid).toBe(uid);
      expect(vmi.status.conditions.find((c: Wire) => c.type === 'AgentConnected')).toMatchObject({ status: 'True' });
    });
  });

  it('the verbs only accept their method', async () => {
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'fed', 'guestosinfo', {}, 'PUT')).status).toBe(405);
    expect((await verb(h, 'virtualmachines', 'tailvm', 'fed', 'start', undefined, 'GET')).status).toBe(405);
  });
});

describe('metrics-server', () => {
  it('serves launcher pod metrics in n/Ki units that move over time', async () => {
    const path = '/apis/metrics.k8s.io/v1beta1/namespaces/tailvm/pods?labelSelector=vm.kubevirt.io%2Fname%3Dfed';
    const first = await eventually(async () => {
      const res = await rawGet(h, path);
      expect(res.status).toBe(200);
      expect(res.json.items).toHaveLength(1);
      return res.json.items[0] as Wire;
    });
    expect(first.metadata.labels['kubevirt.io']).toBe('virt-launcher');
    const compute = first.containers.find((c: Wire) => c.name === 'compute');
    expect(compute.usage.cpu).toMatch(/^\d+n$/);
    expect(compute.usage.memory).toMatch(/^\d+Ki$/);
    // Guest memory 1Gi: usage is 55–90 % of it plus the ~250 MiB launcher overhead.
    const ki = Number.parseInt(compute.usage.memory, 10);
    expect(ki).toBeGreaterThan(0.5 * 1024 * 1024);
    expect(ki).toBeLessThan(1.3 * 1024 * 1024);
    const samples = new Set<string>([compute.usage.cpu as string]);
    await eventually(async () => {
      const res = await rawGet(h, path);
      samples.add(res.json.items[0].containers.find((c: Wire) => c.name === 'compute').usage.cpu as string);
      expect(samples.size).toBeGreaterThan(2);
    }, 6000);
  });

  it('node usage covers its pods plus system overhead', async () => {
    const vmi = await getVmi(h, 'tailvm', 'fed');
    const nodes = await rawGet(h, '/apis/metrics.k8s.io/v1beta1/nodes');
    expect(nodes.status).toBe(200);
    expect(nodes.json.items.map((n: Wire) => n.metadata.name).sort()).toEqual(['corral-1', 'corral-2', 'corral-3']);
    const node = nodes.json.items.find((n: Wire) => n.metadata.name === vmi.status.nodeName);
    expect(node.usage.cpu).toMatch(/^\d+n$/);
    // At least the 1.5 GiB system baseline plus the VM's launcher memory.
    expect(Number.parseInt(node.usage.memory, 10)).toBeGreaterThan(1.5 * 1024 * 1024 + 0.5 * 1024 * 1024);
  });
});
