import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus, raw, startHarness, vmBody, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

describe('embedded cluster core', () => {
  it('answers /version and health like an apiserver', async () => {
    const v = await raw(h, 'GET', '/version?timeout=5s');
    expect(v.json.gitVersion).toBe('v1.32.0');
    expect((await raw(h, 'GET', '/readyz')).text).toBe('ok');
  });

  it('writes a kubeconfig with the corral-sim context', () => {
    expect(h.cluster.kubeconfig).toContain(`server: "${h.url}"`);
    expect(h.cluster.kubeconfig).toContain('insecure-skip-tls-verify: true');
    expect(h.kc.getCurrentContext()).toBe('corral-sim');
  });

  it('does ConfigMap CRUD through CoreV1Api', async () => {
    const created = await h.core.createNamespacedConfigMap({
      namespace: 'default',
      body: { metadata: { name: 'c1' }, data: { a: '1' } },
    });
    expect(created.metadata?.uid).toMatch(/^[0-9a-f-]{36}$/);
    const list = await h.core.listNamespacedConfigMap({ namespace: 'default' });
    expect(list.items.map((c) => c.metadata?.name)).toContain('c1');
    const patched = await h.core.patchNamespacedConfigMap(
      { namespace: 'default', name: 'c1', body: { data: { b: '2' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.data).toEqual({ a: '1', b: '2' });
    await h.core.deleteNamespacedConfigMap({ namespace: 'default', name: 'c1' });
    const gone = await expectStatus(h.core.readNamespacedConfigMap({ namespace: 'default', name: 'c1' }));
    expect(gone).toMatchObject({ code: 404, reason: 'NotFound', message: 'configmaps "c1" not found' });
  });

  it('does VirtualMachine CRUD through CustomObjectsApi', async () => {
    const vm = await h.custom.createNamespacedCustomObject({
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'default',
      plural: 'virtualmachines',
      body: vmBody('web'),
    });
    expect(vm.metadata.finalizers).toEqual(['kubevirt.io/virtualMachineControllerFinalize']);
    const got = await h.custom.getNamespacedCustomObject({
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'default',
      plural: 'virtualmachines',
      name: 'web',
    });
    expect(got.spec.runStrategy).toBe('Halted');
  });
});
