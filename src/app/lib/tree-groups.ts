// The resource tree's groups (ResourceTree.tsx): Server view — nodes with their guests, unplaced ones apart;
// Namespace view — namespaces. With several clusters each cluster's rows are grouped on their own, keys prefixed.
import type { CtRow, NodeRow, VmRow } from './model';
import { compareNames } from './sort';

export type View = 'server' | 'namespace' | 'pool';

export interface Group {
  key: string;
  label: string;
  href?: string;
  ready?: boolean;
  vms: VmRow[];
  /** Containers (CTs) in this group: under their node, or "not running". */
  cts: CtRow[];
}

/** Rows grouped between two yields of `groupsOfSteps`. */
const STEP = 2048;

/** Server view: nodes with their guests (unplaced ones apart); Namespace view: namespaces. `context` keys them apart. */
export function groupsOf(
  view: View,
  vms: readonly VmRow[],
  cts: readonly CtRow[],
  nodeRows: readonly NodeRow[],
  context: string,
): Group[] {
  const steps = groupsOfSteps(view, vms, cts, nodeRows, context);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** `groupsOf` in steps: yields after every STEP guests (the filtered tree groups its answer between frames). */
export function* groupsOfSteps(
  view: View,
  vms: readonly VmRow[],
  cts: readonly CtRow[],
  nodeRows: readonly NodeRow[],
  context: string,
): Generator<void, Group[], void> {
  const prefix = context ? `${context}//` : '';
  const byKey = new Map<string, VmRow[]>();
  for (let i = 0; i < vms.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const vm = vms[i]!;
    const key = view === 'server' ? vm.node : vm.namespace;
    let list = byKey.get(key);
    if (!list) byKey.set(key, (list = []));
    list.push(vm);
  }
  const ctsBy = new Map<string, CtRow[]>();
  for (let i = 0; i < cts.length; i++) {
    if (i % STEP === STEP - 1) yield;
    const ct = cts[i]!;
    const key = view === 'server' ? ct.node : ct.namespace;
    let list = ctsBy.get(key);
    if (!list) ctsBy.set(key, (list = []));
    list.push(ct);
    if (!byKey.has(key)) byKey.set(key, []);
  }
  if (view === 'namespace') {
    return [...byKey.keys()]
      .sort(compareNames)
      .map((ns) => ({ key: `${prefix}ns:${ns}`, label: ns, vms: byKey.get(ns) ?? [], cts: ctsBy.get(ns) ?? [] }));
  }
  const nodes = [...nodeRows].sort((a, b) => compareNames(a.name, b.name));
  const known = new Set(nodes.map((n) => n.name));
  const out: Group[] = nodes.map((n) => ({
    key: `${prefix}node:${n.name}`,
    label: n.name,
    href: `/nodes/${encodeURIComponent(n.name)}`,
    ready: n.ready,
    vms: byKey.get(n.name) ?? [],
    cts: ctsBy.get(n.name) ?? [],
  }));
  // VMs on a node the cache no longer lists still deserve a place.
  for (const [node, list] of byKey) {
    if (node !== '' && !known.has(node))
      out.push({ key: `${prefix}node:${node}`, label: node, ready: false, vms: list, cts: ctsBy.get(node) ?? [] });
  }
  const unplaced = byKey.get('') ?? [];
  const idle = ctsBy.get('') ?? [];
  if (unplaced.length || idle.length)
    out.push({ key: `${prefix}unplaced`, label: 'Not running / unplaced', vms: unplaced, cts: idle });
  return out;
}
