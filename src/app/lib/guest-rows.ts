// VMs and CTs as rows of one table (the Datacenter table): the columns both have, a type, a link and a selection
// key. A VM keeps its `namespace/name` key (links, bulk results and tests read it); a CT's is `ct:namespace/name`,
// so a VM and a CT of the same name never share a selection.
import { vmKey } from './fleet-store';
import type { CtRow, VmRow } from './model';

export type GuestType = 'vm' | 'ct';

export interface GuestRow {
  type: GuestType;
  key: string;
  name: string;
  namespace: string;
  /** A VM's printable status; a CT's pod phase (what `status:` filters and the column sorts by). */
  status: string;
  /** The word the status dot colours by: a CT whose pod cannot start shows its reason. */
  dot: string;
  node: string;
  cpu: number;
  mem: string;
  ip: string;
  tags: readonly string[];
  template: boolean;
  href: string;
}

export const ctKey = (namespace: string, name: string): string => `ct:${vmKey(namespace, name)}`;

export function vmGuest(vm: VmRow): GuestRow {
  return {
    type: 'vm',
    key: vmKey(vm.namespace, vm.name),
    name: vm.name,
    namespace: vm.namespace,
    status: vm.status,
    dot: vm.status,
    node: vm.node,
    cpu: vm.cpu,
    mem: vm.mem,
    ip: vm.ip,
    tags: vm.tags,
    template: vm.template,
    href: `/vms/${encodeURIComponent(vm.namespace)}/${encodeURIComponent(vm.name)}`,
  };
}

export function ctGuest(ct: CtRow): GuestRow {
  return {
    type: 'ct',
    key: ctKey(ct.namespace, ct.name),
    name: ct.name,
    namespace: ct.namespace,
    status: ct.phase,
    dot: ct.reason ? (ct.reason.split(':')[0] ?? ct.phase) : ct.phase,
    node: ct.node,
    cpu: ct.cpu,
    mem: ct.mem,
    ip: ct.ip,
    tags: [],
    template: false,
    href: `/cts/${encodeURIComponent(ct.namespace)}/${encodeURIComponent(ct.name)}`,
  };
}

const vmGuests = new WeakMap<VmRow, GuestRow>();
const ctGuests = new WeakMap<CtRow, GuestRow>();

/**
 * The same GuestRow object for the same VmRow object: the store replaces a row on each change, so a live change
 * rebuilds only its own guest row (and the filter index's keys, cached per row object, stay valid for the rest).
 */
export function vmGuestCached(vm: VmRow): GuestRow {
  let g = vmGuests.get(vm);
  if (!g) vmGuests.set(vm, (g = vmGuest(vm)));
  return g;
}

export function ctGuestCached(ct: CtRow): GuestRow {
  let g = ctGuests.get(ct);
  if (!g) ctGuests.set(ct, (g = ctGuest(ct)));
  return g;
}

/** Whether a guest is running in the sense the Datacenter's counts use. */
export function isRunning(g: Pick<GuestRow, 'status'>): boolean {
  return g.status === 'Running';
}

/** The bulk procedure's target for a row. */
export function bulkTarget(g: Pick<GuestRow, 'type' | 'namespace' | 'name'>): {
  type: GuestType;
  namespace: string;
  name: string;
} {
  return { type: g.type, namespace: g.namespace, name: g.name };
}
