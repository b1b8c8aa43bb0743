import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { FakeCluster } from '../testing/fake-cluster';
import type { KObject } from './cluster-port';
import { nodeReadySince, nodeUptimeSeconds } from './node-uptime';
import { createCorralServices } from './services';
import { classCapacity, storageCapacity } from './storage-capacity';

const G = 1024 ** 3;

function pvc(name: string, cls: string | undefined, size: string, phase = 'Bound', namespace = 'tailvm'): KObject {
  return {
    kind: 'PersistentVolumeClaim',
    metadata: { name, namespace },
    spec: { ...(cls ? { storageClassName: cls } : {}), resources: { requests: { storage: size } } },
    status: { phase, ...(phase === 'Bound' ? { capacity: { storage: size } } : {}) },
  };
}

function node(name: string, disk: string, ready?: { status: string; since?: string }, created?: string): KObject {
  return {
    kind: 'Node',
    metadata: { name, ...(created ? { creationTimestamp: created } : {}) },
    status: {
      capacity: { 'ephemeral-storage': disk },
      conditions: ready
        ? [
            { type: 'MemoryPressure', status: 'False', lastTransitionTime: '2026-01-01T00:00:00Z' },
            { type: 'Ready', status: ready.status, ...(ready.since ? { lastTransitionTime: ready.since } : {}) },
          ]
        : [],
    },
  };
}

describe('storageCapacity', () => {
  it('sums Bound claims per class (a claim without a class is the default one) and estimates over node disks', async () => {
    const cluster = new FakeCluster();
    cluster.put('Node', node('n1', '100Gi'));
    cluster.put('Node', node('n2', '50Gi'));
    cluster.put('PersistentVolumeClaim', pvc('a', 'longhorn', '10Gi'));
    cluster.put('PersistentVolumeClaim', pvc('b', undefined, '5Gi', 'Bound', 'other'));
    cluster.put('PersistentVolumeClaim', pvc('c', 'nfs', '20Gi'));
    cluster.put('PersistentVolumeClaim', pvc('pending', 'longhorn', '99Gi', 'Pending'));
    const services = createCorralServices(cluster);
    const cap = await storageCapacity(services.deps, 'longhorn');
    expect(cap.pool).toEqual({ total: 150 * G, used: 35 * G, avail: 115 * G });
    expect(classCapacity(cap, 'longhorn')).toEqual({ used: 15 * G, total: 150 * G, avail: 115 * G, estimated: true });
    expect(classCapacity(cap, 'nfs')).toEqual({ used: 20 * G, total: 150 * G, avail: 115 * G, estimated: true });
    // A class nobody claimed from yet: nothing used, the shared estimate for the rest.
    expect(classCapacity(cap, 'empty')).toEqual({ used: 0, total: 150 * G, avail: 115 * G, estimated: true });
    services.close();
  });

  it('takes avail from CSIStorageCapacity when the driver publishes it, and leaves those claims out of the pool', async () => {
    const cluster = new FakeCluster();
    cluster.put('Node', node('n1', '100Gi'));
    cluster.put('PersistentVolumeClaim', pvc('a', 'topolvm', '10Gi'));
    cluster.put('PersistentVolumeClaim', pvc('b', 'longhorn', '30Gi'));
    for (const [name, capacity] of [
      ['csisc-1', '40Gi'],
      ['csisc-2', '2Gi'],
    ] as const)
      cluster.put('CSIStorageCapacity', {
        kind: 'CSIStorageCapacity',
        metadata: { name, namespace: 'kube-system' },
        storageClassName: 'topolvm',
        capacity,
      });
    const services = createCorralServices(cluster);
    const cap = await storageCapacity(services.deps, 'longhorn');
    expect(classCapacity(cap, 'topolvm')).toEqual({ used: 10 * G, avail: 42 * G, total: 52 * G, estimated: false });
    expect(classCapacity(cap, 'longhorn')).toEqual({ used: 30 * G, avail: 70 * G, total: 100 * G, estimated: true });
    services.close();
  });

  it('falls back to the estimate when CSIStorageCapacity is not served or not allowed, and fails when the cluster is away', async () => {
    for (const [code, fallsBack] of [
      ['NOT_FOUND', true],
      ['FORBIDDEN', true],
      ['BAD_GATEWAY', false],
    ] as const) {
      const cluster = new FakeCluster();
      cluster.put('Node', node('n1', '10Gi'));
      cluster.fetchList = async (kind) => {
        if (kind === 'CSIStorageCapacity') throw new CorralError(code, `csistoragecapacities: ${code}`);
        return [];
      };
      const services = createCorralServices(cluster);
      const result = storageCapacity(services.deps, 'longhorn');
      if (fallsBack) expect((await result).pool.total).toBe(10 * G);
      else await expect(result).rejects.toThrow(/BAD_GATEWAY/);
      services.close();
    }
  });
});

describe('node uptime', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  it('counts from the Ready transition, falls back to creation, and is 0 for a node that is not Ready', () => {
    const cluster = new FakeCluster();
    cluster.put('Node', node('up', '1Gi', { status: 'True', since: '2026-12-01T11:00:00Z' }));
    cluster.put('Node', node('new', '1Gi', { status: 'True' }, '2026-12-01T11:59:00Z'));
    cluster.put('Node', node('down', '1Gi', { status: 'False', since: '2026-12-01T11:00:00Z' }));
    const services = createCorralServices(cluster);
    expect(nodeUptimeSeconds(services.deps, 'up', now)).toBe(3600);
    expect(nodeUptimeSeconds(services.deps, 'new', now)).toBe(60);
    expect(nodeUptimeSeconds(services.deps, 'down', now)).toBe(0);
    expect(nodeUptimeSeconds(services.deps, 'missing', now)).toBe(0);
    expect(nodeReadySince(node('x', '1Gi'))).toBe(0);
    services.close();
  });
});
