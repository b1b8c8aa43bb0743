import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createVm,
  eventually,
  getVm,
  getVmi,
  isGone,
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

function withRootVolume(name: string, volume: Wire, extra: Wire = {}): Wire {
  const body = vmBody(name);
  body.spec.template.spec.volumes[0] = { name: 'rootdisk', ...volume };
  Object.assign(body.spec, extra);
  return body;
}

describe('boot sources and sizing', () => {
  it('waits for a DataVolume from dataVolumeTemplates (Provisioning) and then runs', async () => {
    await createVm(
      h,
      withRootVolume(
        'imported',
        { dataVolume: { name: 'imported-root' } },
        {
          dataVolumeTemplates: [
            {
              metadata: { name: 'imported-root' },
              spec: {
                source: { registry: { url: 'docker://quay.io/containerdisks/debian:12' } },
                storage: { resources: { requests: { storage: '1Gi' } } },
              },
            },
          ],
        },
      ),
    );
    await waitForStatus(h, 'tailvm', 'imported', 'Provisioning');
    const dv = (await h.custom.getNamespacedCustomObject({
      group: 'cdi.kubevirt.io',
      version: 'v1beta1',
      namespace: 'tailvm',
      plural: 'datavolumes',
      name: 'imported-root',
    })) as Wire;
    expect(dv.metadata.ownerReferences[0]).toMatchObject({
      kind: 'VirtualMachine',
      name: 'imported',
      controller: true,
    });
    await waitForStatus(h, 'tailvm', 'imported', 'Running', 20_000);
    const events = (
      await h.core.listNamespacedEvent({ namespace: 'tailvm', fieldSelector: 'involvedObject.name=imported' })
    ).items;
    expect(events.find((e) => e.reason === 'SuccessfulDataVolumeCreate')?.message).toBe(
      'Created DataVolume imported-root',
    );
  });

  it('reports a missing PVC or DataVolume and creates no VMI', async () => {
    await createVm(h, withRootVolume('no-pvc', { persistentVolumeClaim: { claimName: 'absent' } }));
    await createVm(h, withRootVolume('no-dv', { dataVolume: { name: 'absent-dv' } }));
    await waitForStatus(h, 'tailvm', 'no-pvc', 'ErrorPvcNotFound');
    await waitForStatus(h, 'tailvm', 'no-dv', 'ErrorDataVolumeNotFound');
    expect(await isGone(getVmi(h, 'tailvm', 'no-pvc'))).toBe(true);
    expect(await isGone(getVmi(h, 'tailvm', 'no-dv'))).toBe(true);
    // The PVC appearing unblocks the VM.
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: 'tailvm',
      body: {
        metadata: { name: 'absent' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'longhorn',
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    await waitForStatus(h, 'tailvm', 'no-pvc', 'Running', 15_000);
  });

  it('shows ErrImagePull for a containerDisk that cannot be pulled', async () => {
    await createVm(h, vmBody('badimage', { image: 'quay.io/containerdisks/does-not-exist:1' }));
    const vm = await eventually(async () => {
      const v = await getVm(h, 'tailvm', 'badimage');
      expect(['ErrImagePull', 'ImagePullBackOff']).toContain(v.status?.printableStatus);
      return v;
    });
    expect(vm.status.conditions.find((c: Wire) => c.type === 'Synchronized')).toMatchObject({ status: 'False' });
  });

  it('sizes the VMI from the instancetype and expands the spec', async () => {
    const body = vmBody('typed');
    delete body.spec.template.spec.domain.cpu;
    delete body.spec.template.spec.domain.memory;
    body.spec.instancetype = { kind: 'VirtualMachineClusterInstancetype', name: 'u1.medium' };
    body.spec.preference = { kind: 'VirtualMachineClusterPreference', name: 'fedora' };
    await createVm(h, body);
    await waitForStatus(h, 'tailvm', 'typed', 'Running');
    const vmi = await getVmi(h, 'tailvm', 'typed');
    expect(vmi.spec.domain.cpu).toMatchObject({ sockets: 1, cores: 1, threads: 1, maxSockets: 4 });
    expect(vmi.spec.domain.memory).toMatchObject({ guest: '4Gi', maxGuest: '16Gi' });
    const pod = (await h.core.listNamespacedPod({ namespace: 'tailvm', labelSelector: 'vm.kubevirt.io/name=typed' }))
      .items[0]!;
    expect(pod.spec?.containers[0]?.resources?.requests).toEqual({ cpu: '100m', memory: '4346Mi' });
    const expanded = await verb(h, 'virtualmachines', 'tailvm', 'typed', 'expand-spec', undefined, 'GET');
    expect(expanded.status).toBe(200);
    expect(expanded.json?.spec.instancetype).toBeUndefined();
    expect(expanded.json?.spec.template.spec.domain.memory.guest).toBe('4Gi');
  });

  it('refuses to start a VM whose instancetype does not exist', async () => {
    const body = vmBody('untyped');
    body.spec.instancetype = { name: 'z9.gigantic' };
    await createVm(h, body);
    const vm = await eventually(async () => {
      const v = await getVm(h, 'tailvm', 'untyped');
      expect(v.status?.conditions?.find((c: Wire) => c.type === 'Failure')).toMatchObject({
        status: 'True',
        reason: 'FailedCreate',
      });
      return v;
    });
    expect(vm.status.conditions.find((c: Wire) => c.type === 'Failure').message).toBe(
      'virtualmachineclusterinstancetypes.instancetype.kubevirt.io "z9.gigantic" not found',
    );
    expect(await isGone(getVmi(h, 'tailvm', 'untyped'))).toBe(true);
  });

  it('reports a malformed guest memory quantity instead of starting', async () => {
    await createVm(h, vmBody('typo', { memory: 'lots' }));
    await eventually(async () => {
      const v = await getVm(h, 'tailvm', 'typo');
      expect(v.status?.conditions?.find((c: Wire) => c.type === 'Failure')?.message).toContain(
        'spec.template.spec.domain.memory.guest: Invalid value: "lots"',
      );
    });
    expect(await isGone(getVmi(h, 'tailvm', 'typo'))).toBe(true);
  });
});
