/**
 * Deleting a DataVolume mid-import must not leave its PVC Terminating forever: CDI deletes the importer pod of a
 * PVC that is being deleted, so pvc-protection (held while a pod uses the claim) can let go. Runs the whole
 * embedded cluster so the garbage collector and PVC protection take part.
 */
import { afterEach, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { S } from '@/sim/storage/keys';
import { waitFor } from './harness';

/** Unreachable: the importer keeps crash-looping, so the import never ends by itself. */
const UNRESOLVABLE_URL = 'https://images.corral.invalid/disk.qcow2';
const NS = 'default';

let cluster: EmbeddedCluster | undefined;
afterEach(async () => {
  await cluster?.close();
  cluster = undefined;
});

it('removes the importer pod and the PVC when a DataVolume is deleted mid-import', async () => {
  cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 50 });
  const store = cluster.store;
  store.create(S.dataVolumes, {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: { name: 'stuck', namespace: NS },
    spec: { source: { http: { url: UNRESOLVABLE_URL } }, storage: { resources: { requests: { storage: '1Gi' } } } },
  });
  await waitFor('the importer pod', () => store.get(S.pods, NS, 'importer-stuck'), 20_000);
  await waitFor(
    'the import to run',
    () =>
      (store.get(S.dataVolumes, NS, 'stuck')?.status as { phase?: string } | undefined)?.phase === 'ImportInProgress',
    20_000,
  );
  store.delete(S.dataVolumes, NS, 'stuck');
  await waitFor('the PVC to go', () => !store.get(S.pvcs, NS, 'stuck'), 20_000);
  expect(store.get(S.pods, NS, 'importer-stuck')).toBeUndefined();
});
