import { describe, expect, it } from 'vitest';
import { buildImportDataVolume, dataVolumeRow, parseProgress } from './datavolumes';
import { parseSources } from './sources';

describe('imported image rows', () => {
  it('reads CDI progress strings; N/A is null', () => {
    expect(parseProgress('45.12%')).toBe(45.12);
    expect(parseProgress('100.0%')).toBe(100);
    expect(parseProgress('N/A')).toBeNull();
    expect(parseProgress(undefined)).toBeNull();
  });

  it('carries a restarting importer’s reason, and a Failed phase’s message', () => {
    const failing = dataVolumeRow({
      metadata: { name: 'x', namespace: 'tailvm' },
      spec: {
        source: { http: { url: 'https://h.invalid/d.img' } },
        storage: { resources: { requests: { storage: '2Gi' } } },
      },
      status: {
        phase: 'ImportInProgress',
        progress: 'N/A',
        restartCount: 2,
        conditions: [{ type: 'Running', status: 'False', reason: 'Error', message: 'no such host' }],
      },
    });
    expect(failing).toMatchObject({
      phase: 'ImportInProgress',
      progress: null,
      error: 'no such host',
      restarts: 2,
      size: '2Gi',
    });
    const failed = dataVolumeRow({
      metadata: { name: 'y', namespace: 'tailvm' },
      spec: { source: { registry: { url: 'docker://quay.io/a/b:1' } } },
      status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False', message: 'bad scheme' }] },
    });
    expect(failed).toMatchObject({ error: 'bad scheme', source: 'docker://quay.io/a/b:1', contentType: 'disk' });
    expect(dataVolumeRow({ metadata: { name: 'z' }, status: { phase: 'Succeeded', progress: '99.5%' } }).progress).toBe(
      100,
    );
  });

  it('builds an import that binds at once, labelled iso by the URL', () => {
    const dv = buildImportDataVolume({ name: 'inst', url: 'https://m.example.org/a.iso?x=1', size: '4Gi' }, 'tailvm');
    expect(dv.metadata.labels?.['corral.dev/image']).toBe('iso');
    expect(dv.metadata.annotations?.['cdi.kubevirt.io/storage.bind.immediate.requested']).toBe('true');
    const reg = buildImportDataVolume(
      { name: 'r', registry: 'quay.io/containerdisks/fedora:42', size: '4Gi' },
      'tailvm',
    );
    expect(reg.spec?.source).toEqual({ registry: { url: 'docker://quay.io/containerdisks/fedora:42' } });
    expect(reg.metadata.labels?.['corral.dev/image']).toBe('disk');
  });
});

describe('sources.json', () => {
  it('skips malformed entries and reads broken JSON as none', () => {
    expect(parseSources('not json')).toEqual([]);
    expect(parseSources('{"name":"a"}')).toEqual([]);
    expect(
      parseSources(JSON.stringify([{ name: 'a', kind: 'url', uri: 'https://x/y.img' }, { name: 'b', kind: 'tar' }, 7])),
    ).toEqual([{ name: 'a', kind: 'url', uri: 'https://x/y.img' }]);
  });
});
