/**
 * The first screen of a large fleet: the `limit` rows a table sorted by name (the Datacenter's default order) shows
 * first, picked without sorting the fleet. The UI asks for this page before the whole list so 50,000 VMs do not
 * have to be transferred, parsed and sorted before the first rows appear (docs/scale.md); the full list follows.
 *
 * The order is the table's (src/app/lib/sort.ts, VmTable's default): names in natural order (`vm-2` before `vm-10`,
 * case-insensitive), then namespace; namesakes in several clusters keep the list's order (the default cluster first),
 * as the table's stable sort keeps them. One comparison per row against the last row kept, so the cost
 * is O(n) comparisons (plus O(limit) work for the rare row that enters the page), not an O(n log n) sort.
 */
import type { VmRow } from '../schemas/vms';

const collator = new Intl.Collator('en', { numeric: true, sensitivity: 'base' });

/**
 * Headers of `GET /api/vms?limit=N`: how many VMs the whole list holds, how many of them are templates, and how many
 * that are not templates run (the Datacenter counts templates apart).
 */
export const FIRST_PAGE_TOTAL_HEADER = 'Corral-Vm-Total';
export const FIRST_PAGE_TEMPLATES_HEADER = 'Corral-Vm-Templates';
export const FIRST_PAGE_RUNNING_HEADER = 'Corral-Vm-Running';

/** A first page and what the whole list holds, so a client showing the page can say how many there are. */
export interface FirstPage<T extends NamedRow = VmRow> {
  rows: T[];
  /** VMs in the whole list. */
  total: number;
  /** Of those, how many are templates. */
  templates: number;
  /** Of those that are not templates, how many have the status Running. */
  running: number;
}

export interface NamedRow {
  name: string;
  namespace: string;
}

export function compareByName(a: NamedRow, b: NamedRow): number {
  return collator.compare(a.name, b.name) || collator.compare(a.namespace, b.namespace);
}

/** The first `limit` of `rows` in name order, sorted; rows equal in that order keep their input order. */
export function firstByName<T extends NamedRow>(rows: readonly T[], limit: number): T[] {
  const page: T[] = [];
  if (limit <= 0) return page;
  for (const row of rows) {
    if (page.length === limit && compareByName(row, page[limit - 1] as T) >= 0) continue;
    // Binary search for the first kept row that sorts after `row` (after its equals: the order stays stable).
    let lo = 0;
    let hi = page.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareByName(page[mid] as T, row) <= 0) lo = mid + 1;
      else hi = mid;
    }
    page.splice(lo, 0, row);
    if (page.length > limit) page.pop();
  }
  return page;
}
