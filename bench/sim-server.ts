/**
 * The server side of `npm run bench:sim`, in its own process so its RSS is measured alone: an embedded cluster
 * (API machinery + GC only) holding N realistic VirtualMachines written straight into the store.
 * Prints `ready <url>` when serving.
 */
import { garbageCollectorModule } from '../src/sim/gc/index.js';
import { startEmbeddedCluster } from '../src/sim/index.js';
import { resourceKey } from '../src/sim/store/types.js';

const count = Number(process.argv[2] ?? '10000');
const cluster = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [garbageCollectorModule()] });
const store = cluster.store;
store.create(resourceKey('', 'namespaces'), {
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name: 'bench' },
  spec: { finalizers: ['kubernetes'] },
  status: { phase: 'Active' },
});
for (let i = 0; i < count; i++) {
  const name = `vm-${String(i).padStart(5, '0')}`;
  const running = i % 3 !== 0;
  store.create(resourceKey('kubevirt.io', 'virtualmachines'), {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace: 'bench',
      labels: {
        app: `app-${i % 50}`,
        'corral.dev/tag.bench': '',
        ...(i % 10 === 0 ? { 'corral.dev/tag.prod': '' } : {}),
      },
      annotations: { 'corral.dev/description': `Generated VM number ${i} for the list benchmark` },
    },
    spec: {
      runStrategy: running ? 'Always' : 'Halted',
      instancetype: { kind: 'VirtualMachineClusterInstancetype', name: 'u1.medium' },
      preference: { kind: 'VirtualMachineClusterPreference', name: 'fedora' },
      dataVolumeTemplates: [
        {
          metadata: { name: `${name}-rootdisk` },
          spec: {
            source: { registry: { url: 'docker://quay.io/containerdisks/fedora:42' } },
            storage: { resources: { requests: { storage: '30Gi' } } },
          },
        },
      ],
      template: {
        metadata: { labels: { 'kubevirt.io/domain': name } },
        spec: {
          domain: {
            devices: {
              disks: [
                { name: 'rootdisk', disk: { bus: 'virtio' } },
                { name: 'cloudinit', disk: { bus: 'virtio' } },
              ],
              interfaces: [{ name: 'default', masquerade: {} }],
            },
            resources: {},
          },
          networks: [{ name: 'default', pod: {} }],
          volumes: [
            { name: 'rootdisk', dataVolume: { name: `${name}-rootdisk` } },
            {
              name: 'cloudinit',
              cloudInitNoCloud: {
                userData: '#cloud-config\nuser: fedora\npassword: fedora\nchpasswd: { expire: False }\n',
              },
            },
          ],
        },
      },
    },
    status: {
      printableStatus: running ? 'Running' : 'Stopped',
      ready: running,
      created: running,
      conditions: [
        {
          type: 'Ready',
          status: running ? 'True' : 'False',
          lastTransitionTime: '2026-11-30T09:00:00Z',
          lastProbeTime: null,
        },
      ],
      volumeSnapshotStatuses: [{ name: 'rootdisk', enabled: true }],
    },
  });
}
console.log(`ready ${cluster.url}`);

// `update <n>` on stdin: n status-style writes straight into the store (as controllers make them), so the bench can
// time watch fan-out without the cost of n API round trips. Answers `updated <n>` when done.
let input = '';
process.stdin.on('data', (chunk: Buffer) => {
  input += chunk.toString();
  let nl;
  while ((nl = input.indexOf('\n')) >= 0) {
    const line = input.slice(0, nl).trim();
    input = input.slice(nl + 1);
    const m = /^update (\d+)$/.exec(line);
    if (!m) continue;
    const n = Number(m[1]);
    for (let i = 0; i < n; i++) {
      const name = `vm-${String(i % count).padStart(5, '0')}`;
      store.mutate(resourceKey('kubevirt.io', 'virtualmachines'), 'bench', name, (vm) => {
        vm.status = { ...(vm.status as object), observedGeneration: i };
      });
    }
    console.log(`updated ${n}`);
  }
});
process.on('SIGTERM', () => {
  void cluster.close().then(() => process.exit(0));
});
