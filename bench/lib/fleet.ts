/**
 * What the API benchmarks share: a fleet of N VMs (half running, each with a VMI on one of three nodes and a
 * Proxmox vmid label) written straight into a controller-less embedded apiserver, and percentile arithmetic.
 */
import type { ObjectStore } from '../../src/sim/store/object-store';
import { resourceKey } from '../../src/sim/store/types';

export function seedBenchFleet(store: ObjectStore, n: number): void {
  store.create(resourceKey('', 'namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'bench' } });
  for (let i = 1; i <= 3; i++) {
    store.create(resourceKey('', 'nodes'), {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: `corral-${i}` },
      status: {
        conditions: [{ type: 'Ready', status: 'True' }],
        allocatable: { cpu: '32', memory: '128Gi' },
        capacity: { cpu: '32', memory: '128Gi' },
      },
    });
  }
  const vms = resourceKey('kubevirt.io', 'virtualmachines');
  const vmis = resourceKey('kubevirt.io', 'virtualmachineinstances');
  for (let i = 0; i < n; i++) {
    const name = `vm-${String(i).padStart(5, '0')}`;
    const running = i % 2 === 0;
    store.create(vms, {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: {
        name,
        namespace: 'bench',
        labels: {
          'corral.dev/vm': name,
          'corral.io/proxmox-vmid': String(1000 + i),
          ...(i % 5 === 0 ? { 'corral.dev/tag.prod': 'true' } : {}),
        },
      },
      spec: {
        runStrategy: running ? 'Always' : 'Halted',
        template: {
          metadata: { labels: { 'kubevirt.io/domain': name } },
          spec: {
            domain: {
              cpu: { sockets: 2, cores: 1, threads: 1 },
              memory: { guest: '4Gi' },
              devices: { disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }] },
            },
            volumes: [{ name: 'rootdisk', containerDisk: { image: 'quay.io/containerdisks/fedora:42' } }],
          },
        },
      },
      status: { printableStatus: running ? 'Running' : 'Stopped', ready: running, created: running },
    });
    if (running) {
      store.create(vmis, {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstance',
        metadata: {
          name,
          namespace: 'bench',
          labels: { 'kubevirt.io/domain': name },
          ownerReferences: [{ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', name, uid: 'x', controller: true }],
        },
        spec: { domain: { devices: {} } },
        status: {
          phase: 'Running',
          nodeName: `corral-${(i % 3) + 1}`,
          memory: { guestCurrent: '4Gi' },
          phaseTransitionTimestamps: [
            { phase: 'Running', phaseTransitionTimestamp: new Date(Date.now() - 3_600_000).toISOString() },
          ],
          interfaces: [{ name: 'default', ipAddress: `10.42.${(i >> 8) & 255}.${i & 255}` }],
          conditions: [{ type: 'Ready', status: 'True' }],
        },
      });
    }
  }
}

export function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}
