/**
 * VM rows and node rows, derived from the watch cache and kept current by its change events. Rows are recomputed
 * only for the VMs an event touches, and each row keeps its JSON text, so `GET /api/vms` on 10,000 VMs is a join
 * of cached strings rather than a walk over five object kinds (see bench/api.ts). The fleet view also owns the vmid
 * index (`vmids.ts`), so a row's `vmid` is the id `/api2/json` addresses the same VM by; containers (their data
 * PVCs) are fed into the same index, so a VM and a CT never share a vmid.
 */
import type { NodeRow } from '../schemas/nodes';
import type { VmRow } from '../schemas/vms';
import type { CachedKind, ChangeEvent, ClusterCache, ClusterPort, KObject } from './cluster-port';
import { ctClaimSpec, ctVmidSourceOf, dataClaimName, LABEL_CT, LABEL_CT_NAME } from './ct-spec';
import { LABEL_VM } from './labels';
import { cpuToCores } from './quantity';
import { firstByName, type FirstPage } from './vm-first-page';
import { VmidIndex, fallbackVmid, labelVmid, vmidSourceOf, type VmidSource, type VmRef } from './vmids';
import {
  asArray,
  asDict,
  asString,
  claimSize,
  dataVolumeTemplate,
  guestOs,
  isTemplate,
  pinnedNode,
  printableStatus,
  refName,
  rootVolume,
  runStrategy,
  vmCpu,
  vmiActive,
  vmiAddress,
  vmiNode,
  vmMem,
  vmReady,
  vmTags,
} from './vm-facts';

export const vmKey = (namespace: string, name: string): string => `${namespace}/${name}`;
const ctKey = (namespace: string, name: string): string => `ct:${namespace}/${name}`;

function rootDiskSize(vm: KObject, cache: ClusterCache): string {
  const root = rootVolume(vm);
  if (!root || !root.claim) return '';
  const ns = vm.metadata.namespace ?? '';
  if (root.kind === 'dataVolume') {
    const dv = cache.get('DataVolume', ns, root.claim);
    const size = claimSize(dv) || claimSize(dataVolumeTemplate(vm, root.claim));
    if (size) return size;
  }
  const pvc = cache.get('PersistentVolumeClaim', ns, root.claim);
  return asString(asDict(asDict(pvc?.status).capacity).storage) || claimSize(pvc);
}

/** `context`: the kube context the row belongs to ('' where only one cluster is in view, as in unit tests). */
export function buildVmRow(vm: KObject, cache: ClusterCache, vmid: number, context = ''): VmRow {
  const namespace = vm.metadata.namespace ?? '';
  const name = vm.metadata.name ?? '';
  const vmi = cache.get('VirtualMachineInstance', namespace, name);
  const spec = asDict(vm.spec);
  return {
    context,
    name,
    namespace,
    status: printableStatus(vm),
    ready: vmReady(vm),
    running: vmiActive(vmi),
    cpu: vmCpu(vm, vmi),
    mem: vmMem(vm, vmi),
    disk: rootDiskSize(vm, cache),
    ip: vmiAddress(vmi),
    // Where it runs; a VM that is not running is shown on the node it is pinned to (vm-pin.ts), if any.
    node: vmiNode(vmi) || pinnedNode(vm),
    tags: vmTags(vm),
    template: isTemplate(vm),
    uid: vm.metadata.uid ?? '',
    createdAt: vm.metadata.creationTimestamp ?? '',
    runStrategy: runStrategy(vm),
    instancetype: refName(spec.instancetype),
    preference: refName(spec.preference),
    os: guestOs(vmi),
    vmid,
  };
}

export function buildNodeRow(node: KObject, cache: ClusterCache, context = ''): NodeRow {
  const labels = node.metadata.labels ?? {};
  const status = asDict(node.status);
  const info = asDict(status.nodeInfo);
  const ready = asArray(status.conditions).some((c) => asDict(c).type === 'Ready' && asDict(c).status === 'True');
  const roles = Object.keys(labels)
    .filter((k) => k.startsWith('node-role.kubernetes.io/'))
    .map((k) => k.slice('node-role.kubernetes.io/'.length))
    .sort();
  const vendor = Object.keys(labels).find((k) => k.startsWith('cpu-vendor.node.kubevirt.io/') && labels[k] === 'true');
  const name = node.metadata.name ?? '';
  const address = asArray(status.addresses)
    .map(asDict)
    .find((a) => a.type === 'InternalIP');
  return {
    context,
    name,
    ready,
    roles: roles.join(','),
    kubelet: asString(info.kubeletVersion),
    arch: asString(info.architecture) || (labels['kubernetes.io/arch'] ?? ''),
    schedulable: asDict(node.spec).unschedulable !== true && labels['kubevirt.io/schedulable'] !== 'false',
    cpu: cpuToCores(asString(asDict(status.allocatable).cpu) || asString(asDict(status.capacity).cpu)),
    memory: asString(asDict(status.allocatable).memory) || asString(asDict(status.capacity).memory),
    ip: asString(address?.address),
    cpuVendor: vendor ? vendor.slice('cpu-vendor.node.kubevirt.io/'.length) : '',
    vms: cache.onNode('VirtualMachineInstance', name).filter(vmiActive).length,
  };
}

export type FleetDelta =
  | { type: 'vm'; op: 'upsert'; vm: VmRow }
  | { type: 'vm'; op: 'delete'; namespace: string; name: string }
  | { type: 'node'; op: 'upsert'; node: NodeRow }
  | { type: 'node'; op: 'delete'; name: string };

interface Cached<T> {
  row: T;
  json: string;
}

/** The live fleet: rows for every VM and node, patched on each cache event, with change notifications. */
export class FleetView {
  private vms: Map<string, Cached<VmRow>> | undefined;
  private nodes: Map<string, Cached<NodeRow>> | undefined;
  private listJson: Buffer | undefined;
  /** Bumped whenever a VM row is added, changed or removed: what the cached first page is checked against. */
  private rowsVersion = 0;
  private firstPageCache: { version: number; limit: number; page: FirstPage } | undefined;
  private vmsUnsorted = false;
  private readonly listeners = new Set<(delta: FleetDelta) => void>();
  private readonly unsubscribe: () => void;
  private readonly index = new VmidIndex((ref, vmid) => this.assigned(ref, vmid));
  /** VMs whose index entry moved while another row was being built: their rows are rebuilt right after. */
  private readonly moved = new Set<string>();
  /** VMs being deleted (`namespace/name` → uid) whose vmid is already free again; their rows keep the old id. */
  private readonly retired = new Map<string, string>();
  /** Persists an id the index chose (a collision's newcomer) as the VM's label; set by the services. */
  persistVmid: (ref: VmRef, vmid: number) => void = () => {};

  constructor(private readonly cluster: ClusterPort) {
    this.unsubscribe = cluster.onChange((e) => this.apply(e));
  }

  /** The one vmid index (rows built first, so every VM in the cache is in it). */
  get vmids(): VmidIndex {
    this.rawVmMap();
    return this.index;
  }

  /** A container's vmid (its data PVC's entry in the shared index), undefined when it is not (or no longer) a CT. */
  ctVmid(namespace: string, name: string): number | undefined {
    return this.vmids.vmidOf({ namespace, name, kind: 'ct' });
  }

  /**
   * A CT deleted through an API frees its vmid at once, while its PVC finalises; `uid` is the deleted PVC's, so a
   * new CT under the same name is indexed normally.
   */
  retireCtVmid(namespace: string, name: string, uid: string): void {
    const pvc = this.cluster.cache.get('PersistentVolumeClaim', namespace, dataClaimName(name));
    if (pvc?.metadata.uid !== uid) return;
    this.retired.set(ctKey(namespace, name), uid);
    this.index.remove({ namespace, name, kind: 'ct' });
  }

  /**
   * A VM deleted through an API stops holding its vmid at once, while its object finalises (Terraform recreates
   * it right away under the same vmid). A no-op when the cache already dropped it or a new VM holds the name.
   */
  retireVmid(ref: VmRef, uid: string): void {
    if (this.vmRow(ref.namespace, ref.name)?.uid !== uid) return;
    this.retired.set(vmKey(ref.namespace, ref.name), uid);
    this.index.remove(ref);
  }

  close(): void {
    this.unsubscribe();
    this.listeners.clear();
  }

  subscribe(listener: (delta: FleetDelta) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  vmRows(): VmRow[] {
    return [...this.vmMap().values()].map((c) => c.row);
  }

  /** `GET /api/vms` body: the cached JSON of every row, sorted by namespace/name, already UTF-8 encoded. */
  vmRowsJson(): Buffer {
    this.listJson ??= Buffer.from(`[${[...this.vmMap().values()].map((c) => c.json).join(',')}]`, 'utf8');
    return this.listJson;
  }

  /**
   * The first `limit` VMs in the table's order with the fleet's counts (`GET /api/vms?limit=`, the Datacenter's
   * first screen), computed once per fleet version: at 50,000 VMs each cold load would otherwise copy every row and
   * compare each against the page (docs/scale.md).
   */
  vmFirstPage(limit: number): FirstPage {
    const cached = this.firstPageCache;
    this.rawVmMap(); // built (and versioned) before the version is read
    if (cached && cached.version === this.rowsVersion && cached.limit === limit) return cached.page;
    const rows = this.vmRows();
    let templates = 0;
    let running = 0;
    for (const row of rows) {
      if (row.template) templates++;
      else if (row.status === 'Running') running++;
    }
    const page: FirstPage = { rows: firstByName(rows, limit), total: rows.length, templates, running };
    this.firstPageCache = { version: this.rowsVersion, limit, page };
    return page;
  }

  vmRow(namespace: string, name: string): VmRow | undefined {
    return this.vmMap().get(vmKey(namespace, name))?.row;
  }

  nodeRows(): NodeRow[] {
    return [...this.nodeMap().values()].map((c) => c.row);
  }

  nodeRow(name: string): NodeRow | undefined {
    return this.nodeMap().get(name)?.row;
  }

  /** Rows in namespace/name order (for reads). */
  private vmMap(): Map<string, Cached<VmRow>> {
    const map = this.rawVmMap();
    if (this.vmsUnsorted) {
      // New VMs were appended; restore the order once, at read time, never per insert (a 10k-VM sync would be
      // quadratic otherwise).
      this.vms = new Map([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
      this.vmsUnsorted = false;
      return this.vms;
    }
    return map;
  }

  /** Rows in whatever order they were added (for updates). */
  private rawVmMap(): Map<string, Cached<VmRow>> {
    if (!this.vms) {
      const vms = this.cluster.cache.list('VirtualMachine');
      // Labels first, then unlabelled VMs and CTs oldest first: the ids do not depend on list order.
      this.index.rebuild([...vms.filter((vm) => !this.isRetired(vm)).map(vmidSourceOf), ...this.ctSources()]);
      this.moved.clear();
      const entries = vms
        .map((vm) => this.rowOf(vm))
        .map((row) => [vmKey(row.namespace, row.name), { row, json: JSON.stringify(row) }] as const)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      this.vms = new Map(entries);
      this.rowsVersion++;
    }
    return this.vms;
  }

  /** Every live CT's index source (a PVC being deleted, or retired by an API delete, no longer holds an id). */
  private ctSources(): VmidSource[] {
    const out: VmidSource[] = [];
    for (const pvc of this.cluster.cache.withLabel('PersistentVolumeClaim', LABEL_CT, 'true')) {
      const spec = ctClaimSpec(pvc);
      if (spec && this.ctLive(pvc, spec.namespace, spec.name)) out.push(ctVmidSourceOf(pvc, spec));
    }
    return out;
  }

  private ctLive(pvc: KObject, namespace: string, name: string): boolean {
    return !pvc.metadata.deletionTimestamp && this.retired.get(ctKey(namespace, name)) !== pvc.metadata.uid;
  }

  /** A CT's data PVC changed: index it, move it, or free its vmid. Only once the index exists (it is built lazily). */
  private refreshCt(e: ChangeEvent): void {
    if (!this.vms) return;
    const pvc = e.object;
    const was = e.type === 'DELETED' ? undefined : ctClaimSpec(pvc);
    const namespace = pvc.metadata.namespace ?? '';
    const name = was?.name ?? pvc.metadata.labels?.[LABEL_CT_NAME] ?? '';
    if (!name) return;
    if (e.type === 'DELETED') this.retired.delete(ctKey(namespace, name));
    if (was && this.ctLive(pvc, namespace, name)) this.index.upsert(ctVmidSourceOf(pvc, was));
    else this.index.remove({ namespace, name, kind: 'ct' });
  }

  /** A VM's row with its vmid from the index (indexed now when new). */
  private rowOf(vm: KObject, before?: VmRow): VmRow {
    const source = vmidSourceOf(vm);
    const id = this.isRetired(vm)
      ? (before?.vmid ?? labelVmid(source.label) ?? fallbackVmid(source.name))
      : this.index.upsert(source);
    return buildVmRow(vm, this.cluster.cache, id, this.cluster.info.context);
  }

  private isRetired(vm: KObject): boolean {
    const uid = this.retired.get(vmKey(vm.metadata.namespace ?? '', vm.metadata.name ?? ''));
    return uid !== undefined && uid === vm.metadata.uid;
  }

  /** The index gave a VM a new id (a collision): persist it, and rebuild that VM's row once the current one is done. */
  private assigned(ref: VmRef, vmid: number): void {
    if (ref.kind !== 'ct') this.moved.add(vmKey(ref.namespace, ref.name));
    this.persistVmid(ref, vmid);
  }

  private nodeMap(): Map<string, Cached<NodeRow>> {
    if (!this.nodes) {
      const entries = this.cluster.cache
        .list('Node')
        .map((n) => buildNodeRow(n, this.cluster.cache, this.cluster.info.context))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((row) => [row.name, { row, json: JSON.stringify(row) }] as const);
      this.nodes = new Map(entries);
    }
    return this.nodes;
  }

  private apply(e: ChangeEvent): void {
    if (e.kind === 'PersistentVolumeClaim' && e.object.metadata.labels?.[LABEL_CT] === 'true') this.refreshCt(e);
    for (const key of affectedVms(e)) this.refreshVm(key);
    this.refreshMoved();
    for (const node of affectedNodes(e)) this.refreshNode(node);
  }

  private refreshMoved(): void {
    for (const key of this.moved) {
      this.moved.delete(key);
      this.refreshVm(key);
    }
  }

  private refreshVm(key: string): void {
    if (!this.vms && this.listeners.size === 0) return; // nothing built, nobody listening: build lazily later
    const map = this.rawVmMap();
    const [namespace = '', name = ''] = key.split('/');
    const vm = this.cluster.cache.get('VirtualMachine', namespace, name);
    const before = map.get(key);
    if (!vm) {
      this.retired.delete(key);
      this.index.remove({ namespace, name });
      if (before) {
        map.delete(key);
        this.listJson = undefined;
        this.rowsVersion++;
        this.emit({ type: 'vm', op: 'delete', namespace, name });
      }
      return;
    }
    if (this.retired.has(key) && !this.isRetired(vm)) this.retired.delete(key); // a new VM under the old name
    const row = this.rowOf(vm, before?.row);
    const json = JSON.stringify(row);
    if (before?.json === json) return;
    map.set(key, { row, json });
    if (!before) this.vmsUnsorted = true;
    this.listJson = undefined;
    this.rowsVersion++;
    this.emit({ type: 'vm', op: 'upsert', vm: row });
  }

  private refreshNode(name: string): void {
    if (!this.nodes && this.listeners.size === 0) return;
    const map = this.nodeMap();
    const node = this.cluster.cache.get('Node', undefined, name);
    const before = map.get(name);
    if (!node) {
      if (before) {
        map.delete(name);
        this.emit({ type: 'node', op: 'delete', name });
      }
      return;
    }
    const row = buildNodeRow(node, this.cluster.cache, this.cluster.info.context);
    const json = JSON.stringify(row);
    if (before?.json === json) return;
    map.set(name, { row, json });
    if (!before) this.nodes = new Map([...map.entries()].sort(([a], [b]) => a.localeCompare(b)));
    this.emit({ type: 'node', op: 'upsert', node: row });
  }

  private emit(delta: FleetDelta): void {
    for (const l of this.listeners) l(delta);
  }
}

/** Which VM rows an object's change can alter. */
function affectedVms(e: ChangeEvent): string[] {
  const o = e.object;
  const ns = o.metadata.namespace ?? '';
  const name = o.metadata.name ?? '';
  const byKind: Partial<Record<CachedKind, () => string[]>> = {
    VirtualMachine: () => [name],
    VirtualMachineInstance: () => [name],
    DataVolume: () => ownerVmNames(o),
    PersistentVolumeClaim: () => ownerVmNames(o),
  };
  return (byKind[e.kind]?.() ?? []).map((n) => vmKey(ns, n));
}

function ownerVmNames(o: KObject): string[] {
  const names = new Set<string>();
  const label = o.metadata.labels?.[LABEL_VM];
  if (label) names.add(label);
  for (const ref of o.metadata.ownerReferences ?? []) if (ref.kind === 'VirtualMachine') names.add(ref.name);
  return [...names];
}

function affectedNodes(e: ChangeEvent): string[] {
  if (e.kind === 'Node') return [e.object.metadata.name ?? ''];
  if (e.kind === 'VirtualMachineInstance') {
    // A migration moves the instance: the source node's count changes too.
    const source = asString(asDict(asDict(e.object.status).migrationState).sourceNode);
    return [vmiNode(e.object), source].filter((n) => n !== '');
  }
  return [];
}
