/**
 * Every VM's and CT's numeric vmid — the id Proxmox clients address it by (`/api2/json`) and the `vmid` of its
 * `/api/vms` row; KubeVirt addresses it by namespace/name. VMs and containers share the one index, as qemu and lxc
 * guests share PVE's vmid space, so a vmid never names both. One index, owned by the fleet view (`services.fleet.vmids`) and fed
 * by the watch cache, keeps both directions in maps (O(1) per request, no listing) and enforces the rules:
 *  - a `corral.io/proxmox-vmid` label wins;
 *  - an unlabelled VM gets the deterministic fallback `100 + crc32(name) % 899999900` (the original Corral's);
 *  - a collision never leaves two VMs on one vmid: the newcomer gets the lowest free id and `onAssign` is asked
 *    to persist it as the newcomer's label, so the choice survives restarts.
 */
import type { KObject } from './cluster-port';
import { crc32 } from './crc32';
import { LABEL_VMID } from './labels';

export const MIN_VMID = 100;
export const MAX_VMID = 999_999_999;

export interface VmRef {
  namespace: string;
  name: string;
  /** `ct` for a container (its data PVC holds the label); absent for a VirtualMachine. */
  kind?: 'ct';
}

export interface VmidSource extends VmRef {
  /** The raw `corral.io/proxmox-vmid` label value, if any. */
  label?: string;
  /** Creation time (ms); the older of two unlabelled VMs keeps the fallback id on a rebuild. */
  created?: number;
}

export function fallbackVmid(name: string): number {
  return MIN_VMID + (crc32(name) % 899_999_900);
}

/** A label value that is a valid vmid, or undefined (garbage labels are ignored, not trusted). */
export function labelVmid(label: string | undefined): number | undefined {
  if (label === undefined || !/^\d{3,9}$/.test(label)) return undefined;
  const n = Number(label);
  return n >= MIN_VMID && n <= MAX_VMID ? n : undefined;
}

/** What the index needs to know about a VirtualMachine object (a CT's source comes from `ctVmidSourceOf`). */
export function vmidSourceOf(vm: KObject): VmidSource {
  const label = vm.metadata.labels?.[LABEL_VMID];
  const created = Date.parse(vm.metadata.creationTimestamp ?? '');
  return {
    namespace: vm.metadata.namespace ?? '',
    name: vm.metadata.name ?? '',
    ...(label !== undefined ? { label } : {}),
    ...(Number.isFinite(created) ? { created } : {}),
  };
}

// A namespace never contains ':', so a CT's key cannot clash with a VM's of the same namespace/name.
const keyOf = (ref: VmRef): string => `${ref.kind === 'ct' ? 'ct:' : ''}${ref.namespace}/${ref.name}`;

interface Entry {
  ref: VmRef;
  vmid: number;
  /** True when the vmid is (or is being made) the VM's label, false for an unpersisted fallback. */
  pinned: boolean;
}

export class VmidIndex {
  private readonly byId = new Map<number, Entry>();
  private readonly byKey = new Map<string, Entry>();
  private readonly reserved = new Set<number>();

  constructor(private readonly onAssign: (ref: VmRef, vmid: number) => void = () => {}) {}

  get size(): number {
    return this.byKey.size;
  }

  vmidOf(ref: VmRef): number | undefined {
    return this.byKey.get(keyOf(ref))?.vmid;
  }

  refOf(vmid: number): VmRef | undefined {
    return this.byId.get(vmid)?.ref;
  }

  isFree(vmid: number): boolean {
    return !this.byId.has(vmid) && !this.reserved.has(vmid);
  }

  /** The lowest free vmid ≥ `from` (PVE's `/cluster/nextid`). */
  nextFree(from = MIN_VMID): number {
    for (let id = Math.max(from, MIN_VMID); id <= MAX_VMID; id++) if (this.isFree(id)) return id;
    throw new Error('no free vmid left');
  }

  /** Hold an id for a create in flight, so a concurrent create or fallback cannot take it. */
  reserve(vmid: number): boolean {
    if (!this.isFree(vmid)) return false;
    this.reserved.add(vmid);
    return true;
  }

  release(vmid: number): void {
    this.reserved.delete(vmid);
  }

  /** Add or refresh one VM; returns its vmid. */
  upsert(source: VmidSource): number {
    const key = keyOf(source);
    const existing = this.byKey.get(key);
    const wanted = labelVmid(source.label);
    const ref: VmRef = {
      namespace: source.namespace,
      name: source.name,
      ...(source.kind ? { kind: source.kind } : {}),
    };

    if (wanted !== undefined) {
      if (existing?.vmid === wanted) {
        existing.pinned = true;
        return wanted;
      }
      // A create that reserved this id lands here with its label: the reservation is fulfilled.
      this.reserved.delete(wanted);
      const holder = this.byId.get(wanted);
      if (holder && keyOf(holder.ref) !== key) {
        if (holder.pinned) {
          // Two VMs labelled alike (a copied manifest): the one already indexed keeps it, the newcomer moves.
          return existing ? existing.vmid : this.assignFree(ref);
        }
        // The label wins over an unpersisted fallback: the fallback holder moves to a free id.
        this.detach(holder);
        this.assignFree(holder.ref);
      }
      if (existing) this.detach(existing);
      this.attach({ ref, vmid: wanted, pinned: true });
      return wanted;
    }

    // Unlabelled: keep whatever it already has, so ids never shift under a client between requests.
    if (existing) return existing.vmid;
    const fallback = fallbackVmid(source.name);
    if (this.isFree(fallback)) {
      this.attach({ ref, vmid: fallback, pinned: false });
      return fallback;
    }
    return this.assignFree(ref);
  }

  remove(ref: VmRef): void {
    const entry = this.byKey.get(keyOf(ref));
    if (entry) this.detach(entry);
  }

  /**
   * Replace the whole index with `sources` (e.g. after a cache resync): labels first, then unlabelled VMs
   * oldest first, so the outcome does not depend on list order.
   */
  rebuild(sources: VmidSource[]): void {
    this.byId.clear();
    this.byKey.clear();
    const labelled = sources.filter((s) => labelVmid(s.label) !== undefined);
    const unlabelled = sources.filter((s) => labelVmid(s.label) === undefined);
    const byAge = (a: VmidSource, b: VmidSource) =>
      (a.created ?? 0) - (b.created ?? 0) || keyOf(a).localeCompare(keyOf(b));
    for (const s of labelled.sort(byAge)) this.upsert(s);
    for (const s of unlabelled.sort(byAge)) this.upsert(s);
  }

  private assignFree(ref: VmRef): number {
    const vmid = this.nextFree();
    this.attach({ ref, vmid, pinned: true });
    this.onAssign(ref, vmid);
    return vmid;
  }

  private attach(entry: Entry): void {
    this.byId.set(entry.vmid, entry);
    this.byKey.set(keyOf(entry.ref), entry);
  }

  private detach(entry: Entry): void {
    if (this.byId.get(entry.vmid) === entry) this.byId.delete(entry.vmid);
    this.byKey.delete(keyOf(entry.ref));
  }
}
