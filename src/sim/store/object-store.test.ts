import { describe, expect, it } from 'vitest';
import { ApiError } from './errors.js';
import { ObjectStore } from './object-store.js';
import type { ResourceType, StoreEvent } from './types.js';

const configMaps: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'ConfigMap',
  listKind: 'ConfigMapList',
  plural: 'configmaps',
  singular: 'configmap',
  namespaced: true,
  shortNames: ['cm'],
  verbs: ['get', 'list'],
  hasStatus: false,
  builtin: true,
};
const vms: ResourceType = {
  group: 'kubevirt.io',
  version: 'v1',
  kind: 'VirtualMachine',
  listKind: 'VirtualMachineList',
  plural: 'virtualmachines',
  singular: 'virtualmachine',
  namespaced: true,
  verbs: ['get'],
  hasStatus: true,
  builtin: false,
};

function makeStore() {
  const store = new ObjectStore();
  store.register(configMaps);
  store.register(vms);
  return store;
}

const cm = (name: string, data: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns1' },
  data,
});

describe('ObjectStore', () => {
  it('assigns identity on create and refuses duplicates with AlreadyExists', () => {
    const store = makeStore();
    const created = store.create('/configmaps', cm('a'));
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0);
    expect(created.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const dup = (() => {
      try {
        store.create('/configmaps', cm('a'));
      } catch (e) {
        return e;
      }
    })();
    expect(dup).toBeInstanceOf(ApiError);
    expect((dup as ApiError).code).toBe(409);
    expect((dup as ApiError).reason).toBe('AlreadyExists');
  });

  it('rejects invalid names with 422 Invalid naming metadata.name', () => {
    const store = makeStore();
    try {
      store.create('/configmaps', cm('Bad_Name'));
      expect.unreachable();
    } catch (e) {
      expect((e as ApiError).code).toBe(422);
      expect((e as ApiError).message).toContain('metadata.name');
    }
  });

  it('detects stale resourceVersions on replace with 409 Conflict', () => {
    const store = makeStore();
    const first = store.create('/configmaps', cm('a'));
    store.replace(
      '/configmaps',
      { ...first, data: { x: '1' } },
      { expectedResourceVersion: first.metadata.resourceVersion },
    );
    expect(() =>
      store.replace(
        '/configmaps',
        { ...first, data: { x: '2' } },
        { expectedResourceVersion: first.metadata.resourceVersion },
      ),
    ).toThrow(/has been modified/);
  });

  it('bumps generation only for spec changes, not metadata or status-subresource changes', () => {
    const store = makeStore();
    const vm = store.create('kubevirt.io/virtualmachines', {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'web', namespace: 'ns1' },
      spec: { runStrategy: 'Halted' },
    });
    expect(vm.metadata.generation).toBe(1);
    const labelled = store.mutate('kubevirt.io/virtualmachines', 'ns1', 'web', (o) => {
      o.metadata.labels = { a: 'b' };
    })!;
    expect(labelled.metadata.generation).toBe(1);
    const statused = store.mutate('kubevirt.io/virtualmachines', 'ns1', 'web', (o) => {
      o.status = { ready: true };
    })!;
    expect(statused.metadata.generation).toBe(1);
    const changed = store.mutate('kubevirt.io/virtualmachines', 'ns1', 'web', (o) => {
      o.spec = { runStrategy: 'Always' };
    })!;
    expect(changed.metadata.generation).toBe(2);
  });

  it('holds objects with finalizers until the last finalizer is removed', () => {
    const store = makeStore();
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    store.create('/configmaps', { ...cm('f'), metadata: { name: 'f', namespace: 'ns1', finalizers: ['x/y'] } });
    const res = store.delete('/configmaps', 'ns1', 'f');
    expect(res.gone).toBe(false);
    expect(store.get('/configmaps', 'ns1', 'f')?.metadata.deletionTimestamp).toBeDefined();
    store.removeFinalizer('/configmaps', 'ns1', 'f', 'x/y');
    expect(store.get('/configmaps', 'ns1', 'f')).toBeUndefined();
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'MODIFIED', 'DELETED']);
  });

  it('replays events after a resourceVersion and reports expired history', () => {
    const store = makeStore();
    const a = store.create('/configmaps', cm('a'));
    store.create('/configmaps', cm('b'));
    const since = store.eventsSince('/configmaps', Number(a.metadata.resourceVersion));
    expect(since).not.toBe('expired');
    expect((since as StoreEvent[]).map((e) => e.object.metadata.name)).toEqual(['b']);
    store.compact('/configmaps');
    expect(store.eventsSince('/configmaps', Number(a.metadata.resourceVersion))).toBe('expired');
  });

  it('lists in namespace/name order with cached JSON', () => {
    const store = makeStore();
    store.create('/configmaps', cm('b'));
    store.create('/configmaps', cm('a'));
    const listed = store.listJson('/configmaps', 'ns1');
    expect(listed.map((e) => e.object.metadata.name)).toEqual(['a', 'b']);
    expect(JSON.parse(listed[0]!.json).metadata.name).toBe('a');
  });
});
