import type { ListWatch } from '@kubernetes/client-node';
import { makeInformer, PatchStrategy, setHeaderOptions, Watch, type KubernetesObject } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, expectStatus, raw, startHarness, vmBody, type Harness, type WireJson } from './harness.js';

let h: Harness;
const VM = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;
const merge = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

beforeAll(async () => {
  h = await startHarness({ watchBookmarkIntervalMs: 100 });
  await h.core.createNamespace({ body: { metadata: { name: 'sel' } } });
  const vms: [string, Record<string, string>][] = [
    ['a', { env: 'prod', 'corral.dev/tag.prod': '' }],
    ['b', { env: 'dev' }],
    ['c', { env: 'qa', tier: 'gold' }],
    ['d', {}],
  ];
  for (const [name, labels] of vms) {
    await h.custom.createNamespacedCustomObject({
      ...VM,
      namespace: 'sel',
      body: { ...vmBody(name, 'sel'), metadata: { name, namespace: 'sel', labels } },
    });
  }
});
afterAll(async () => {
  await h.cluster.close();
});

const names = (list: { items: { metadata: { name: string } }[] }) => list.items.map((i) => i.metadata.name);

describe('label selectors', () => {
  const cases: [string, string[]][] = [
    ['env=prod', ['a']],
    ['env==dev', ['b']],
    ['env!=prod', ['b', 'c', 'd']],
    ['env in (prod,qa)', ['a', 'c']],
    ['env notin (prod,qa)', ['b', 'd']],
    ['tier', ['c']],
    ['!env', ['d']],
    ['corral.dev/tag.prod', ['a']],
    ['env,tier=gold', ['c']],
  ];
  for (const [selector, expected] of cases) {
    it(`${selector} → ${expected.join(',')}`, async () => {
      const list = await h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel', labelSelector: selector });
      expect(names(list)).toEqual(expected);
    });
  }

  it('an unparsable selector is 400', async () => {
    const failed = await expectStatus(
      h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel', labelSelector: 'env in prod' }),
    );
    expect(failed).toMatchObject({ code: 400, reason: 'BadRequest' });
  });
});

describe('field selectors', () => {
  it('metadata.name and metadata.namespace work on every kind', async () => {
    const list = await h.custom.listClusterCustomObject({
      ...VM,
      fieldSelector: 'metadata.name=b,metadata.namespace=sel',
    });
    expect(names(list)).toEqual(['b']);
    const not = await h.custom.listNamespacedCustomObject({
      ...VM,
      namespace: 'sel',
      fieldSelector: 'metadata.name!=b',
    });
    expect(names(not)).toEqual(['a', 'c', 'd']);
  });

  it('pods support spec.nodeName and status.phase; events involvedObject.name', async () => {
    await h.core.createNamespacedPod({
      namespace: 'sel',
      body: { metadata: { name: 'p1' }, spec: { nodeName: 'node1', containers: [{ name: 'c', image: 'x' }] } },
    });
    await h.core.createNamespacedPod({
      namespace: 'sel',
      body: { metadata: { name: 'p2' }, spec: { nodeName: 'node2', containers: [{ name: 'c', image: 'x' }] } },
    });
    const onNode1 = await h.core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'spec.nodeName=node1' });
    expect(onNode1.items.map((p) => p.metadata?.name)).toEqual(['p1']);
    const pending = await h.core.listNamespacedPod({ namespace: 'sel', fieldSelector: 'status.phase=Running' });
    expect(pending.items).toEqual([]);
    await h.core.createNamespacedEvent({
      namespace: 'sel',
      body: {
        metadata: { name: 'e1' },
        involvedObject: { kind: 'VirtualMachine', name: 'a' },
        reason: 'Started',
        message: 'm',
      },
    });
    await h.core.createNamespacedEvent({
      namespace: 'sel',
      body: {
        metadata: { name: 'e2' },
        involvedObject: { kind: 'VirtualMachine', name: 'b' },
        reason: 'Started',
        message: 'm',
      },
    });
    const evs = await h.core.listNamespacedEvent({
      namespace: 'sel',
      fieldSelector: 'involvedObject.kind=VirtualMachine,involvedObject.name=a',
    });
    expect(evs.items.map((e) => e.metadata?.name)).toEqual(['e1']);
  });

  it('an unsupported field is 400 "field label not supported"', async () => {
    const failed = await expectStatus(
      h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel', fieldSelector: 'spec.runStrategy=Always' }),
    );
    expect(failed).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'field label not supported: spec.runStrategy',
    });
  });
});

/** Read a raw watch stream until `until` returns true for the collected events. */
async function collectWatch(
  path: string,
  until: (events: { type: string; object: WireJson }[]) => boolean,
  timeoutMs = 5000,
) {
  const controller = new AbortController();
  const res = await fetch(h.url + path, { signal: controller.signal });
  const events: { type: string; object: WireJson }[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  let ended = false;
  // One outstanding read at a time: a read abandoned by the poll timeout would swallow its chunk.
  let pending: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
  try {
    while (!until(events) && Date.now() < deadline) {
      pending ??= reader.read();
      const result = await Promise.race([pending, new Promise<undefined>((r) => setTimeout(() => r(undefined), 50))]);
      if (!result) continue;
      pending = undefined;
      const { value, done } = result;
      if (done) {
        ended = true;
        break;
      }
      if (!value) continue;
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)));
        buffer = buffer.slice(nl + 1);
      }
    }
  } finally {
    controller.abort();
  }
  return { events, ended, status: res.status };
}

describe('watch', () => {
  it('without resourceVersion sends ADDED for current objects, then live events, each line one JSON event', async () => {
    const watching = collectWatch(
      '/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&labelSelector=env',
      (ev) => ev.some((e) => e.type === 'MODIFIED'),
    );
    await new Promise((r) => setTimeout(r, 100));
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'b', body: { metadata: { annotations: { x: '1' } } } },
      merge,
    );
    const { events } = await watching;
    expect(events.slice(0, 3).map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual([
      'ADDED:a',
      'ADDED:b',
      'ADDED:c',
    ]);
    expect(events[3]).toMatchObject({
      type: 'MODIFIED',
      object: { kind: 'VirtualMachine', metadata: { name: 'b', annotations: { x: '1' } } },
    });
  });

  it('resumes from a resourceVersion with exactly the later changes', async () => {
    const list = await h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel' });
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'c', body: { metadata: { annotations: { y: '1' } } } },
      merge,
    );
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'd', body: { metadata: { annotations: { y: '2' } } } },
      merge,
    );
    const { events } = await collectWatch(
      `/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=1&resourceVersion=${list.metadata.resourceVersion}`,
      (ev) => ev.length >= 2,
    );
    expect(events.map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual(['MODIFIED:c', 'MODIFIED:d']);
  });

  it('a too-old resourceVersion gets an in-stream ERROR 410 Expired and the stream ends', async () => {
    const list = await h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel' });
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'c', body: { metadata: { annotations: { z: '1' } } } },
      merge,
    );
    h.cluster.store.compact('kubevirt.io/virtualmachines');
    const { events, ended, status } = await collectWatch(
      `/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&resourceVersion=${list.metadata.resourceVersion}`,
      () => false,
      2000,
    );
    expect(status).toBe(200);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired' } });
    expect(ended).toBe(true);
  });

  it('objects leaving the selection arrive as DELETED, entering as ADDED', async () => {
    const list = await h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel' });
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'a', body: { metadata: { labels: { env: null } } } },
      merge,
    );
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'd', body: { metadata: { labels: { env: 'new' } } } },
      merge,
    );
    const { events } = await collectWatch(
      `/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&labelSelector=env&resourceVersion=${list.metadata.resourceVersion}`,
      (ev) => ev.length >= 2,
    );
    expect(events.map((e) => `${e.type}:${e.object.metadata.name}`)).toEqual(['DELETED:a', 'ADDED:d']);
  });

  it('sends bookmarks only when allowed, and ends the stream at timeoutSeconds', async () => {
    const started = Date.now();
    const withBookmarks = await collectWatch(
      '/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&allowWatchBookmarks=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone',
      () => false,
      4000,
    );
    expect(withBookmarks.ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
    const bookmark = withBookmarks.events.find((e) => e.type === 'BOOKMARK');
    expect(bookmark?.object).toMatchObject({ kind: 'VirtualMachine', apiVersion: 'kubevirt.io/v1' });
    expect(Number(bookmark?.object.metadata.resourceVersion)).toBeGreaterThan(0);
    const without = await collectWatch(
      '/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&timeoutSeconds=1&fieldSelector=metadata.name%3Dnone',
      () => false,
      4000,
    );
    expect(without.events).toEqual([]);
  });

  it('sendInitialEvents=true ends the initial ADDEDs with the initial-events-end bookmark', async () => {
    const { events } = await collectWatch(
      '/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=tier',
      (ev) => ev.some((e) => e.type === 'BOOKMARK'),
    );
    expect(events.map((e) => e.type)).toEqual(['ADDED', 'BOOKMARK']);
    expect(events[1]!.object.metadata.annotations).toEqual({ 'k8s.io/initial-events-end': 'true' });
  });

  it('client-node Watch receives typed events', async () => {
    const seen: string[] = [];
    const watch = new Watch(h.kc);
    const controller = await watch.watch(
      '/api/v1/namespaces/sel/configmaps',
      {},
      (type, obj: KubernetesObject) => seen.push(`${type}:${obj.metadata?.name}`),
      () => {},
    );
    await h.core.createNamespacedConfigMap({ namespace: 'sel', body: { metadata: { name: 'w1' } } });
    await h.core.deleteNamespacedConfigMap({ namespace: 'sel', name: 'w1' });
    await eventually(() => expect(seen).toEqual(['ADDED:w1', 'DELETED:w1']));
    controller.abort();
  });

  it('a client-node informer lists, watches, and relists after the stream is dropped', async () => {
    const listFn = () => h.custom.listNamespacedCustomObject({ ...VM, namespace: 'sel' }) as never;
    const informer = makeInformer(h.kc, '/apis/kubevirt.io/v1/namespaces/sel/virtualmachines', listFn);
    const updates: string[] = [];
    informer.on('update', (o: KubernetesObject) => updates.push(o.metadata!.name!));
    await informer.start();
    expect((informer as ListWatch<KubernetesObject>).list().map((o) => o.metadata?.name)).toEqual(['a', 'b', 'c', 'd']);
    expect(h.cluster.faults.dropWatches()).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 200));
    await h.custom.patchNamespacedCustomObject(
      { ...VM, namespace: 'sel', name: 'a', body: { metadata: { annotations: { after: 'drop' } } } },
      merge,
    );
    await eventually(() => expect(updates).toContain('a'), 8000);
    await informer.stop();
  });

  it('watch on the Table Accept header sends Table events', async () => {
    const res = await fetch(
      `${h.url}/apis/kubevirt.io/v1/namespaces/sel/virtualmachines?watch=true&fieldSelector=metadata.name%3Da&timeoutSeconds=1`,
      {
        headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
      },
    );
    const first = JSON.parse((await res.text()).split('\n')[0]!);
    expect(first).toMatchObject({
      type: 'ADDED',
      object: { kind: 'Table', rows: [{ cells: ['a', expect.any(String), null, null] }] },
    });
  });
});

describe('raw list', () => {
  it('lists a cluster-scoped kind and all namespaces of a namespaced one', async () => {
    const ns = await raw(h, 'GET', '/api/v1/namespaces');
    expect(ns.json.items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(
      expect.arrayContaining(['default', 'kube-system', 'sel']),
    );
  });
});
