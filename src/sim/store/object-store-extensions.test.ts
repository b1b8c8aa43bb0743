import { describe, expect, it } from 'vitest';
import { ObjectStore } from './object-store.js';
import type { ResourceType, StoreEvent } from './types.js';

const secrets: ResourceType = {
  group: '',
  version: 'v1',
  kind: 'Secret',
  listKind: 'SecretList',
  plural: 'secrets',
  singular: 'secret',
  namespaced: true,
  verbs: ['get', 'list'],
  hasStatus: false,
  builtin: true,
};

function makeStore() {
  const store = new ObjectStore();
  store.register(secrets);
  return store;
}
const secret = (namespace: string, name: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
});
const ids = (store: ObjectStore, ns?: string) =>
  store.list('/secrets', ns).map((o) => `${o.metadata.namespace}/${o.metadata.name}`);

describe('ObjectStore extensions', () => {
  it('keeps name order across creates, updates and deletes (cached order is refreshed)', () => {
    const store = makeStore();
    store.create('/secrets', secret('b', 'z'));
    store.create('/secrets', secret('a', 'y'));
    expect(ids(store)).toEqual(['a/y', 'b/z']);
    store.create('/secrets', secret('a', 'a'));
    expect(ids(store)).toEqual(['a/a', 'a/y', 'b/z']);
    store.mutate('/secrets', 'a', 'y', (o) => {
      o.data = { k: 'dg==' };
    });
    expect(ids(store)).toEqual(['a/a', 'a/y', 'b/z']);
    store.delete('/secrets', 'a', 'a');
    expect(ids(store)).toEqual(['a/y', 'b/z']);
    expect(ids(store, 'b')).toEqual(['b/z']);
    expect(store.listJson('/secrets').map((e) => JSON.parse(e.json).metadata.name)).toEqual(['y', 'z']);
  });

  it('events carry the replaced state as `previous`', () => {
    const store = makeStore();
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    store.create('/secrets', secret('a', 's'));
    store.mutate('/secrets', 'a', 's', (o) => {
      o.metadata.labels = { v: '2' };
    });
    store.delete('/secrets', 'a', 's');
    expect(events.map((e) => [e.type, e.previous?.metadata.labels?.v ?? null])).toEqual([
      ['ADDED', null],
      ['MODIFIED', null],
      ['DELETED', '2'],
    ]);
    expect(events[0]!.previous).toBeUndefined();
    expect(events[1]!.previous?.metadata.labels).toBeUndefined();
  });

  it('delete adds the deleter’s extra finalizers and keeps the object until they are removed', () => {
    const store = makeStore();
    store.create('/secrets', secret('a', 'held'));
    const result = store.delete('/secrets', 'a', 'held', { extraFinalizers: ['kubernetes'] });
    expect(result.gone).toBe(false);
    expect(result.object.metadata.finalizers).toEqual(['kubernetes']);
    store.removeFinalizer('/secrets', 'a', 'held', 'kubernetes');
    expect(store.get('/secrets', 'a', 'held')).toBeUndefined();
  });
});
