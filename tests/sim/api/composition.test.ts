import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { defaultModules, startEmbeddedCluster } from '../../../src/sim/index.js';

describe('default composition', () => {
  it('starts every default module with the fleet seeder last, and serves the demo fleet', async () => {
    const names = defaultModules().map((m) => m.name);
    expect(names[0]).toBe('garbage-collector');
    expect(names[names.length - 1]).toBe('fleet');
    const cluster = await startEmbeddedCluster({ port: 0, speed: 50 });
    try {
      const kc = new KubeConfig();
      kc.loadFromString(cluster.kubeconfig);
      const vms = (await kc
        .makeApiClient(CustomObjectsApi)
        .listClusterCustomObject({ group: 'kubevirt.io', version: 'v1', plural: 'virtualmachines' })) as {
        items: unknown[];
      };
      expect(vms.items.length).toBeGreaterThan(0);
    } finally {
      await cluster.close();
    }
  });
});
