/**
 * Writing a VM straight into its final state — VM, VMI with a Running status and a Running virt-launcher pod —
 * instead of walking the state machines with timers. This is what lets a 10,000-VM fleet seed in seconds; the
 * controllers then adopt the objects (the VM controller derives the VM status from the VMI as usual).
 */
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
export function seedVm(store: ObjectStore, ips: SeedIps, vm: NewObject, state: SeedState, nodeName?: string): KObject {
  const created = store.create(K.vms, vm);
  if (state === 'Controlled') return created;
  const node = nodeName ? store.get(K.nodes, undefined, nodeName) : undefined;
  if (!node) throw new Error(`seeding ${created.metadata.name}: node ${String(nodeName)} does not exist`);
  const template = digRecord(created, 'spec', 'template') ?? {};
  const spec = JSON.parse(JSON.stringify(digRecord(template, 'spec') ?? {})) as Json;
  spec.domain = { ...expandDomain(store, created, template), firmware: { uuid: created.metadata.uid } };
  spec.architecture ??= 'amd64';
  spec.terminationGracePeriodSeconds ??= 180;
  const podIp = ips.take(node);
  const vmiInput: NewObject = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: {
      name: created.metadata.name,
      namespace: created.metadata.namespace,
      labels: { ...((dig(template, 'metadata', 'labels') as Record<string, string> | undefined) ?? {}), 'kubevirt.io/vm': created.metadata.name },
      annotations: { 'kubevirt.io/vm-generation': String(created.metadata.generation ?? 1), 'kubevirt.io/latest-observed-api-version': 'v1' },
      finalizers: [VMI_FINALIZER],
      ownerReferences: [ownerRef(created)],
    },
    spec,
  };
  // Build the whole Running status before the first write: every store write clones the object, and a 10,000-VM
  // fleet pays for each one. Only activePods (keyed by the pod's uid) has to wait for the pod to exist.
  const draft = vmiInput as KObject;
  const at = nowTimestamp();
  draft.status = {
    phase: 'Scheduled',
    phaseTransitionTimestamps: ['Pending', 'Scheduling', 'Scheduled'].map((phase) => ({ phase, phaseTransitionTimestamp: at })),
  };
  const image = guestImageOf(store, draft, digString(created, 'spec', 'preference', 'name'));
  applyRunningStatus(store, draft, { node: node.metadata.name, podIp }, image.hasAgent ? image : undefined);
  if (state === 'Paused') setCondition(draft, { type: 'Paused', status: 'True', reason: 'PausedByUser', message: 'VMI was paused by user', probe: true });
  const vmi = store.create(K.vmis, vmiInput);

  const pod = launcherPod(vmi) as KObject;
  (pod.spec as Json).nodeName = node.metadata.name;
  pod.metadata.name = `virt-launcher-${vmi.metadata.name}-${stableSuffix(`${vmi.metadata.namespace}/${vmi.metadata.name}`)}`;
  delete pod.metadata.generateName;
  markPodRunning(pod, node, podIp);
  const podCreated = store.create(K.pods, pod);
  store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
    status(v).activePods = { [podCreated.metadata.uid]: node.metadata.name };
  });
  return created;
}
