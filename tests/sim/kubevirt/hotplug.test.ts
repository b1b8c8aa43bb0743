import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createVm,
  eventually,
  getVm,
  getVmi,
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
});
afterAll(async () => {
  await h.cluster.close();
});

async function patchTemplate(name: string, domain: Wire): Promise<void> {
  await h.custom.patchNamespacedCustomObject(
    {
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'tailvm',
      plural: 'virtualmachines',
      name,
      body: { spec: { template: { spec: { domain } } } },
    },
    setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
  );
}

function condition(obj: Wire, type: string): Wire | undefined {
  return (obj.status?.conditions as Wire[] | undefined)?.find((c) => c.type === type);
}

describe('CPU and memory live updates (vmRolloutStrategy LiveUpdate)', () => {
  it('hot-plugs CPU sockets within maxSockets without a restart', async () => {
    await createVm(h, vmBody('cpu', { sockets: 1 }));
    await waitForStatus(h, 'tailvm', 'cpu', 'Running');
    const uid = (await getVmi(h, 'tailvm', 'cpu')).metadata.uid as string;
    expect((await getVmi(h, 'tailvm', 'cpu')).spec.domain.cpu.maxSockets).toBe(4);
    await patchTemplate('cpu', { cpu: { sockets: 3 } });
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'cpu');
      expect(vmi.metadata.uid).toBe(uid);
      expect(vmi.spec.domain.cpu.sockets).toBe(3);
      expect(vmi.status.currentCPUTopology.sockets).toBe(3);
      expect(condition(vmi, 'HotVCPUChange')).toBeUndefined();
    });
    const vm = await getVm(h, 'tailvm', 'cpu');
    expect(condition(vm, 'RestartRequired')).toBeUndefined();
    expect(vm.status.observedGeneration).toBe(vm.status.desiredGeneration);
  });

  it('needs a restart beyond maxSockets, and the restart applies it', async () => {
    await patchTemplate('cpu', { cpu: { sockets: 8 } });
    const vm = await eventually(async () => {
      const v = await getVm(h, 'tailvm', 'cpu');
      expect(condition(v, 'RestartRequired')).toMatchObject({
        status: 'True',
        message: "CPU sockets updated in template spec to a value higher than what's available",
      });
      return v;
    });
    expect(vm.status.observedGeneration).toBeLessThan(vm.status.desiredGeneration);
    expect((await getVmi(h, 'tailvm', 'cpu')).spec.domain.cpu.sockets).toBe(3);
    expect((await verb(h, 'virtualmachines', 'tailvm', 'cpu', 'restart', {})).status).toBe(202);
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'cpu');
      expect(vmi.status.phase).toBe('Running');
      expect(vmi.spec.domain.cpu.sockets).toBe(8);
      const v = await getVm(h, 'tailvm', 'cpu');
      expect(condition(v, 'RestartRequired')).toBeUndefined();
    });
  });

  it('flags a change of cores as not live-updatable', async () => {
    await patchTemplate('cpu', { cpu: { cores: 2 } });
    await eventually(async () => {
      expect(condition(await getVm(h, 'tailvm', 'cpu'), 'RestartRequired')).toMatchObject({
        message: 'a non-live-updatable field was changed in the template spec',
      });
    });
  });

  it('hot-plugs guest memory of a live-migratable VM', async () => {
    await createVm(h, vmBody('mem', { memory: '1Gi' }));
    await waitForStatus(h, 'tailvm', 'mem', 'Running');
    await patchTemplate('mem', { memory: { guest: '2Gi' } });
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'mem');
      expect(vmi.spec.domain.memory.guest).toBe('2Gi');
      expect(vmi.status.memory).toMatchObject({ guestAtBoot: '1Gi', guestCurrent: '2Gi', guestRequested: '2Gi' });
    });
    expect(condition(await getVm(h, 'tailvm', 'mem'), 'RestartRequired')).toBeUndefined();
    await patchTemplate('mem', { memory: { guest: '512Mi' } });
    await eventually(async () => {
      expect(condition(await getVm(h, 'tailvm', 'mem'), 'RestartRequired')?.message).toContain(
        'lower than the guest memory at boot',
      );
    });
  });
});

describe('volume hot-plug', () => {
  it('attaches a PVC through addvolume with an hp-volume pod and detaches it through removevolume', async () => {
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: 'tailvm',
      body: {
        metadata: { name: 'hp-disk' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'longhorn',
          resources: { requests: { storage: '2Gi' } },
        },
      },
    });
    await createVm(h, vmBody('disks'));
    await waitForStatus(h, 'tailvm', 'disks', 'Running');
    const options = {
      name: 'extra',
      disk: { disk: { bus: 'virtio' } },
      volumeSource: { persistentVolumeClaim: { claimName: 'hp-disk' } },
    };
    const add = await verb(h, 'virtualmachines', 'tailvm', 'disks', 'addvolume', options);
    expect(add.status).toBe(202);
    const vm = await getVm(h, 'tailvm', 'disks');
    expect(vm.spec.template.spec.volumes).toContainEqual({
      name: 'extra',
      persistentVolumeClaim: { claimName: 'hp-disk', hotpluggable: true },
    });
    expect(vm.spec.template.spec.domain.devices.disks).toContainEqual({ name: 'extra', disk: { bus: 'scsi' } });
    const entry = await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'disks');
      const status = (vmi.status.volumeStatus as Wire[]).find((v) => v.name === 'extra');
      expect(status).toMatchObject({
        phase: 'Ready',
        reason: 'VolumeReady',
        message: 'Successfully attach hotplugged volume extra to VM',
      });
      return status!;
    });
    expect(entry.target).toMatch(/^sd[a-z]$/);
    expect(entry.hotplugVolume.attachPodName).toMatch(/^hp-volume-[a-z0-9]{5}$/);
    const hp = await h.core.readNamespacedPod({
      namespace: 'tailvm',
      name: entry.hotplugVolume.attachPodName as string,
    });
    expect(hp.spec?.nodeName).toBe((await getVmi(h, 'tailvm', 'disks')).status.nodeName);
    expect(condition(await getVm(h, 'tailvm', 'disks'), 'RestartRequired')).toBeUndefined();

    const dup = await verb(h, 'virtualmachines', 'tailvm', 'disks', 'addvolume', options);
    expect(dup.status).toBe(409);
    expect(dup.json?.message).toContain('Unable to add volume [extra] because volume with that name already exists');
    const noName = await verb(h, 'virtualmachines', 'tailvm', 'disks', 'addvolume', { disk: {}, volumeSource: {} });
    expect(noName.status).toBe(400);
    expect(noName.json?.message).toBe('AddVolumeOptions requires name to be set');
    const root = await verb(h, 'virtualmachines', 'tailvm', 'disks', 'removevolume', { name: 'rootdisk' });
    expect(root.status).toBe(409);
    expect(root.json?.message).toContain('Unable to remove volume [rootdisk] because it is not hotpluggable');
    const missing = await verb(h, 'virtualmachines', 'tailvm', 'disks', 'removevolume', { name: 'nope' });
    expect(missing.json?.message).toContain('Unable to remove volume [nope] because it does not exist');

    expect((await verb(h, 'virtualmachines', 'tailvm', 'disks', 'removevolume', { name: 'extra' })).status).toBe(202);
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'disks');
      expect((vmi.status.volumeStatus as Wire[]).some((v) => v.name === 'extra')).toBe(false);
      expect(vmi.spec.volumes.some((v: Wire) => v.name === 'extra')).toBe(false);
      const pods = await h.core.listNamespacedPod({ namespace: 'tailvm', labelSelector: 'kubevirt.io=hotplug-disk' });
      expect(pods.items).toHaveLength(0);
    });
  });
});
