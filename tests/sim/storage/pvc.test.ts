import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '@/sim/store/errors';
import { admitPvcUpdate } from '@/sim/storage';
import { S } from '@/sim/storage/keys';
import { eventsFor, type Harness, NS, phaseOf, pvc, startHarness, st, storageClass, waitFor } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function seedClasses(store: Harness['store']): void {
  store.create(S.storageClasses, storageClass('longhorn', { allowVolumeExpansion: true }, true));
  store.create(
    S.storageClasses,
    storageClass('local-path', { provisioner: 'rancher.io/local-path', volumeBindingMode: 'WaitForFirstConsumer' }),
  );
}

function setRequest(store: Harness['store'], name: string, size: string): void {
  store.mutate(S.pvcs, NS, name, (o) => {
    (o.spec as { resources: { requests: Record<string, string> } }).resources.requests.storage = size;
  });
}

describe('PVC binding', () => {
  it('binds an Immediate claim to a new PV pvc-<uid> with capacity and access modes, filling the default class', async () => {
    h = await startHarness({ seed: seedClasses });
    const created = h.store.create(S.pvcs, pvc('data', '10Gi'));
    const bound = await waitFor('bound', () => {
      const o = h!.store.get(S.pvcs, NS, 'data');
      return phaseOf(o) === 'Bound' ? o : undefined;
    });
    expect((bound.spec as Record<string, unknown>).storageClassName).toBe('longhorn');
    expect((bound.spec as Record<string, unknown>).volumeName).toBe(`pvc-${created.metadata.uid}`);
    expect(st(bound).capacity).toEqual({ storage: '10Gi' });
    expect(st(bound).accessModes).toEqual(['ReadWriteOnce']);
    const pv = h.store.get(S.pvs, undefined, `pvc-${created.metadata.uid}`);
    expect(pv?.spec).toMatchObject({
      capacity: { storage: '10Gi' },
      claimRef: { name: 'data', namespace: NS, uid: created.metadata.uid },
    });
    expect(eventsFor(h.store, 'data').map((e) => e.reason)).toContain('ProvisioningSucceeded');
  });

  it('keeps a WaitForFirstConsumer claim Pending until a scheduled pod uses it, then binds on that node', async () => {
    h = await startHarness({ seed: seedClasses });
    h.store.create(S.pvcs, pvc('local', '1Gi', 'local-path'));
    await waitFor('event', () => eventsFor(h!.store, 'local').some((e) => e.reason === 'WaitForFirstConsumer'));
    await new Promise((r) => setTimeout(r, 150));
    expect(phaseOf(h.store.get(S.pvcs, NS, 'local'))).toBe('Pending');
    h.store.create(S.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'user', namespace: NS },
      spec: {
        nodeName: 'node-1',
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'local' } }],
      },
    });
    const bound = await waitFor('bound', () => {
      const o = h!.store.get(S.pvcs, NS, 'local');
      return phaseOf(o) === 'Bound' ? o : undefined;
    });
    expect(bound.metadata.annotations?.['volume.kubernetes.io/selected-node']).toBe('node-1');
  });

  it('stays Pending with a Warning when the class does not exist', async () => {
    h = await startHarness({ seed: seedClasses });
    h.store.create(S.pvcs, pvc('orphan', '1Gi', 'nope'));
    await waitFor('event', () =>
      eventsFor(h!.store, 'orphan').find((e) => e.reason === 'ProvisioningFailed' && e.type === 'Warning'),
    );
    expect(phaseOf(h.store.get(S.pvcs, NS, 'orphan'))).toBe('Pending');
  });

  it('deletes the PV when the claim goes (reclaimPolicy Delete)', async () => {
    h = await startHarness({ seed: seedClasses });
    const created = h.store.create(S.pvcs, pvc('tmp', '1Gi'));
    await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'tmp')) === 'Bound');
    h.store.delete(S.pvcs, NS, 'tmp');
    await waitFor('pv gone', () => !h!.store.get(S.pvs, undefined, `pvc-${created.metadata.uid}`));
  });
});

describe('PVC expansion', () => {
  it('grows a bound claim of an expandable class: Resizing → FileSystemResizePending → new capacity, PV too', async () => {
    h = await startHarness({ seed: seedClasses });
    h.store.create(S.pvcs, pvc('grow', '10Gi'));
    await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'grow')) === 'Bound');
    setRequest(h.store, 'grow', '20Gi');
    const seen = new Set<string>();
    const done = await waitFor('resized', () => {
      const o = h!.store.get(S.pvcs, NS, 'grow');
      for (const c of (st(o).conditions as { type: string }[] | undefined) ?? []) seen.add(c.type);
      return (st(o).capacity as { storage?: string } | undefined)?.storage === '20Gi' ? o : undefined;
    });
    expect(seen).toEqual(new Set(['Resizing', 'FileSystemResizePending']));
    expect(st(done).conditions).toBeUndefined();
    const pv = h.store.get(S.pvs, undefined, String((done.spec as Record<string, unknown>).volumeName));
    expect((pv?.spec as { capacity: unknown }).capacity).toEqual({ storage: '20Gi' });
  });

  it('reverts growth on a class without allowVolumeExpansion and records a Warning', async () => {
    h = await startHarness({
      seed: (store) => store.create(S.storageClasses, storageClass('fixed', {}, true)),
    });
    h.store.create(S.pvcs, pvc('fixed', '10Gi'));
    await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'fixed')) === 'Bound');
    setRequest(h.store, 'fixed', '20Gi');
    await waitFor('reverted', () => {
      const o = h!.store.get(S.pvcs, NS, 'fixed');
      return (o?.spec as { resources: { requests: { storage: string } } }).resources.requests.storage === '10Gi';
    });
    const warning = eventsFor(h.store, 'fixed').find((e) => e.type === 'Warning');
    expect(warning?.message).toContain('only dynamically provisioned pvc can be resized');
    expect((st(h.store.get(S.pvcs, NS, 'fixed')).capacity as { storage: string }).storage).toBe('10Gi');
  });

  it('reverts shrinking below capacity', async () => {
    h = await startHarness({ seed: seedClasses });
    h.store.create(S.pvcs, pvc('shrink', '10Gi'));
    await waitFor('bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'shrink')) === 'Bound');
    setRequest(h.store, 'shrink', '5Gi');
    await waitFor('reverted', () => {
      const o = h!.store.get(S.pvcs, NS, 'shrink');
      return (o?.spec as { resources: { requests: { storage: string } } }).resources.requests.storage === '10Gi';
    });
  });

  it('admitPvcUpdate answers 403 Forbidden / 422 Invalid as the apiserver does', () => {
    const sc = {
      apiVersion: 'storage.k8s.io/v1',
      kind: 'StorageClass',
      metadata: { name: 'fixed', uid: 'u', resourceVersion: '1', creationTimestamp: '' },
    };
    const expandable = { ...sc, allowVolumeExpansion: true };
    const claim = (size: string) => ({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'x', namespace: NS, uid: 'p', resourceVersion: '1', creationTimestamp: '' },
      spec: { storageClassName: 'fixed', resources: { requests: { storage: size } } },
      status: { phase: 'Bound', capacity: { storage: '10Gi' } },
    });
    const grow = () => admitPvcUpdate(() => sc, claim('10Gi'), claim('20Gi'));
    expect(grow).toThrow(ApiError);
    try {
      grow();
    } catch (err) {
      expect((err as ApiError).code).toBe(403);
      expect((err as ApiError).reason).toBe('Forbidden');
    }
    expect(() => admitPvcUpdate(() => expandable, claim('10Gi'), claim('20Gi'))).not.toThrow();
    try {
      admitPvcUpdate(() => expandable, claim('10Gi'), claim('5Gi'));
      expect.unreachable();
    } catch (err) {
      expect((err as ApiError).code).toBe(422);
    }
  });
});
