import { afterEach, describe, expect, it } from 'vitest';
import type { KObject, NewObject } from '@/sim/store/types';
import { volumeSnapshotStatuses } from '@/sim/storage';
import { DISK_CONTENT_ANNOTATION, S } from '@/sim/storage/keys';
import { eventsFor, type Harness, NS, phaseOf, pvc, startHarness, st, storageClass, waitFor } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const MAC = '02:00:00:aa:bb:cc';

function seed(store: Harness['store'], options: { snapshotClass?: boolean; gates?: string[] } = {}): void {
  store.create(S.storageClasses, storageClass('longhorn', { allowVolumeExpansion: true }, true));
  if (options.snapshotClass !== false) {
    store.create(S.volumeSnapshotClasses, {
      apiVersion: 'snapshot.storage.k8s.io/v1',
      kind: 'VolumeSnapshotClass',
      metadata: { name: 'longhorn-snapshot' },
      driver: 'driver.longhorn.io',
      deletionPolicy: 'Delete',
    });
  }
  if (options.gates) {
    store.create(S.kubevirts, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'KubeVirt',
      metadata: { name: 'kubevirt', namespace: NS },
      spec: { configuration: { developerConfiguration: { featureGates: options.gates } } },
    });
  }
}

function vm(name: string, claim: string): NewObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: NS, labels: { app: 'web', 'corral.dev/tag.prod': '' }, annotations: { note: 'keep' } },
    spec: {
      runStrategy: 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/domain': name } },
        spec: {
          domain: {
            firmware: { uuid: '11111111-2222-3333-4444-555555555555' },
            devices: {
              disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }],
              interfaces: [{ name: 'default', masquerade: {}, macAddress: MAC }],
            },
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [
            { name: 'rootdisk', persistentVolumeClaim: { claimName: claim } },
            { name: 'cloudinitdisk', cloudInitNoCloud: { userData: '#cloud-config' } },
          ],
        },
      },
    },
  };
}

function startVmi(store: Harness['store'], name: string, claim: string): void {
  store.create(S.vmis, {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name, namespace: NS },
    spec: { volumes: [{ name: 'rootdisk', persistentVolumeClaim: { claimName: claim } }] },
    status: { phase: 'Running', nodeName: 'node-1' },
  });
}

async function vmWithDisk(name = 'web'): Promise<void> {
  h!.store.create(S.pvcs, pvc(`${name}-rootdisk`, '10Gi', 'longhorn'));
  await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, `${name}-rootdisk`)) === 'Bound');
  h!.store.mutate(S.pvcs, NS, `${name}-rootdisk`, (o) => {
    o.metadata.annotations = {
      ...o.metadata.annotations,
      [DISK_CONTENT_ANNOTATION]: 'http:https://example.org/web.img',
    };
  });
  h!.store.create(S.vms, vm(name, `${name}-rootdisk`));
}

function snapshot(name: string, vmName = 'web', extra: Record<string, unknown> = {}): NewObject {
  return {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineSnapshot',
    metadata: { name, namespace: NS },
    spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: vmName }, ...extra },
  };
}

function restore(name: string, snap: string, extra: Record<string, unknown> = {}): NewObject {
  return {
    apiVersion: 'snapshot.kubevirt.io/v1beta1',
    kind: 'VirtualMachineRestore',
    metadata: { name, namespace: NS },
    spec: {
      target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' },
      virtualMachineSnapshotName: snap,
      ...extra,
    },
  };
}

async function readySnapshot(name: string): Promise<KObject> {
  h!.store.create(S.vmSnapshots, snapshot(name));
  return waitFor('snapshot ready', () => {
    const o = h!.store.get(S.vmSnapshots, NS, name);
    return st(o).readyToUse === true ? o : undefined;
  });
}

function conditionOf(obj: KObject | undefined, type: string): Record<string, unknown> | undefined {
  return (st(obj).conditions as Record<string, unknown>[] | undefined)?.find((c) => c.type === type);
}

describe('VirtualMachineSnapshot', () => {
  it('captures content + one VolumeSnapshot per PVC volume and becomes Succeeded/readyToUse', async () => {
    h = await startHarness({ seed: (s) => seed(s, { gates: ['Snapshot'] }) });
    await vmWithDisk();
    const phases = new Set<unknown>();
    let sawLock = false;
    h.store.create(S.vmSnapshots, snapshot('before-upgrade'));
    const ready = await waitFor('ready', () => {
      const o = h!.store.get(S.vmSnapshots, NS, 'before-upgrade');
      if (phaseOf(o)) phases.add(phaseOf(o));
      if (st(h!.store.get(S.vms, NS, 'web')).snapshotInProgress === 'before-upgrade') sawLock = true;
      return st(o).readyToUse === true ? o : undefined;
    });
    expect(phases).toEqual(new Set(['InProgress', 'Succeeded']));
    expect(sawLock).toBe(true);
    expect(st(h.store.get(S.vms, NS, 'web')).snapshotInProgress).toBeUndefined();
    const uid = ready.metadata.uid;
    expect(st(ready)).toMatchObject({
      phase: 'Succeeded',
      virtualMachineSnapshotContentName: `vmsnapshot-content-${uid}`,
      snapshotVolumes: { includedVolumes: ['rootdisk'], excludedVolumes: ['cloudinitdisk'] },
      indications: [],
    });
    expect(conditionOf(ready, 'Ready')).toMatchObject({ status: 'True', reason: 'Operation complete' });
    const content = h.store.get(S.vmSnapshotContents, NS, `vmsnapshot-content-${uid}`);
    expect(content?.metadata.ownerReferences?.[0]?.uid).toBe(uid);
    expect(st(content).readyToUse).toBe(true);
    const vs = h.store.get(S.volumeSnapshots, NS, `vmsnapshot-${uid}-volume-rootdisk`);
    expect(vs?.spec).toEqual({
      source: { persistentVolumeClaimName: 'web-rootdisk' },
      volumeSnapshotClassName: 'longhorn-snapshot',
    });
    expect(st(vs)).toMatchObject({ readyToUse: true, restoreSize: '10Gi' });
    expect(vs?.metadata.ownerReferences?.[0]?.uid).toBe(content?.metadata.uid);
  });

  it('reports Online/NoGuestAgent for a running VM', async () => {
    h = await startHarness({ seed: (s) => seed(s) });
    await vmWithDisk();
    startVmi(h.store, 'web', 'web-rootdisk');
    const ready = await readySnapshot('online');
    expect(st(ready).indications).toEqual(['Online', 'NoGuestAgent']);
  });

  it('never becomes ready without a VolumeSnapshotClass and fails at the deadline', async () => {
    h = await startHarness({ seed: (s) => seed(s, { snapshotClass: false }) });
    await vmWithDisk();
    h.store.create(S.vmSnapshots, snapshot('nope', 'web', { failureDeadline: '10s' }));
    const failed = await waitFor('failed', () => {
      const o = h!.store.get(S.vmSnapshots, NS, 'nope');
      return phaseOf(o) === 'Failed' ? o : undefined;
    });
    expect(st(failed).readyToUse).toBe(false);
    expect(String((st(failed).error as { message: string }).message)).toContain('No VolumeSnapshotClass');
    const statuses = volumeSnapshotStatuses(h.store, h.store.get(S.vms, NS, 'web')!);
    expect(statuses).toEqual([
      {
        name: 'rootdisk',
        enabled: false,
        reason:
          'No VolumeSnapshotClass: Volume snapshots are not configured for this StorageClass [longhorn] [rootdisk]',
      },
      {
        name: 'cloudinitdisk',
        enabled: false,
        reason: 'Snapshot is not supported for this volumeSource type [cloudinitdisk]',
      },
    ]);
    expect(h.store.list(S.volumeSnapshots, NS)).toEqual([]);
  });

  it('fails when the Snapshot feature gate is off', async () => {
    h = await startHarness({ seed: (s) => seed(s, { gates: ['HotplugVolumes'] }) });
    await vmWithDisk();
    h.store.create(S.vmSnapshots, snapshot('gated'));
    const failed = await waitFor('failed', () => {
      const o = h!.store.get(S.vmSnapshots, NS, 'gated');
      return phaseOf(o) === 'Failed' ? o : undefined;
    });
    expect((st(failed).error as { message: string }).message).toContain('feature gate');
  });
});

describe('VirtualMachineRestore', () => {
  it('restores a stopped VM onto new PVCs from the snapshot and completes', async () => {
    h = await startHarness({ seed: (s) => seed(s) });
    await vmWithDisk();
    await readySnapshot('snap');
    // Change the VM after the snapshot; the restore must bring the old spec back.
    h.store.mutate(S.vms, NS, 'web', (o) => {
      ((o.spec as Record<string, unknown>).template as { spec: { domain: Record<string, unknown> } }).spec.domain.cpu =
        { cores: 8 };
    });
    const created = h.store.create(S.vmRestores, restore('r1', 'snap'));
    const done = await waitFor('complete', () => {
      const o = h!.store.get(S.vmRestores, NS, 'r1');
      return st(o).complete === true ? o : undefined;
    });
    const newClaim = `restore-${created.metadata.uid}-rootdisk`;
    expect(st(done).restores).toEqual([
      {
        volumeName: 'rootdisk',
        persistentVolumeClaim: newClaim,
        volumeSnapshotName: expect.stringMatching(/^vmsnapshot-.*-volume-rootdisk$/),
      },
    ]);
    expect(typeof st(done).restoreTime).toBe('string');
    expect(conditionOf(done, 'Ready')).toMatchObject({ status: 'True', reason: 'Operation complete' });
    const restored = h.store.get(S.vms, NS, 'web')!;
    const tmpl = (restored.spec as { template: { spec: { domain: Record<string, unknown>; volumes: unknown[] } } })
      .template.spec;
    expect(tmpl.domain.cpu).toBeUndefined();
    expect(tmpl.volumes[0]).toEqual({ name: 'rootdisk', persistentVolumeClaim: { claimName: newClaim } });
    expect(st(restored).restoreInProgress).toBeUndefined();
    const claim = h.store.get(S.pvcs, NS, newClaim);
    expect(phaseOf(claim)).toBe('Bound');
    expect(claim?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBe('http:https://example.org/web.img');
    expect((claim?.spec as Record<string, unknown>).dataSource).toMatchObject({ kind: 'VolumeSnapshot' });
    expect(eventsFor(h.store, 'r1').map((e) => e.reason)).toContain('VirtualMachineRestoreComplete');
  });

  it('refuses while the VM runs (FailImmediate) and waits then proceeds once it stops (default policy)', async () => {
    h = await startHarness({ seed: (s) => seed(s) });
    await vmWithDisk();
    await readySnapshot('snap');
    startVmi(h.store, 'web', 'web-rootdisk');
    h.store.create(S.vmRestores, restore('now', 'snap', { targetReadinessPolicy: 'FailImmediate' }));
    const refused = await waitFor('failed', () => {
      const o = h!.store.get(S.vmRestores, NS, 'now');
      return conditionOf(o, 'Failure')?.status === 'True' ? o : undefined;
    });
    expect(st(refused).complete).toBe(false);
    expect(String(conditionOf(refused, 'Failure')?.message)).toContain('must be stopped');

    h.store.create(S.vmRestores, restore('later', 'snap'));
    await waitFor(
      'waiting',
      () => conditionOf(h!.store.get(S.vmRestores, NS, 'later'), 'Ready')?.reason === 'Waiting for target to be ready',
    );
    expect(st(h.store.get(S.vmRestores, NS, 'later')).restores).toBeUndefined();
    h.store.delete(S.vmis, NS, 'web');
    await waitFor('complete', () => st(h!.store.get(S.vmRestores, NS, 'later')).complete === true);
  });
});

describe('VirtualMachineRestore patches', () => {
  it('applies spec.patches to the restored VM, and fails the restore for a patch that does not apply', async () => {
    h = await startHarness({ seed: (s) => seed(s) });
    await vmWithDisk();
    await readySnapshot('snap');
    h.store.create(
      S.vmRestores,
      restore('patched', 'snap', {
        patches: [JSON.stringify({ op: 'add', path: '/metadata/labels/restored', value: 'yes' })],
      }),
    );
    await waitFor('complete', () => st(h!.store.get(S.vmRestores, NS, 'patched')).complete === true);
    expect(h.store.get(S.vms, NS, 'web')?.metadata.labels?.restored).toBe('yes');
    h.store.create(
      S.vmRestores,
      restore('broken', 'snap', { patches: [JSON.stringify({ op: 'replace', path: '/spec/nope/deeper', value: 1 })] }),
    );
    const failed = await waitFor('failed', () => {
      const o = h!.store.get(S.vmRestores, NS, 'broken');
      return conditionOf(o, 'Failure')?.status === 'True' ? o : undefined;
    });
    expect(String(conditionOf(failed, 'Failure')?.message)).toContain('invalid spec.patches');
  });
});

describe('VirtualMachineClone', () => {
  it('creates a new Halted VM with new MACs and firmware UUID, filtered labels and copied disks', async () => {
    h = await startHarness({ seed: (s) => seed(s) });
    await vmWithDisk();
    h.store.create(S.vmClones, {
      apiVersion: 'clone.kubevirt.io/v1beta1',
      kind: 'VirtualMachineClone',
      metadata: { name: 'c1', namespace: NS },
      spec: {
        source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' },
        target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web-clone' },
        labelFilters: ['*', '!corral.dev/*'],
      },
    });
    const phases: unknown[] = [];
    const unsubscribe = h.store.subscribe((ev) => {
      if (ev.key === S.vmClones && phases.at(-1) !== phaseOf(ev.object)) phases.push(phaseOf(ev.object));
    });
    const done = await waitFor(
      'Succeeded',
      () => {
        const o = h!.store.get(S.vmClones, NS, 'c1');
        return phaseOf(o) === 'Succeeded' ? o : undefined;
      },
      15_000,
    );
    unsubscribe();
    expect(phases.filter(Boolean)).toEqual([
      'SnapshotInProgress',
      'CreatingTargetVM',
      'RestoreInProgress',
      'Succeeded',
    ]);
    expect(st(done).targetName).toBe('web-clone');
    const clone = h.store.get(S.vms, NS, 'web-clone')!;
    expect(clone.metadata.labels).toEqual({ app: 'web' });
    expect(clone.metadata.annotations).toEqual({ note: 'keep' });
    const spec = clone.spec as {
      runStrategy: string;
      template: {
        spec: {
          domain: { firmware: { uuid: string }; devices: { interfaces: { macAddress: string }[] } };
          volumes: { persistentVolumeClaim?: { claimName: string } }[];
        };
      };
    };
    expect(spec.runStrategy).toBe('Halted');
    expect(spec.template.spec.domain.devices.interfaces[0]?.macAddress).toMatch(/^02(:[0-9a-f]{2}){5}$/);
    expect(spec.template.spec.domain.devices.interfaces[0]?.macAddress).not.toBe(MAC);
    expect(spec.template.spec.domain.firmware.uuid).not.toBe('11111111-2222-3333-4444-555555555555');
    const claimName = spec.template.spec.volumes[0]?.persistentVolumeClaim?.claimName ?? '';
    expect(claimName).toMatch(/^restore-/);
    const claim = h.store.get(S.pvcs, NS, claimName);
    expect(claim?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBe('http:https://example.org/web.img');
    expect(claim?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'VirtualMachine', name: 'web-clone' });
    // The source is untouched and the temporaries are gone.
    expect(h.store.get(S.vms, NS, 'web')?.metadata.labels).toEqual({ app: 'web', 'corral.dev/tag.prod': '' });
    expect(h.store.get(S.vmSnapshots, NS, String(st(done).snapshotName))).toBeUndefined();
    expect(h.store.get(S.vmRestores, NS, String(st(done).restoreName))).toBeUndefined();
  });

  it('fails when the target already exists', async () => {
    h = await startHarness({ seed: (s) => seed(s) });
    await vmWithDisk();
    h.store.create(S.vms, vm('taken', 'web-rootdisk'));
    h.store.create(S.vmClones, {
      apiVersion: 'clone.kubevirt.io/v1beta1',
      kind: 'VirtualMachineClone',
      metadata: { name: 'c2', namespace: NS },
      spec: { source: { kind: 'VirtualMachine', name: 'web' }, target: { kind: 'VirtualMachine', name: 'taken' } },
    });
    await waitFor('Failed', () => phaseOf(h!.store.get(S.vmClones, NS, 'c2')) === 'Failed');
  });
});
