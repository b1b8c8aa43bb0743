// VMs and CTs as rows of one table (the Datacenter table): the columns both have, a type, a link and a selection
// key. A VM of the default cluster keeps its `namespace/name` key (links, bulk results and tests read it); a CT's is
// `ct:namespace/name`, so a VM and a CT of the same name never share a selection. A row of another cluster is keyed
// with its context in front (`lab//tailvm/web`, `ct:lab//tailvm/shell`, as the fleet store keys it), since the same
// namespace/name often exists in several clusters and a selection must never act on the wrong one.
import { rowKey, vmKey } from './fleet-store';
import type { CtRow, VmRow } from './model';
import { ctPageHref, vmPageHref } from './cluster-links';

export type GuestType = 'vm' | 'ct';

export interface GuestRow {
  type: GuestType;
  key: string;
  name: string;
  namespace: string;
  /** The row's kube context, as the server sent it (what every action on the row names). */
  context?: string;
  /** The row's cluster when it is not the default one; '' on the default cluster (and with one cluster). */
  cluster: string;
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

/** A guest's selection key in the Datacenter table (and its bulk result's): type and cluster included. */
export function guestKey(
  g: { type: GuestType; namespace: string; name: string; context?: string },
  defaultContext = '',
): string {
  const key = rowKey({ namespace: g.namespace, name: g.name, context: g.context }, defaultContext);
  return g.type === 'ct' ? `ct:${key}` : key;
}

/** The cluster to show beside a row: its context unless it is the default cluster's ('' then). */
export function otherCluster(context: string | undefined, defaultContext = ''): string {
  return context && defaultContext && context !== defaultContext ? context : '';
}

/** `defaultContext`: the default cluster's name ('' with one); another cluster's rows link with `?context=`. */
export function vmGuest(vm: VmRow, defaultContext = ''): GuestRow {
  return {
    type: 'vm',
    key: guestKey({ ...vm, type: 'vm' }, defaultContext),
    name: vm.name,
    namespace: vm.namespace,
    context: vm.context,
    cluster: otherCluster(vm.context, defaultContext),
    status: vm.status,
    dot: vm.status,
    node: vm.node,
    cpu: vm.cpu,
    mem: vm.mem,
    ip: vm.ip,
    tags: vm.tags,
    template: vm.template,
    href: vmPageHref(vm, defaultContext),
  };
}

export function ctGuest(ct: CtRow, defaultContext = ''): GuestRow {
  return {
    type: 'ct',
    key: guestKey({ ...ct, type: 'ct' }, defaultContext),
    name: ct.name,
    namespace: ct.namespace,
    context: ct.context,
    cluster: otherCluster(ct.context, defaultContext),
    status: ct.phase,
    dot: ct.reason ? (ct.reason.split(':')[0] ?? ct.phase) : ct.phase,
    node: ct.node,
    cpu: ct.cpu,
    mem: ct.mem,
    ip: ct.ip,
    tags: [],
    template: false,
    href: ctPageHref(ct, defaultContext),
  };
}

/** Cached with the default context they were made for (their href depends on it). */
const vmGuests = new WeakMap<VmRow, GuestRow & { defaultContext: string }>();
const ctGuests = new WeakMap<CtRow, GuestRow & { defaultContext: string }>();

/**
 * The same GuestRow object for the same VmRow object: the store replaces a row on each change, so a live change
 * rebuilds only its own guest row (and the filter index's keys, cached per row object, stay valid for the rest).
 */
export function vmGuestCached(vm: VmRow, defaultContext = ''): GuestRow {
  let g = vmGuests.get(vm);
  if (!g || g.defaultContext !== defaultContext)
    vmGuests.set(vm, (g = { defaultContext, ...vmGuest(vm, defaultContext) }));
  return g;
}

export function ctGuestCached(ct: CtRow, defaultContext = ''): GuestRow {
  let g = ctGuests.get(ct);
  if (!g || g.defaultContext !== defaultContext)
    ctGuests.set(ct, (g = { defaultContext, ...ctGuest(ct, defaultContext) }));
  return g;
}

/** Whether a guest is running in the sense the Datacenter's counts use. */
export function isRunning(g: Pick<GuestRow, 'status'>): boolean {
  return g.status === 'Running';
}

/** The bulk procedure's target for a row, with the row's cluster (bulk.ts runs each cluster's targets there). */
export function bulkTarget(g: Pick<GuestRow, 'type' | 'namespace' | 'name' | 'context'>): {
  type: GuestType;
  namespace: string;
  name: string;
  context?: string;
} {
  return g.context
    ? { type: g.type, namespace: g.namespace, name: g.name, context: g.context }
    : { type: g.type, namespace: g.namespace, name: g.name };
}
