/**
 * The VM controller's `status.volumeSnapshotStatuses` comes from the storage side, which knows which
 * StorageClasses have a VolumeSnapshotClass: a PVC on a class without one is not snapshot-able.
 */
import { afterEach, expect, it } from 'vitest';
import { createVm, eventually, getVm, startHarness, vmBody, type Harness } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cluster.close();
  h = undefined;
});

function claim(name: string, storageClassName: string) {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace: 'default' },
    spec: { accessModes: ['ReadWriteOnce'], storageClassName, resources: { requests: { storage: '1Gi' } } },
  };
}

it('marks a PVC volume on a class without a VolumeSnapshotClass as not snapshot-able', async () => {
  h = await startHarness();
  // The baseline install has a VolumeSnapshotClass for longhorn's driver only, none for nfs.
  await h.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('on-nfs', 'nfs') });
  await h.core.createNamespacedPersistentVolumeClaim({ namespace: 'default', body: claim('on-longhorn', 'longhorn') });
  await createVm(h, vmBody('nfs-vm', { namespace: 'default', runStrategy: 'Halted', pvc: 'on-nfs' }));
  await createVm(h, vmBody('lh-vm', { namespace: 'default', runStrategy: 'Halted', pvc: 'on-longhorn' }));
  await eventually(async () => {
    const nfs = await getVm(h!, 'default', 'nfs-vm');
    expect(nfs.status?.volumeSnapshotStatuses).toEqual([
      { name: 'rootdisk', enabled: false, reason: 'Snapshot is not supported for this volumeSource type [rootdisk]' },
      {
        name: 'data',
        enabled: false,
        reason: 'No VolumeSnapshotClass: Volume snapshots are not configured for this StorageClass [nfs] [data]',
      },
    ]);
    const longhorn = await getVm(h!, 'default', 'lh-vm');
    expect(longhorn.status?.volumeSnapshotStatuses).toEqual([
      { name: 'rootdisk', enabled: false, reason: 'Snapshot is not supported for this volumeSource type [rootdisk]' },
      { name: 'data', enabled: true },
    ]);
  });
});
