/**
 * The consoles module inside the full embedded cluster: a VM created through client-node is started by the
 * KubeVirt controllers, and its serial console (attached as soon as the VMI runs) shows the boot, then a shell
 * whose `ip addr` matches what the VMI status reports.
 */
import { CustomObjectsApi, KubeConfig, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '../../../src/sim/index.js';
import { StreamSocket, RfbTestClient, wsUrl } from './harness.js';

let cluster: EmbeddedCluster;
let api: CustomObjectsApi;

beforeAll(async () => {
  // Speed 10, not faster: the boot must still be printing when the test's console connects, even on a loaded CI
  // machine (at 40 the whole boot took ~0.5 s and was sometimes over before the WebSocket was open).
  cluster = await startEmbeddedCluster({ fleet: 'empty', speed: 10 });
  const kc = new KubeConfig();
  kc.loadFromString(cluster.kubeconfig);
  api = kc.makeApiClient(CustomObjectsApi);
});
afterAll(() => cluster.close());

const vmiPath = (name: string, sub: string) =>
  `/apis/subresources.kubevirt.io/v1/namespaces/default/virtualmachineinstances/${name}/${sub}`;

async function waitForVmi(name: string, phase: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const vmi = cluster.store.get('kubevirt.io/virtualmachineinstances', 'default', name);
    if ((vmi?.status as { phase?: string } | undefined)?.phase === phase)
      return vmi as unknown as Record<string, unknown>;
    if (Date.now() > deadline) throw new Error(`VMI ${name} never reached ${phase}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function vmBody(name: string, runStrategy: string) {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name },
    spec: {
      runStrategy,
      template: {
        spec: {
          domain: {
            devices: { disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }] },
            resources: { requests: { memory: '1Gi' } },
          },
          volumes: [{ name: 'rootdisk', containerDisk: { image: 'quay.io/containerdisks/fedora:42' } }],
        },
      },
    },
  };
}

it('poweroff inside the guest shuts the VMI down (Succeeded) and closes the console', async () => {
  await api.createNamespacedCustomObject({
    group: 'kubevirt.io',
    version: 'v1',
    namespace: 'default',
    plural: 'virtualmachines',
    body: vmBody('off', 'RerunOnFailure'),
  });
  const vmi = await waitForVmi('off', 'Running');
  const tty = await StreamSocket.open(wsUrl(cluster, vmiPath('off', 'console')));
  await tty.readUntil('off login: ', 15_000);
  tty.send('fedora\r');
  await tty.readUntil('Password: ');
  tty.send('x\r');
  await tty.readUntil('[fedora@off ~]$ ');
  tty.send('poweroff\r');
  expect(await tty.readUntil('[fedora@off ~]$ ')).toContain('Call to PowerOff failed: Access denied');
  tty.send('sudo poweroff\r');
  expect(await tty.readUntil('reboot: Power down')).toContain('Reached target poweroff.target');
  expect(await tty.waitClosed()).toEqual({ code: 1000, reason: 'VMI is not running' });
  const stopped = cluster.store.get('kubevirt.io/virtualmachineinstances', 'default', 'off');
  // RerunOnFailure does not restart after a clean guest shutdown; the same VMI stays Succeeded (or is cleaned up).
  if (stopped) {
    expect(stopped.metadata.uid).toBe((vmi as { metadata: { uid: string } }).metadata.uid);
    expect((stopped.status as { phase: string }).phase).toBe('Succeeded');
  }
});

it('a VM started through the API boots on its serial console and reports its real IP', async () => {
  await api.createNamespacedCustomObject({
    group: 'kubevirt.io',
    version: 'v1',
    namespace: 'default',
    plural: 'virtualmachines',
    body: {
      apiVersion: 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      metadata: { name: 'e2e' },
      spec: {
        runStrategy: 'Always',
        template: {
          spec: {
            domain: {
              devices: { disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }] },
              resources: { requests: { memory: '1Gi' } },
            },
            volumes: [{ name: 'rootdisk', containerDisk: { image: 'quay.io/containerdisks/fedora:42' } }],
          },
        },
      },
    },
  });
  const vmi = await waitForVmi('e2e', 'Running');
  const ip = (vmi.status as { interfaces: { ipAddress: string }[] }).interfaces[0]!.ipAddress;
  expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);

  const tty = await StreamSocket.open(wsUrl(cluster, vmiPath('e2e', 'console')));
  const boot = await tty.readUntil('e2e login: ', 15_000);
  expect(boot).toContain('Reached target multi-user.target');
  tty.send('fedora\r');
  await tty.readUntil('Password: ');
  tty.send('x\r');
  await tty.readUntil('[fedora@e2e ~]$ ');
  tty.send('ip -br a\r');
  const out = await tty.readUntil('[fedora@e2e ~]$ ');
  expect(out).toContain(`${ip}/24`);

  const vnc = new RfbTestClient(await StreamSocket.open(wsUrl(cluster, vmiPath('e2e', 'vnc'))));
  await vnc.handshake();
  expect(vnc.name).toBe('e2e');
  vnc.requestUpdate(false);
  await vnc.readUpdate();
  expect(vnc.screenText()).toContain('e2e login:');
  vnc.stream.close();

  // Stopping the VM closes the console.
  await api.patchNamespacedCustomObject(
    {
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'default',
      plural: 'virtualmachines',
      name: 'e2e',
      body: { spec: { runStrategy: 'Halted' } },
    },
    // client-node 2 sends JSON patch by default; a merge patch needs the content type set explicitly.
    setHeaderOptions('Content-Type', 'application/merge-patch+json'),
  );
  const closed = await tty.waitClosed(15_000);
  expect(closed.code).toBe(1000);
});
