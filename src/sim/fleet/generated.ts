/**
 * The benchmark fleet: N VMs (up to 10,000) over `fleet-NN` namespaces and enough worker nodes for their
 * launcher pods (110 pods per node, like kubelet's default), most of them Running, some Paused or Stopped.
 * Everything is written in its final state, so seeding takes seconds.
 */
import type { ObjectStore } from '../store/object-store.js';
import { K } from '../kubevirt/keys.js';
import type { NodeShape } from './baseline.js';
import { BASELINE_NODES, ensure, namespace } from './baseline.js';
import { SeedIps, seedVm } from './seed-vm.js';
import { vmManifest } from './vm-builder.js';

export const MAX_GENERATED_VMS = 10_000;
const VMS_PER_NAMESPACE = 1000;
/** Leave headroom under kubelet's 110-pod limit for containers, hot-plug and migration target pods. */
const LAUNCHERS_PER_NODE = 90;
const IMAGES = [
  'quay.io/containerdisks/fedora:42',
  'quay.io/containerdisks/ubuntu:24.04',
  'quay.io/containerdisks/debian:12',
  'quay.io/containerdisks/centos-stream:9',
  'quay.io/containerdisks/cirros:6.2',
];
const TAGS = ['prod', 'web', 'db', 'dev', 'ci', 'lab'];

/** Baseline nodes plus workers (alternating Intel/AMD) so every running VM has room. */
export function generatedNodes(count: number): NodeShape[] {
  const workers = Math.max(0, Math.ceil(count / LAUNCHERS_PER_NODE) - BASELINE_NODES.length);
  const extra: NodeShape[] = Array.from({ length: workers }, (_, i) => ({
    name: `corral-${BASELINE_NODES.length + i + 1}`,
    vendor: i % 2 === 0 ? 'Intel' : 'AMD',
    cpus: 64,
    memoryGi: 512,
  }));
  return [...BASELINE_NODES, ...extra];
}

export function seedGenerated(store: ObjectStore, count: number, nodes: NodeShape[]): void {
  if (!Number.isInteger(count) || count < 0 || count > MAX_GENERATED_VMS) {
    throw new Error(`fleet size must be an integer between 0 and ${MAX_GENERATED_VMS}, got ${count}`);
  }
  const ips = new SeedIps();
  const namespaces = Math.max(1, Math.ceil(count / VMS_PER_NAMESPACE));
  for (let n = 0; n < namespaces; n++) ensure(store, K.namespaces, namespace(`fleet-${String(n).padStart(2, '0')}`));
  const width = String(count).length;
  let running = 0;
  for (let i = 0; i < count; i++) {
    const name = `vm-${String(i + 1).padStart(Math.max(5, width), '0')}`;
    const ns = `fleet-${String(i % namespaces).padStart(2, '0')}`;
    // 80 % Running, 10 % Paused, 10 % Stopped.
    const state = i % 10 === 9 ? 'Controlled' : i % 10 === 8 ? 'Paused' : 'Running';
    const manifest = vmManifest({
      name,
      namespace: ns,
      runStrategy: state === 'Controlled' ? 'Halted' : 'Always',
      tags: [TAGS[i % TAGS.length]!],
      containerDisk: IMAGES[i % IMAGES.length],
      sockets: 1 + (i % 2),
      memory: i % 3 === 0 ? '2Gi' : '1Gi',
    });
    const node =
      state === 'Controlled' ? undefined : nodes[Math.floor(running++ / LAUNCHERS_PER_NODE) % nodes.length]!.name;
    seedVm(store, ips, manifest, state, node);
  }
}
