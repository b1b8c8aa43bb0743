import { afterEach, describe, expect, it } from 'vitest';
import type { AdmissionRequest } from '@/sim/module';
import { ApiError } from '@/sim/store/errors';
import type { KObject } from '@/sim/store/types';
import { storageAdmission } from '@/sim/storage/admission';
import { S } from '@/sim/storage/keys';
import { type Harness, NS, startHarness } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function obj(apiVersion: string, kind: string, spec: Record<string, unknown>): KObject {
  return {
    apiVersion,
    kind,
    metadata: { name: 'x', namespace: NS, uid: 'u', resourceVersion: '1', creationTimestamp: '' },
    spec,
  };
}

/** Run every storage hook that sees the object's kind, as the HTTP layer does; the ApiError a hook throws, if any. */
function admit(
  request: Omit<AdmissionRequest, 'group' | 'kind' | 'namespace' | 'name' | 'dryRun'>,
): ApiError | undefined {
  const o = (request.object ?? request.oldObject)!;
  const group = o.apiVersion.includes('/') ? o.apiVersion.split('/')[0]! : '';
  try {
    for (const hook of storageAdmission) {
      if (hook.kinds.some((k) => k.group === group && k.kind === o.kind)) {
        hook.admit(h!.ctx, { ...request, group, kind: o.kind, namespace: NS, name: o.metadata.name, dryRun: false });
      }
    }
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  return undefined;
}

const kubevirtCr = (gates: string[]) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'KubeVirt',
  metadata: { name: 'kubevirt', namespace: NS },
  spec: { configuration: { developerConfiguration: { featureGates: gates } } },
});

describe('storage admission', () => {
  it('refuses snapshots, restores, clones and exports while their feature gate is off', async () => {
    h = await startHarness({ seed: (s) => s.create(S.kubevirts, kubevirtCr([])) });
    const vmSource = { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' };
    const cases = [
      obj('snapshot.kubevirt.io/v1beta1', 'VirtualMachineSnapshot', { source: vmSource }),
      obj('clone.kubevirt.io/v1beta1', 'VirtualMachineClone', { source: vmSource }),
      obj('export.kubevirt.io/v1', 'VirtualMachineExport', { source: vmSource }),
    ];
    for (const o of cases) expect(admit({ operation: 'CREATE', object: o })?.code, o.kind).toBe(422);
    h.store.mutate(S.kubevirts, NS, 'kubevirt', (k) => {
      k.spec = kubevirtCr(['Snapshot', 'VMExport']).spec;
    });
    for (const o of cases) expect(admit({ operation: 'CREATE', object: o }), o.kind).toBeUndefined();
  });

  it('refuses unsupported source kinds and spec changes of a snapshot', async () => {
    h = await startHarness();
    const bad = admit({
      operation: 'CREATE',
      object: obj('snapshot.kubevirt.io/v1beta1', 'VirtualMachineSnapshot', { source: { kind: 'Pod', name: 'p' } }),
    });
    expect(bad?.details?.causes?.[0]?.field).toBe('spec.source.kind');
    const cloneBad = admit({
      operation: 'CREATE',
      object: obj('clone.kubevirt.io/v1beta1', 'VirtualMachineClone', { source: { kind: 'Pod', name: 'p' } }),
    });
    expect(cloneBad?.code).toBe(422);
    const before = obj('snapshot.kubevirt.io/v1beta1', 'VirtualMachineSnapshot', {
      source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'a' },
    });
    const after = obj('snapshot.kubevirt.io/v1beta1', 'VirtualMachineSnapshot', {
      source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'b' },
    });
    expect(admit({ operation: 'UPDATE', object: after, oldObject: before })?.code).toBe(422);
    expect(admit({ operation: 'UPDATE', object: before, oldObject: before })).toBeUndefined();
  });

  it('refuses restore patches that are not JSON patch operations', async () => {
    h = await startHarness();
    h.store.create(S.vmSnapshots, {
      apiVersion: 'snapshot.kubevirt.io/v1beta1',
      kind: 'VirtualMachineSnapshot',
      metadata: { name: 'snap', namespace: NS },
      spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' } },
    });
    const restore = (patches: unknown[]) =>
      obj('snapshot.kubevirt.io/v1beta1', 'VirtualMachineRestore', {
        target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' },
        virtualMachineSnapshotName: 'snap',
        patches,
      });
    expect(
      admit({
        operation: 'CREATE',
        object: restore([JSON.stringify({ op: 'add', path: '/metadata/labels/x', value: 'y' })]),
      }),
    ).toBeUndefined();
    expect(admit({ operation: 'CREATE', object: restore(['{not json']) })?.details?.causes?.[0]?.field).toBe(
      'spec.patches[0]',
    );
    expect(admit({ operation: 'CREATE', object: restore([JSON.stringify({ op: 'move', path: '/a' })]) })?.code).toBe(
      422,
    );
  });

  it('checks DataVolume sources and sizes like CDI', async () => {
    h = await startHarness();
    const dv = (spec: Record<string, unknown>) => obj('cdi.kubevirt.io/v1beta1', 'DataVolume', spec);
    const size = { storage: { resources: { requests: { storage: '1Gi' } } } };
    expect(
      admit({ operation: 'CREATE', object: dv({ source: { http: { url: 'https://a.example.org/x.img' } }, ...size }) }),
    ).toBeUndefined();
    expect(
      admit({
        operation: 'CREATE',
        object: dv({ source: { http: { url: 'https://a.example.org/x.img' }, blank: {} }, ...size }),
      })?.code,
    ).toBe(422);
    expect(
      admit({ operation: 'CREATE', object: dv({ source: { registry: { url: 'quay.io/x:1' } }, ...size }) })?.details
        ?.causes?.[0]?.field,
    ).toBe('spec.source.registry.url');
    expect(admit({ operation: 'CREATE', object: dv({ source: { blank: {} }, storage: {} }) })?.code).toBe(422);
    const typed = (contentType: string, source: Record<string, unknown>) =>
      admit({ operation: 'CREATE', object: dv({ source, contentType, ...size }) })?.details?.causes?.[0];
    expect(typed('tarball', { upload: {} })).toMatchObject({ field: 'spec.contentType' });
    expect(typed('archive', { registry: { url: 'docker://quay.io/x:1' } })?.message).toMatch(
      /ContentType must be kubevirt when Source is Registry/,
    );
    expect(typed('archive', { upload: {} })).toBeUndefined();
    expect(
      admit({ operation: 'CREATE', object: dv({ source: { pvc: { name: 'golden' } }, storage: {} }) }),
    ).toBeUndefined();
    expect(
      admit({
        operation: 'CREATE',
        object: dv({ source: { blank: {} }, storage: { resources: { requests: { storage: 'lots' } } } }),
      })?.code,
    ).toBe(422);
    h.store.create(S.pvcs, {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'golden', namespace: NS },
      spec: { resources: { requests: { storage: '20Gi' } } },
    });
    const smaller = admit({ operation: 'CREATE', object: dv({ source: { pvc: { name: 'golden' } }, ...size }) });
    expect(smaller?.message).toContain('smaller than the source');
    expect(
      admit({
        operation: 'CREATE',
        object: dv({ source: { pvc: { name: 'golden' } }, storage: { resources: { requests: { storage: '20Gi' } } } }),
      }),
    ).toBeUndefined();
  });
});
