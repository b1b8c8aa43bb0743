/**
 * A VM whose disk is a DataVolume on a WaitForFirstConsumer class: KubeVirt creates the VMI so its launcher pod
 * becomes the claim's first consumer (the PVC binds, then CDI imports), but the VMI must not run before the
 * DataVolume has Succeeded — the guest would boot from a half-written disk.
 */
import { afterEach, expect, it } from 'vitest';
import { K } from '@/sim/kubevirt/keys';
import type { KObject } from '@/sim/store/types';
import { createVm, eventually, startHarness, vmBody, type Harness } from './harness';

const GOOD_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cluster.close();
  h = undefined;
});

function phase(obj: KObject | undefined): string | undefined {
  return (obj?.status as { phase?: string } | undefined)?.phase;
}

it('keeps the VMI from Running until its WaitForFirstConsumer DataVolume has Succeeded', async () => {
  h = await startHarness({ speed: 10 });
  const store = h.cluster.store;
  store.create(K.storageClasses, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: 'local-wffc' },
    provisioner: 'driver.longhorn.io',
    reclaimPolicy: 'Delete',
    volumeBindingMode: 'WaitForFirstConsumer',
  });
  const body = vmBody('wffc', { namespace: 'default' });
  body.spec.template.spec.volumes[0] = { name: 'rootdisk', dataVolume: { name: 'wffc-root' } };
  body.spec.dataVolumeTemplates = [
    {
      metadata: { name: 'wffc-root' },
      spec: {
        source: { http: { url: GOOD_URL } },
        storage: { storageClassName: 'local-wffc', resources: { requests: { storage: '10Gi' } } },
      },
    },
  ];
  await createVm(h, body);

  const dvPhases = new Set<string>();
  let ranEarly = false;
  const sample = setInterval(() => {
    const dvPhase = phase(store.get(K.dataVolumes, 'default', 'wffc-root'));
    if (dvPhase) dvPhases.add(dvPhase);
    if (phase(store.get(K.vmis, 'default', 'wffc')) === 'Running' && dvPhase !== 'Succeeded') ranEarly = true;
  }, 5);
  try {
    await eventually(() => expect(phase(store.get(K.vmis, 'default', 'wffc'))).toBe('Running'), 30_000);
  } finally {
    clearInterval(sample);
  }
  expect(dvPhases).toContain('WaitForFirstConsumer');
  expect(dvPhases).toContain('ImportInProgress');
  expect(ranEarly).toBe(false);
  expect(phase(store.get(K.dataVolumes, 'default', 'wffc-root'))).toBe('Succeeded');
}, 40_000);
