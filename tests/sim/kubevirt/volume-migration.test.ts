/**
 * The embedded cluster's volume migration: a running VM with `updateVolumesStrategy: Migration` whose template swaps
 * the claim behind a volume keeps its VMI, which KubeVirt points at the new claim while a workload-update migration
 * copies the data; without the strategy, or with a gate off, the same edit only sets RestartRequired.
 */
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createVm,
  eventually,
  getVm,
  getVmi,
  startHarness,
  vmBody,
  waitForStatus,
  type Harness,
  type Wire,
} from './harness.js';

const CONTENT = 'sim.corral.dev/disk-content';
const INTEL = { 'cpu-vendor.node.kubevirt.io/Intel': 'true' };
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

async function claim(name: string, content?: string): Promise<void> {
  await h.core.createNamespacedPersistentVolumeClaim({
    namespace: 'tailvm',
    body: {
      metadata: { name, ...(content ? { annotations: { [CONTENT]: content } } : {}) },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'longhorn',
        resources: { requests: { storage: '1Gi' } },
      },
    },
  });
  await eventually(async () =>
    expect((await h.core.readNamespacedPersistentVolumeClaim({ namespace: 'tailvm', name })).status?.phase).toBe(
      'Bound',
    ),
  );
}

async function swap(vm: string, to: string, strategy?: string): Promise<void> {
  const current = await getVm(h, 'tailvm', vm);
  const volumes = (current.spec.template.spec.volumes as Wire[]).map((v) =>
    v.name === 'data' ? { name: 'data', persistentVolumeClaim: { claimName: to } } : v,
  );
  await h.custom.patchNamespacedCustomObject(
    {
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'tailvm',
      plural: 'virtualmachines',
      name: vm,
      body: { spec: { ...(strategy ? { updateVolumesStrategy: strategy } : {}), template: { spec: { volumes } } } },
    },
    merge,
  );
}

async function setDisabledGates(gates: string[]): Promise<void> {
  await h.custom.patchNamespacedCustomObject(
    {
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'kubevirt',
      plural: 'kubevirts',
      name: 'kubevirt',
      body: { spec: { configuration: { developerConfiguration: { disabledFeatureGates: gates } } } },
    },
    merge,
  );
}

const dataClaim = (vmi: Wire) =>
  (vmi.spec.volumes as Wire[]).find((v) => v.name === 'data')?.persistentVolumeClaim?.claimName as string;
const condition = (obj: Wire, type: string) =>
  (obj.status?.conditions as Wire[] | undefined)?.find((c) => c.type === type);
async function workloadMigrations(vmi: string): Promise<Wire[]> {
  const list = (await h.custom.listNamespacedCustomObject({
    group: 'kubevirt.io',
    version: 'v1',
    namespace: 'tailvm',
    plural: 'virtualmachineinstancemigrations',
  })) as Wire;
  return (list.items as Wire[]).filter(
    (m) => m.spec.vmiName === vmi && m.metadata.annotations?.['kubevirt.io/workloadUpdateMigration'] !== undefined,
  );
}

describe('volume migration (updateVolumesStrategy: Migration)', () => {
  it('moves a running VMI to the new claim through a migration, carrying the content, without a restart', async () => {
    await claim('vm-a-src', 'the guest wrote this');
    await claim('vm-a-dst');
    await createVm(h, vmBody('vm-a', { pvc: 'vm-a-src', nodeSelector: INTEL }));
    await waitForStatus(h, 'tailvm', 'vm-a', 'Running');
    const uid = (await getVmi(h, 'tailvm', 'vm-a')).metadata.uid as string;
    await swap('vm-a', 'vm-a-dst', 'Migration');
    const done = await eventually(async () => {
      const [m] = await workloadMigrations('vm-a');
      expect(m?.metadata.name).toMatch(/^kubevirt-workload-update-/);
      expect(m?.status?.phase).toBe('Succeeded');
      const vmi = await getVmi(h, 'tailvm', 'vm-a');
      expect(vmi.status.migratedVolumes).toBeUndefined();
      return vmi;
    }, 15_000);
    expect(done.metadata.uid).toBe(uid);
    expect(done.status.phase).toBe('Running');
    expect(dataClaim(done)).toBe('vm-a-dst');
    expect(condition(done, 'VolumesChange')).toBeUndefined();
    const dst = await h.core.readNamespacedPersistentVolumeClaim({ namespace: 'tailvm', name: 'vm-a-dst' });
    expect(dst.metadata?.annotations?.[CONTENT]).toBe('the guest wrote this');
    const vm = await getVm(h, 'tailvm', 'vm-a');
    expect(condition(vm, 'RestartRequired')).toBeUndefined();
    expect(vm.status.volumeUpdateState.volumeMigrationState.migratedVolumes).toEqual([
      {
        volumeName: 'data',
        sourcePVCInfo: { claimName: 'vm-a-src', volumeMode: 'Filesystem' },
        destinationPVCInfo: { claimName: 'vm-a-dst', volumeMode: 'Filesystem' },
      },
    ]);
  });

  it('without the strategy, or with the VolumeMigration gate off, a swapped claim only needs a restart', async () => {
    await claim('vm-b-src');
    await claim('vm-b-dst');
    await createVm(h, vmBody('vm-b', { pvc: 'vm-b-src', nodeSelector: INTEL }));
    await waitForStatus(h, 'tailvm', 'vm-b', 'Running');
    await swap('vm-b', 'vm-b-dst');
    await eventually(async () =>
      expect(condition(await getVm(h, 'tailvm', 'vm-b'), 'RestartRequired')?.message).toBe(
        'a non-live-updatable field was changed in the template spec',
      ),
    );
    expect(dataClaim(await getVmi(h, 'tailvm', 'vm-b'))).toBe('vm-b-src');

    await claim('vm-c-src');
    await claim('vm-c-dst');
    await createVm(h, vmBody('vm-c', { pvc: 'vm-c-src', nodeSelector: INTEL }));
    await waitForStatus(h, 'tailvm', 'vm-c', 'Running');
    await setDisabledGates(['VolumeMigration']);
    try {
      await swap('vm-c', 'vm-c-dst', 'Migration');
      await eventually(async () =>
        expect(condition(await getVm(h, 'tailvm', 'vm-c'), 'RestartRequired')?.message).toBe(
          'a non-live-updatable field was changed in the template spec: volume migration refused, the VolumeMigration feature gate is not enabled',
        ),
      );
    } finally {
      await setDisabledGates([]);
    }
    const vmi = await getVmi(h, 'tailvm', 'vm-c');
    expect(dataClaim(vmi)).toBe('vm-c-src');
    expect(vmi.status.migratedVolumes).toBeUndefined();
    expect(await workloadMigrations('vm-c')).toEqual([]);
  });
});
