import { afterEach, describe, expect, it } from 'vitest';
import type { NewObject } from '@/sim/store/types';
import { CDI_ANN, DISK_CONTENT_ANNOTATION, EXPORT_BYTES_ANNOTATION, S } from '@/sim/storage/keys';
import { eventsFor, type Harness, NS, phaseOf, pvc, startHarness, st, storageClass, waitFor } from './harness';

/** The URLs docs/sim-storage.md promises: one that imports, two that never can. */
const GOOD_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';
const UNRESOLVABLE_URL = 'https://images.corral.invalid/disk.qcow2';
const NOT_FOUND_URL = 'https://cloud-images.ubuntu.com/404/disk.img';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function seed(store: Harness['store']): void {
  store.create(S.storageClasses, storageClass('longhorn', { allowVolumeExpansion: true }, true));
}

function dv(
  name: string,
  source: Record<string, unknown>,
  storage: Record<string, unknown> = { resources: { requests: { storage: '10Gi' } } },
): NewObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: { name, namespace: NS },
    spec: { source, storage },
  };
}

function progressOf(name: string): number {
  return Number.parseFloat(String(st(h!.store.get(S.dataVolumes, NS, name)).progress));
}

describe('DataVolume import', () => {
  it('imports from http: PVC owned by the DV, importer pod, rising progress, Succeeded at "100.0%"', async () => {
    h = await startHarness({ speed: 40, seed });
    const created = h.store.create(S.dataVolumes, dv('jammy', { http: { url: GOOD_URL } }));
    const phases: string[] = [];
    const progress: number[] = [];
    let sawImporter = false;
    const done = await waitFor(
      'Succeeded',
      () => {
        const o = h!.store.get(S.dataVolumes, NS, 'jammy');
        const phase = String(phaseOf(o));
        if (phases.at(-1) !== phase) phases.push(phase);
        const p = progressOf('jammy');
        if (phase === 'ImportInProgress' && Number.isFinite(p) && progress.at(-1) !== p) progress.push(p);
        if (h!.store.get(S.pods, NS, 'importer-jammy')) sawImporter = true;
        return phase === 'Succeeded' ? o : undefined;
      },
      20_000,
    );
    expect(phases).toEqual(expect.arrayContaining(['Pending', 'ImportScheduled', 'ImportInProgress', 'Succeeded']));
    expect(phases.indexOf('ImportScheduled')).toBeLessThan(phases.indexOf('ImportInProgress'));
    expect(progress.length).toBeGreaterThanOrEqual(3);
    expect([...progress].sort((a, b) => a - b)).toEqual(progress);
    expect(st(done).progress).toBe('100.0%');
    expect(sawImporter).toBe(true);
    expect(h.store.get(S.pods, NS, 'importer-jammy')).toBeUndefined();
    const conditions = Object.fromEntries(
      (st(done).conditions as { type: string; status: string }[]).map((c) => [c.type, c.status]),
    );
    expect(conditions).toEqual({ Bound: 'True', Ready: 'True', Running: 'False' });
    const claim = h.store.get(S.pvcs, NS, 'jammy');
    expect(claim?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'DataVolume',
      uid: created.metadata.uid,
      controller: true,
    });
    expect(claim?.metadata.annotations).toMatchObject({
      [CDI_ANN.endpoint]: GOOD_URL,
      [CDI_ANN.source]: 'http',
      [CDI_ANN.podPhase]: 'Succeeded',
      [DISK_CONTENT_ANNOTATION]: `http:${GOOD_URL}`,
    });
    expect(phaseOf(claim)).toBe('Bound');
    expect(eventsFor(h.store, 'jammy').map((e) => e.reason)).toEqual(
      expect.arrayContaining(['ImportScheduled', 'ImportInProgress', 'ImportSucceeded']),
    );
  });

  it('imports at the bandwidth the settings fix (importMiBps), not at the rate of the source', async () => {
    // The same image twice: at its own rate (40–150 MiB/s) a 0.5–1 GiB image takes at most 26 simulated seconds,
    // about 15 steps of 1–2 s; at 2 MiB/s it takes over 256 s, more than 128 steps. Count the steps of each.
    const steps = async (name: string): Promise<number> => {
      const seen = new Set<string>();
      const stop = h!.store.subscribe((ev) => {
        const o = ev.object;
        if (ev.key === S.dataVolumes && o.metadata.name === name && phaseOf(o) === 'ImportInProgress')
          seen.add(String(st(o).progress));
      });
      try {
        h!.store.create(S.dataVolumes, dv(name, { http: { url: GOOD_URL } }));
        await waitFor(
          `${name} Succeeded`,
          () => phaseOf(h!.store.get(S.dataVolumes, NS, name)) === 'Succeeded',
          30_000,
        );
      } finally {
        stop();
      }
      return seen.size;
    };
    h = await startHarness({ speed: 1000, seed });
    expect(await steps('own-rate')).toBeLessThanOrEqual(16);
    h.ctx.settings.importMiBps = 2;
    expect(await steps('fixed-rate')).toBeGreaterThan(100);
  });

  it.each([
    ['an unresolvable host', UNRESOLVABLE_URL, 'no such host'],
    ['a 404 path', NOT_FOUND_URL, '404 Not Found'],
  ])('never succeeds for %s: the importer restarts and Running=False reason Error', async (_what, url, text) => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.dataVolumes, dv('broken', { http: { url } }));
    // Wait for a moment between restarts (the importer runs again after its back-off, with Running=True).
    const failed = await waitFor(
      'a failed importer run',
      () => {
        const o = h!.store.get(S.dataVolumes, NS, 'broken');
        const running = (st(o).conditions as { type: string; status: string }[] | undefined)?.find(
          (c) => c.type === 'Running',
        );
        return Number(st(o).restartCount) >= 1 && running?.status === 'False' ? o : undefined;
      },
      20_000,
    );
    expect(phaseOf(failed)).toBe('ImportInProgress');
    const running = (
      st(failed).conditions as { type: string; status: string; reason?: string; message?: string }[]
    ).find((c) => c.type === 'Running');
    expect(running).toMatchObject({ status: 'False', reason: 'Error' });
    expect(running?.message).toContain(text);
    expect(st(failed).progress).toBe('N/A');
    expect(eventsFor(h.store, 'broken').some((e) => e.type === 'Warning' && e.message.includes(text))).toBe(true);
  });

  it('fails outright for a malformed URL', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.dataVolumes, dv('bad', { http: { url: 'ftp://example.com/x.img' } }));
    await waitFor('Failed', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'bad')) === 'Failed');
    expect(eventsFor(h.store, 'bad').find((e) => e.reason === 'ImportFailed')?.type).toBe('Warning');
  });

  it('creates a blank disk', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.dataVolumes, dv('empty', { blank: {} }));
    const done = await waitFor('Succeeded', () => {
      const o = h!.store.get(S.dataVolumes, NS, 'empty');
      return phaseOf(o) === 'Succeeded' ? o : undefined;
    });
    expect(st(done).progress).toBe('100.0%');
    expect(h.store.get(S.pvcs, NS, 'empty')?.metadata.annotations?.[CDI_ANN.source]).toBe('none');
  });

  it('imports from a registry, and restarts for an image that does not exist', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.dataVolumes, dv('fedora', { registry: { url: 'docker://quay.io/containerdisks/fedora:42' } }));
    h.store.create(
      S.dataVolumes,
      dv('ghost', { registry: { url: 'docker://quay.io/containerdisks/does-not-exist:1' } }),
    );
    await waitFor('Succeeded', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'fedora')) === 'Succeeded', 20_000);
    expect(h.store.get(S.pvcs, NS, 'fedora')?.metadata.annotations?.[CDI_ANN.source]).toBe('registry');
    // Between restarts the importer runs again (Running=True, no message), so wait for a moment it has failed.
    const failedRun = await waitFor(
      'a failed importer run',
      () => {
        const o = h!.store.get(S.dataVolumes, NS, 'ghost');
        const running = (st(o).conditions as { type: string; status: string; message?: string }[] | undefined)?.find(
          (c) => c.type === 'Running',
        );
        return Number(st(o).restartCount) >= 1 && running?.status === 'False' ? running : undefined;
      },
      20_000,
    );
    expect(failedRun.message).toContain('manifest unknown');
    expect(phaseOf(h.store.get(S.dataVolumes, NS, 'ghost'))).toBe('ImportInProgress');
  });

  it('readies an upload DataVolume with its upload server pod', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.dataVolumes, dv('up', { upload: {} }));
    const ready = await waitFor('UploadReady', () => {
      const o = h!.store.get(S.dataVolumes, NS, 'up');
      return phaseOf(o) === 'UploadReady' ? o : undefined;
    });
    expect(phaseOf(h.store.get(S.pods, NS, 'cdi-upload-up'))).toBe('Running');
    expect(h.store.get(S.pvcs, NS, 'up')?.metadata.annotations?.[CDI_ANN.source]).toBe('upload');
    expect((st(ready).conditions as { type: string; status: string }[]).find((c) => c.type === 'Running')?.status).toBe(
      'True',
    );
  });

  it('waits in WaitForFirstConsumer on such a class', async () => {
    h = await startHarness({
      speed: 40,
      seed: (store) =>
        store.create(S.storageClasses, storageClass('local', { volumeBindingMode: 'WaitForFirstConsumer' }, true)),
    });
    h.store.create(S.dataVolumes, dv('later', { http: { url: GOOD_URL } }));
    await waitFor('WFFC', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'later')) === 'WaitForFirstConsumer');
    await new Promise((r) => setTimeout(r, 200));
    expect(phaseOf(h.store.get(S.dataVolumes, NS, 'later'))).toBe('WaitForFirstConsumer');
  });
});

describe('DataVolume clone', () => {
  it('clones a PVC (CloneScheduled → CloneInProgress → Succeeded), carrying its content and size', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.pvcs, pvc('golden', '8Gi', 'longhorn'));
    await waitFor('golden bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'golden')) === 'Bound');
    h.store.mutate(S.pvcs, NS, 'golden', (o) => {
      o.metadata.annotations = {
        ...o.metadata.annotations,
        [DISK_CONTENT_ANNOTATION]: 'http:https://example.org/golden.img',
      };
    });
    h.store.create(S.dataVolumes, dv('copy', { pvc: { namespace: NS, name: 'golden' } }, {}));
    const phases: string[] = [];
    await waitFor(
      'Succeeded',
      () => {
        const phase = String(phaseOf(h!.store.get(S.dataVolumes, NS, 'copy')));
        if (phases.at(-1) !== phase) phases.push(phase);
        return phase === 'Succeeded';
      },
      20_000,
    );
    expect(phases).toEqual(expect.arrayContaining(['CloneScheduled', 'CloneInProgress', 'Succeeded']));
    const claim = h.store.get(S.pvcs, NS, 'copy');
    expect(claim?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBe('http:https://example.org/golden.img');
    expect(claim?.metadata.annotations?.[CDI_ANN.cloneRequest]).toBe(`${NS}/golden`);
    expect((claim?.spec as { resources: { requests: { storage: string } } }).resources.requests.storage).toBe('8Gi');
  });

  it('clones across namespaces (host-assisted): waits with CloneSourceInUse while a pod has the source mounted', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.namespaces, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    h.store.create(S.pvcs, pvc('golden', '8Gi', 'longhorn', {}));
    await waitFor('golden bound', () => phaseOf(h!.store.get(S.pvcs, NS, 'golden')) === 'Bound');
    h.store.mutate(S.pvcs, NS, 'golden', (o) => {
      o.metadata.annotations = {
        ...o.metadata.annotations,
        [DISK_CONTENT_ANNOTATION]: 'the golden bytes',
        [EXPORT_BYTES_ANNOTATION]: String(64 << 20),
      };
    });
    h.store.create(S.pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'reader', namespace: NS },
      spec: {
        containers: [{ name: 'c', image: 'busybox' }],
        volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'golden' } }],
      },
      status: { phase: 'Running' },
    });
    h.store.create(S.dataVolumes, {
      ...dv('copy', { pvc: { namespace: NS, name: 'golden' } }, {}),
      metadata: { name: 'copy', namespace: 'other' },
    });
    await waitFor('CloneSourceInUse', () =>
      eventsFor(h!.store, 'copy', 'other').find((e) => e.reason === 'CloneSourceInUse'),
    );
    expect(eventsFor(h.store, 'copy', 'other').find((e) => e.reason === 'CloneSourceInUse')?.message).toBe(
      `pod ${NS}/reader using PersistentVolumeClaim golden`,
    );
    expect(phaseOf(h.store.get(S.dataVolumes, 'other', 'copy'))).toBe('CloneScheduled');
    h.store.delete(S.pods, NS, 'reader');
    await waitFor('Succeeded', () => phaseOf(h!.store.get(S.dataVolumes, 'other', 'copy')) === 'Succeeded', 20_000);
    const claim = h.store.get(S.pvcs, 'other', 'copy');
    expect(claim?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBe('the golden bytes');
    expect(claim?.metadata.annotations?.[EXPORT_BYTES_ANNOTATION]).toBe(String(64 << 20));
    expect(claim?.metadata.annotations?.[CDI_ANN.cloneRequest]).toBe(`${NS}/golden`);
    // The copy is its own volume: changing it leaves the source as it was.
    h.store.mutate(S.pvcs, 'other', 'copy', (o) => {
      o.metadata.annotations = { ...o.metadata.annotations, [DISK_CONTENT_ANNOTATION]: 'changed' };
    });
    expect(h.store.get(S.pvcs, NS, 'golden')?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBe('the golden bytes');
  });

  it('refuses to clone an archive claim (files) into a kubevirt DataVolume (a disk image): CloneValidationFailed', async () => {
    h = await startHarness({ speed: 40, seed });
    const archive = (o: NewObject) => ({ ...o, spec: { ...(o.spec as object), contentType: 'archive' } });
    h.store.create(S.dataVolumes, archive(dv('files', { blank: {} })));
    await waitFor('files', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'files')) === 'Succeeded');
    h.store.create(S.dataVolumes, dv('disk', { pvc: { namespace: NS, name: 'files' } }));
    await waitFor('event', () => eventsFor(h!.store, 'disk').some((e) => e.reason === 'CloneValidationFailed'));
    expect(h.store.get(S.pvcs, NS, 'disk')).toBeUndefined();
    // Into an archive DataVolume the same source clones.
    h.store.create(S.dataVolumes, archive(dv('copy', { pvc: { namespace: NS, name: 'files' } })));
    await waitFor('copy', () => phaseOf(h!.store.get(S.dataVolumes, NS, 'copy')) === 'Succeeded', 20_000);
  });

  it('waits with CloneWithoutSource while the source PVC is missing', async () => {
    h = await startHarness({ speed: 40, seed });
    h.store.create(S.dataVolumes, dv('copy', { pvc: { namespace: NS, name: 'ghost' } }));
    await waitFor('event', () => eventsFor(h!.store, 'copy').some((e) => e.reason === 'CloneWithoutSource'));
    expect(phaseOf(h.store.get(S.dataVolumes, NS, 'copy'))).toBe('Pending');
    expect(h.store.get(S.pvcs, NS, 'copy')).toBeUndefined();
  });
});
