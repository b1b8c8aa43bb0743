/**
 * Writing a VM straight into its final state — VM, VMI with a Running status and a Running virt-launcher pod —
 * instead of walking the state machines with timers. This is what lets a 10,000-VM fleet seed in seconds; the
 * controllers then adopt the objects (the VM controller derives the VM status from the VMI as usual).
 */
import { recordEvent } from '../events.js';
import type { ObjectStore } from '../store/object-store.js';
import { nowTimestamp } from '../store/object-store.js';
import type { KObject, NewObject } from '../store/types.js';
import { guestImageOf } from '../kubevirt/guest-images.js';
import { K, VMI_FINALIZER } from '../kubevirt/keys.js';
import { markPodRunning } from '../kubevirt/kubelet.js';
import { launcherPod } from '../kubevirt/launcher-pod.js';
import type { Json } from '../kubevirt/objects.js';
import { dig, digRecord, digString, hash32, ownerRef, setCondition, status } from '../kubevirt/objects.js';
import { expandDomain } from '../kubevirt/sizing.js';
import { applyVmStatus } from '../kubevirt/vm-controller.js';
import { applyRunningStatus } from '../kubevirt/vmi-status.js';

export type SeedState = 'Running' | 'Paused' | 'Controlled';

/** Pod IPs for seeded pods: next free host per node CIDR (the kubelet's allocator learns them from events). */
export class SeedIps {
  private readonly next = new Map<string, number>();

  take(node: KObject): string {
    const cidr = digString(node, 'spec', 'podCIDR') ?? '10.42.0.0/24';
    const prefix = cidr.split('/')[0]!.split('.').slice(0, 3).join('.');
    const host = this.next.get(node.metadata.name) ?? 2;
    if (host > 254) throw new Error(`pod CIDR ${cidr} of node ${node.metadata.name} is exhausted`);
    this.next.set(node.metadata.name, host + 1);
    return `${prefix}.${host}`;
  }
}

const SUFFIX_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function stableSuffix(seed: string): string {
  let h = hash32(seed);
  let s = '';
  for (let i = 0; i < 5; i++) {
    s += SUFFIX_ALPHABET[h % SUFFIX_ALPHABET.length];
    h = Math.floor(h / SUFFIX_ALPHABET.length) + hash32(`${seed}/${i}`);
  }
  return s;
}

/**
 * Create `vm`; for `Running`/`Paused` also its VMI and launcher pod on `nodeName`, already booted (guest agent
 * connected when the image has one). `Controlled` leaves the VM to the controllers (stopped, provisioning …).
 */
export interface SeedOptions {
  /** Also record the Events the start would have produced (the demo does; 10,000 VMs do not need them). */
  events?: boolean;
}

export function seedVm(
  store: ObjectStore,
  ips: SeedIps,
  vm: NewObject,
  state: SeedState,
  nodeName?: string,
  options: SeedOptions = {},
): KObject {
  if (state === 'Controlled') {
    // A halted VM's status needs no VMI: write it with the VM (the controller computes the others).
    if ((vm.spec as Json | undefined)?.runStrategy === 'Halted')
      applyVmStatus(store, vm as KObject, undefined, { observedGeneration: 1 });
    return store.create(K.vms, vm);
  }
  const node = nodeName ? store.get(K.nodes, undefined, nodeName) : undefined;
  if (!node) throw new Error(`seeding ${String(vm.metadata.name)}: node ${String(nodeName)} does not exist`);
  const vmDraft = vm as KObject;
  const template = digRecord(vmDraft, 'spec', 'template') ?? {};
  const spec = JSON.parse(JSON.stringify(digRecord(template, 'spec') ?? {})) as Json;
  spec.domain = expandDomain(store, vmDraft, template);
  spec.architecture ??= 'amd64';
  spec.terminationGracePeriodSeconds ??= 180;
  const podIp = ips.take(node);

  // Every store write clones the whole object, and a 10,000-VM fleet pays for each one: so the VMI's Running
  // status and the VM status derived from it are built before the first write, leaving one write per object
  // plus the VMI's activePods, which names the pod's uid and so has to wait for the pod.
  const vmiDraft: KObject = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name: String(vm.metadata.name),
      namespace: vm.metadata.namespace,
      labels: {
        ...((dig(template, 'metadata', 'labels') as Record<string, string> | undefined) ?? {}),
        'kubevirt.io/vm': String(vm.metadata.name),
      },
      annotations: { 'kubevirt.io/vm-generation': '1', 'kubevirt.io/latest-observed-api-version': 'v1' },
      finalizers: [VMI_FINALIZER],
    } as unknown as KObject['metadata'],
    spec,
  };
  const at = nowTimestamp();
  vmiDraft.status = {
    phase: 'Scheduled',
    phaseTransitionTimestamps: ['Pending', 'Scheduling', 'Scheduled'].map((phase) => ({
      phase,
      phaseTransitionTimestamp: at,
    })),
  };
  const image = guestImageOf(store, vmiDraft, digString(vmDraft, 'spec', 'preference', 'name'));
  applyRunningStatus(store, vmiDraft, { node: node.metadata.name, podIp }, image.hasAgent ? image : undefined);
  if (state === 'Paused')
    setCondition(vmiDraft, {
      type: 'Paused',
      status: 'True',
      reason: 'PausedByUser',
      message: 'VMI was paused by user',
      probe: true,
    });
  applyVmStatus(store, vmDraft, vmiDraft, { observedGeneration: 1 });

  const created = store.create(K.vms, vm);
  (spec.domain as Json).firmware = { uuid: created.metadata.uid };
  vmiDraft.metadata.ownerReferences = [ownerRef(created)];
  const vmi = store.create(K.vmis, vmiDraft as NewObject);

  const pod = launcherPod(vmi) as KObject;
  (pod.spec as Json).nodeName = node.metadata.name;
  pod.metadata.name = `virt-launcher-${vmi.metadata.name}-${stableSuffix(`${vmi.metadata.namespace}/${vmi.metadata.name}`)}`;
  delete pod.metadata.generateName;
  markPodRunning(pod, node, podIp);
  const podCreated = store.create(K.pods, pod);
  const running = store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
    status(v).activePods = { [podCreated.metadata.uid]: node.metadata.name };
  });
  if (options.events && running) {
    recordEvent(
      store,
      created,
      'SuccessfulCreate',
      `Started the virtual machine by creating the new virtual machine instance ${vmi.metadata.name}`,
    );
    recordEvent(
      store,
      podCreated,
      'Scheduled',
      `Successfully assigned ${vmi.metadata.namespace}/${podCreated.metadata.name} to ${node.metadata.name}`,
      { component: 'default-scheduler' },
    );
    recordEvent(store, running, 'Created', 'VirtualMachineInstance defined.', { component: 'virt-handler' });
    recordEvent(store, running, 'Started', 'VirtualMachineInstance started.', { component: 'virt-handler' });
  }
  return created;
}
