/**
 * Where a VM could be migrated to — live when it runs, offline (pinned, vm-pin.ts) when it is stopped — and what
 * holds it back: the facts behind PVE's `GET …/migrate` (allowed nodes, refused nodes with reasons, local disks).
 * Read from the watch cache only: KubeVirt itself decides at migration time, and these are the rules it applies that
 * Corral can see beforehand (the VMI's LiveMigratable condition, every PVC shared, the target Ready and schedulable,
 * the node-labeller's CPU vendor on both ends of a live migration).
 */
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { requireVm } from './vm-actions';
import {
  asArray,
  asDict,
  asString,
  isLiveMigratable,
  pinnedNode,
  printableStatus,
  vmVolumes,
  vmiActive,
  vmiNode,
  vmiPhase,
} from './vm-facts';

/** KubeVirt's node-labeller marks each node with its CPU vendor; a migration target must share the source's. */
export const CPU_VENDOR_PREFIX = 'cpu-vendor.node.kubevirt.io/';

export interface MigrationNode {
  name: string;
  /** Why the VM cannot move there now; empty when it can. */
  reasons: string[];
}

export interface MigrationDisk {
  /** The volume's name in the VM spec. */
  volume: string;
  claim: string;
  /** The claim's requested size in bytes (0 when unknown). */
  sizeBytes: number;
  storageClass: string;
  /** ReadWriteMany: reachable from every node, so a live migration keeps using it. */
  shared: boolean;
}

export interface MigrationCheck {
  running: boolean;
  /** Where the VM runs now; when stopped, the node it is pinned to ('' when it is not pinned). */
  node: string;
  /** Every node but the current one, with its reasons (none = allowed). */
  targets: MigrationNode[];
  /** The VM's PVC-backed volumes; the ones not shared block a live migration. */
  disks: MigrationDisk[];
  /**
   * Why the VM cannot move at all ('' when it may): a running VM that KubeVirt will not live-migrate, or a VM that is
   * neither running nor stopped (starting, stopping). A stopped VM moves offline: it is pinned (vm-pin.ts).
   */
  blocker: string;
}

const vendorOf = (node: KObject | undefined): string | undefined =>
  Object.keys(node?.metadata.labels ?? {}).find(
    (l) => l.startsWith(CPU_VENDOR_PREFIX) && node?.metadata.labels?.[l] === 'true',
  );

function nodeReady(node: KObject): boolean {
  return asArray(asDict(node.status).conditions)
    .map(asDict)
    .some((c) => c.type === 'Ready' && c.status === 'True');
}

export function migrationCheck(deps: DomainDeps, namespace: string, name: string): MigrationCheck {
  const vm = requireVm(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const running = vmiActive(vmi) && vmiPhase(vmi) === 'Running';
  const stopped = !vmiActive(vmi) && printableStatus(vm) === 'Stopped';
  const node = running ? vmiNode(vmi) : pinnedNode(vm);
  const disks: MigrationDisk[] = [];
  for (const v of vmVolumes(vm)) {
    if (!v.claim) continue;
    const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, v.claim);
    const spec = asDict(pvc?.spec);
    const modes = asArray(spec.accessModes).map(asString);
    const capacity = asString(asDict(asDict(pvc?.status).capacity).storage);
    const requested = asString(asDict(asDict(spec.resources).requests).storage);
    disks.push({
      volume: v.volume,
      claim: v.claim,
      sizeBytes: Math.round(quantityToNumber(capacity || requested)) || 0,
      storageClass: asString(spec.storageClassName),
      shared: modes.includes('ReadWriteMany'),
    });
  }
  let blocker = '';
  if (!running && !stopped) blocker = `VM ${namespace}/${name} is ${printableStatus(vm)}`;
  else if (running) {
    const live = isLiveMigratable(vmi);
    if (!live.ok) blocker = live.reason || 'the VMI is not live-migratable';
  }
  // A stopped VM starts fresh on its new node, so only a live migration keeps the CPU vendor.
  const sourceVendor = vendorOf(running && node ? deps.cluster.cache.get('Node', undefined, node) : undefined);
  const targets: MigrationNode[] = [];
  for (const n of [...deps.cluster.cache.list('Node')].sort((a, b) =>
    (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
  )) {
    const nodeName = n.metadata.name ?? '';
    if (nodeName === node) continue;
    const reasons: string[] = [];
    if (!nodeReady(n)) reasons.push('node is not Ready');
    if (asDict(n.spec).unschedulable === true) reasons.push('node is cordoned (unschedulable)');
    if (n.metadata.labels?.['kubevirt.io/schedulable'] === 'false') reasons.push('KubeVirt cannot schedule VMs there');
    const vendor = vendorOf(n);
    if (sourceVendor && vendor !== sourceVendor)
      reasons.push(
        `CPU vendor ${vendor ? vendor.slice(CPU_VENDOR_PREFIX.length) : 'unknown'} differs from the source's ${sourceVendor.slice(CPU_VENDOR_PREFIX.length)}`,
      );
    targets.push({ name: nodeName, reasons });
  }
  return { running, node, targets, disks, blocker };
}
