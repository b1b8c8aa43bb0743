// The guest table's order as one total comparator, so a live change can move one row into place by binary search
// (O(log n) comparisons) and the result is exactly what sorting everything again would give. Same rules as
// sortRows (sort.ts): natural order for text, numbers/sizes/IPs by value, empty values last in both directions, then
// name, namespace and type ascending; then, so no two rows ever compare equal, the cluster ('' — the default one —
// first) and the row key (unique per table).
import type { GuestRow } from './guest-rows';
import { compareNames, sortKeyOf, type SortKind, type SortSpec } from './sort';

export type GuestSortKey = 'type' | 'name' | 'status' | 'node' | 'namespace' | 'cpu' | 'mem' | 'ip';

const tieBreak = (a: GuestRow, b: GuestRow): number =>
  compareNames(a.name, b.name) ||
  compareNames(a.namespace, b.namespace) ||
  compareNames(a.type, b.type) ||
  compareNames(a.cluster, b.cluster) ||
  (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);

export interface GuestOrder {
  readonly spec: SortSpec<GuestSortKey>;
  compare(a: GuestRow, b: GuestRow): number;
}

/** A comparator for `spec`; numeric keys are parsed once per row object (rows are replaced, never edited). */
export function guestOrder(spec: SortSpec<GuestSortKey>, kind: SortKind): GuestOrder {
  const sign = spec.dir === 'asc' ? 1 : -1;
  const col = spec.key;
  if (kind === 'text') {
    return {
      spec,
      compare(a, b) {
        const x = String(a[col] ?? '');
        const y = String(b[col] ?? '');
        if (x === '' || y === '') return x === y ? tieBreak(a, b) : x === '' ? 1 : -1;
        return sign * compareNames(x, y) || tieBreak(a, b);
      },
    };
  }
  const keys = new WeakMap<GuestRow, number>();
  const keyOf = (row: GuestRow): number => {
    let k = keys.get(row);
    if (k === undefined) keys.set(row, (k = sortKeyOf(row[col], kind)));
    return k;
  };
  return {
    spec,
    compare(a, b) {
      const x = keyOf(a);
      const y = keyOf(b);
      const an = Number.isNaN(x);
      const bn = Number.isNaN(y);
      if (an || bn) return an === bn ? tieBreak(a, b) : an ? 1 : -1;
      return sign * (x - y) || tieBreak(a, b);
    },
  };
}

/** The first index whose row sorts after `row`: where `row` goes in `sorted`. */
export function insertionPoint(sorted: readonly GuestRow[], row: GuestRow, order: GuestOrder): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (order.compare(sorted[mid]!, row) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Where `row` (this very object) sits in `sorted`, or -1. */
export function indexOfRow(sorted: readonly GuestRow[], row: GuestRow, order: GuestOrder): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (order.compare(sorted[mid]!, row) < 0) lo = mid + 1;
    else hi = mid;
  }
  return sorted[lo] === row ? lo : -1;
}

/**
 * `sorted` without `removed` and with `added`, in order: a new array (React sees the change), O(n) pointer copies
 * and O(changes · log n) comparisons. Rows in `removed` that are not in `sorted` are ignored.
 */
export function applySorted(
  sorted: readonly GuestRow[],
  removed: readonly GuestRow[],
  added: readonly GuestRow[],
  order: GuestOrder,
): GuestRow[] {
  const out = sorted.slice();
  for (const row of removed) {
    const at = indexOfRow(out, row, order);
    if (at >= 0) out.splice(at, 1);
  }
  for (const row of added) out.splice(insertionPoint(out, row, order), 0, row);
  return out;
}
