import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, raw, startHarness, vmBody, type Harness } from './harness.js';

let h: Harness;
const VM = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  h = await startHarness({ speed: 100 });
  await h.core.createNamespace({ body: { metadata: { name: 'gc' } } });
});
afterAll(async () => {
  await h.cluster.close();
});

async function owner(name: string) {
  return h.core.createNamespacedConfigMap({ namespace: 'gc', body: { metadata: { name } } });
}

async function dependent(
  name: string,
  ownerName: string,
  uid: string,
  blockOwnerDeletion = false,
  finalizers: string[] = [],
) {
  return h.core.createNamespacedSecret({
    namespace: 'gc',
    body: {
      metadata: {
        name,
        finalizers,
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: ownerName, uid, controller: true, blockOwnerDeletion },
        ],
      },
    },
  });
}

const exists = async (kind: 'cm' | 'secret', name: string) => {
  const path = kind === 'cm' ? `/api/v1/namespaces/gc/configmaps/${name}` : `/api/v1/namespaces/gc/secrets/${name}`;
  return (await raw(h, 'GET', path)).status === 200;
};

describe('garbage collection', () => {
  it('background: the owner goes at once, dependents follow', async () => {
    const o = await owner('bg');
    await dependent('bg-dep', 'bg', o.metadata!.uid!);
    await h.core.deleteNamespacedConfigMap({ namespace: 'gc', name: 'bg', propagationPolicy: 'Background' });
    expect(await exists('cm', 'bg')).toBe(false);
    await eventually(async () => expect(await exists('secret', 'bg-dep')).toBe(false));
  });

  it('foreground: the owner waits (foregroundDeletion) until blocking dependents are gone', async () => {
    const o = await owner('fg');
    await dependent('fg-dep', 'fg', o.metadata!.uid!, true, ['test/hold']);
    await h.core.deleteNamespacedConfigMap({ namespace: 'gc', name: 'fg', propagationPolicy: 'Foreground' });
    const waiting = await h.core.readNamespacedConfigMap({ namespace: 'gc', name: 'fg' });
    expect(waiting.metadata?.finalizers).toContain('foregroundDeletion');
    expect(waiting.metadata?.deletionTimestamp).toBeTruthy();
    await eventually(async () =>
      expect(
        (await h.core.readNamespacedSecret({ namespace: 'gc', name: 'fg-dep' })).metadata?.deletionTimestamp,
      ).toBeTruthy(),
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(await exists('cm', 'fg')).toBe(true); // still blocked by the held dependent
    await h.core.patchNamespacedSecret(
      { namespace: 'gc', name: 'fg-dep', body: { metadata: { finalizers: null } } },
      merge,
    );
    await eventually(async () => expect(await exists('cm', 'fg')).toBe(false));
  });

  it('orphan: dependents lose the owner reference and stay', async () => {
    const o = await owner('or');
    await dependent('or-dep', 'or', o.metadata!.uid!);
    await h.core.deleteNamespacedConfigMap({ namespace: 'gc', name: 'or', propagationPolicy: 'Orphan' });
    await eventually(async () => expect(await exists('cm', 'or')).toBe(false));
    const dep = await h.core.readNamespacedSecret({ namespace: 'gc', name: 'or-dep' });
    expect(dep.metadata?.ownerReferences).toBeUndefined();
  });

  it('a PVC being deleted stays while a pod mounts it and goes when the pod is gone', async () => {
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: 'gc',
      body: {
        metadata: { name: 'disk' },
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
    });
    await h.core.createNamespacedPod({
      namespace: 'gc',
      body: {
        metadata: { name: 'user' },
        spec: {
          containers: [{ name: 'c', image: 'x' }],
          volumes: [{ name: 'd', persistentVolumeClaim: { claimName: 'disk' } }],
        },
      },
    });
    const deleting = await h.core.deleteNamespacedPersistentVolumeClaim({ namespace: 'gc', name: 'disk' });
    expect(deleting.metadata?.finalizers).toEqual(['kubernetes.io/pvc-protection']);
    await new Promise((r) => setTimeout(r, 100));
    expect((await raw(h, 'GET', '/api/v1/namespaces/gc/persistentvolumeclaims/disk')).status).toBe(200);
    await h.core.deleteNamespacedPod({ namespace: 'gc', name: 'user' });
    await eventually(async () =>
      expect((await raw(h, 'GET', '/api/v1/namespaces/gc/persistentvolumeclaims/disk')).status).toBe(404),
    );
  });

  it('a deleted namespace is Terminating, its content is deleted, then it disappears', async () => {
    await h.core.createNamespace({ body: { metadata: { name: 'doomed' } } });
    await h.core.createNamespacedConfigMap({ namespace: 'doomed', body: { metadata: { name: 'c' } } });
    await h.custom.createNamespacedCustomObject({ ...VM, namespace: 'doomed', body: vmBody('v', 'doomed') });
    await h.core.deleteNamespace({ name: 'doomed' });
    expect((await h.core.readNamespace({ name: 'doomed' })).status?.phase).toBe('Terminating');
    await eventually(async () =>
      expect((await raw(h, 'GET', '/api/v1/namespaces/doomed/configmaps/c')).status).toBe(404),
    );
    // The VM's controller finalizer holds the namespace, as on a real cluster, until the controller releases it.
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'doomed', name: 'v', body: { metadata: { finalizers: null } } },
      merge,
    );
    await eventually(async () => expect((await raw(h, 'GET', '/api/v1/namespaces/doomed')).status).toBe(404));
  });
});

describe('schema validation (KubeVirt and CDI kinds)', () => {
  it('a wrong type is 422 Invalid naming the field path', async () => {
    const body = vmBody('bad-type', 'gc');
    (body.spec.template as { spec: { domain: { cpu: { cores: unknown } } } }).spec.domain.cpu.cores = 'two';
    const failed = await expectStatus(h.custom.createNamespacedCustomObject({ ...VM, namespace: 'gc', body }));
    expect(failed).toMatchObject({ code: 422, reason: 'Invalid' });
    expect(failed.message).toContain('spec.template.spec.domain.cpu.cores');
    expect((failed.details as { causes: { field: string }[] }).causes[0]!.field).toBe(
      'spec.template.spec.domain.cpu.cores',
    );
  });

  it('a missing required field is 422 (VM without spec.template)', async () => {
    const failed = await expectStatus(
      h.custom.createNamespacedCustomObject({
        ...VM,
        namespace: 'gc',
        body: {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachine',
          metadata: { name: 'no-template' },
          spec: { runStrategy: 'Halted' },
        },
      }),
    );
    expect(failed.code).toBe(422);
    expect(failed.message).toContain('spec.template');
  });

  it('unknown fields: Strict → 400, Warn → warning header and pruned, Ignore → pruned silently', async () => {
    const body = vmBody('typo', 'gc', { runstrategy: 'Always' });
    const strict = await raw(
      h,
      'POST',
      '/apis/kubevirt.io/v1/namespaces/gc/virtualmachines?fieldValidation=Strict',
      body,
    );
    expect(strict.status).toBe(400);
    expect(strict.json.message).toBe('strict decoding error: unknown field "spec.runstrategy"');
    const warn = await raw(h, 'POST', '/apis/kubevirt.io/v1/namespaces/gc/virtualmachines?fieldValidation=Warn', body);
    expect(warn.status).toBe(201);
    expect(warn.headers.get('warning')).toBe('299 - "unknown field \\"spec.runstrategy\\""');
    expect(warn.json.spec.runstrategy).toBeUndefined();
    const ignore = await raw(h, 'POST', '/apis/kubevirt.io/v1/namespaces/gc/virtualmachines?fieldValidation=Ignore', {
      ...body,
      metadata: { name: 'typo2' },
    });
    expect(ignore.status).toBe(201);
    expect(ignore.headers.get('warning')).toBeNull();
  });

  it('quantities accept strings and numbers; patches are validated too', async () => {
    await h.custom.createNamespacedCustomObject({ ...VM, namespace: 'gc', body: vmBody('q', 'gc') });
    await h.custom.patchNamespacedCustomObject(
      {
        ...VM,
        namespace: 'gc',
        name: 'q',
        body: { spec: { template: { spec: { domain: { memory: { guest: 2147483648 } } } } } },
      },
      merge,
    );
    const failed = await expectStatus(
      h.custom.patchNamespacedCustomObject(
        {
          ...VM,
          namespace: 'gc',
          name: 'q',
          body: { spec: { template: { spec: { domain: { cpu: { sockets: true } } } } } },
        },
        merge,
      ),
    );
    expect(failed.code).toBe(422);
    expect(failed.message).toContain('spec.template.spec.domain.cpu.sockets');
  });

  it('a DataVolume with a wrong type is rejected against the CDI schema', async () => {
    const failed = await expectStatus(
      h.custom.createNamespacedCustomObject({
        group: 'cdi.kubevirt.io',
        version: 'v1beta1',
        namespace: 'gc',
        plural: 'datavolumes',
        body: {
          apiVersion: 'cdi.kubevirt.io/v1beta1',
          kind: 'DataVolume',
          metadata: { name: 'dv' },
          spec: { source: { http: { url: 42 } }, storage: {} },
        },
      }),
    );
    expect(failed.code).toBe(422);
    expect(failed.message).toContain('spec.source.http.url');
  });
});
