import { CustomObjectsApi, KubeConfig, makeInformer, type KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { garbageCollectorModule } from '../../../src/sim/gc/index.js';
import { startEmbeddedCluster } from '../../../src/sim/index.js';
import { eventually, vmBody } from './harness.js';

const VM = { group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' } as const;

describe('clients across a sim restart', () => {
  it('an informer relists after the sim restarts on the same port (stale RV → 410, not a hang)', async () => {
    const first = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [garbageCollectorModule()] });
    const port = first.port;
    const kc = new KubeConfig();
    kc.loadFromString(first.kubeconfig);
    const custom = kc.makeApiClient(CustomObjectsApi);
    await custom.createNamespacedCustomObject({ ...VM, namespace: 'default', body: vmBody('before') });
    const informer = makeInformer(
      kc,
      '/apis/kubevirt.io/v1/namespaces/default/virtualmachines',
      () => custom.listNamespacedCustomObject({ ...VM, namespace: 'default' }) as never,
    );
    const errors: unknown[] = [];
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    expect(informer.list().map((o: KubernetesObject) => o.metadata?.name)).toEqual(['before']);

    await first.close();
    const second = await startEmbeddedCluster({ port, fleet: 'empty', modules: [garbageCollectorModule()] });
    try {
      second.store.create('kubevirt.io/virtualmachines', vmBody('after'));
      await eventually(
        () => expect(informer.list().map((o: KubernetesObject) => o.metadata?.name)).toEqual(['after']),
        15_000,
      );
      expect(errors).toEqual([]);
    } finally {
      await informer.stop();
      await second.close();
    }
  });

  it('a watch on an item path follows that one object', async () => {
    const cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [garbageCollectorModule()] });
    try {
      cluster.store.create('/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'one', namespace: 'default' },
      });
      cluster.store.create('/configmaps', {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'two', namespace: 'default' },
      });
      const res = await fetch(`${cluster.url}/api/v1/namespaces/default/configmaps/one?watch=true&timeoutSeconds=1`);
      const lines = (await res.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; object: { metadata: { name: string } } });
      expect(lines.map((l) => `${l.type}:${l.object.metadata.name}`)).toEqual(['ADDED:one']);
    } finally {
      await cluster.close();
    }
  });
});
