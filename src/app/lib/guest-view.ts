// The Datacenter table's rows kept up to date per change instead of rebuilt per change. At 50,000 guests,
// rebuilding meant per live change: a guest row lookup and a Map entry per guest, a natural-order sort of all of
// them and a new filter index — tens to hundreds of milliseconds and megabytes of garbage for one VM's new status.
// Here a change costs a walk over the store's list comparing row objects (the store replaces a row when it
// changes, so an unchanged row is the same object), then per changed row two binary searches: out of the sorted
// rows, back in at its new place, and the same in the filtered rows when a filter is set. The result is always
// what sorting and filtering everything again gives (guest-view.test.ts checks that on random changes).
// A new filter is answered in steps (`filterSteps`; `advance` runs them a few milliseconds at a time) while `answer`
// keeps giving the previous result, kept up to date by changes; changes that land meanwhile are applied to the answer.
import { drain, FilterIndex } from './filter-index';
import { byName } from './first-by-name';
import { isEmptyFilter, matchesFilter, type ParsedFilter } from './filter-query';
import { applySorted, type GuestOrder } from './guest-order';
import { ctGuestCached, vmGuestCached, type GuestRow } from './guest-rows';
import type { CtRow, VmRow } from './model';
import { compareNames } from './sort';

/** Above this share of changed rows (a snapshot replacing every row), sorting everything again is cheaper. */
const RESORT_SHARE = 1 / 8;

/**
 * What changed from `prev` to `next`, two lists of one keyed collection: rows of `prev` that are gone or were
 * replaced, and rows of `next` that are new or replacements. Walks both in step, so it is exact in any order but
 * small only while the order is kept (the store keeps insertion order: a change stays in place, a new row comes
 * last); a reordered list comes out as removed and added again, which applied removals first is still right.
 */
export function diffRows<T>(
  prev: readonly T[],
  next: readonly T[],
  key: (row: T) => string,
): { removed: T[]; added: T[] } {
  const removed: T[] = [];
  const added: T[] = [];
  let i = 0;
  let j = 0;
  while (i < prev.length && j < next.length) {
    const a = prev[i]!;
    const b = next[j]!;
    if (a === b) {
      i++;
      j++;
    } else if (key(a) === key(b)) {
      removed.push(a);
      added.push(b);
      i++;
      j++;
    } else {
      removed.push(a);
      i++;
    }
  }
  while (i < prev.length) removed.push(prev[i++]!);
  while (j < next.length) added.push(next[j++]!);
  return { removed, added };
}

export interface GuestCounts {
  /** VMs that are not templates. */
  vms: number;
  running: number;
  cts: number;
  ctsRunning: number;
}

export class GuestView {
  /** Bumped whenever the rows changed: what React's memos depend on. */
  stamp = 0;
  readonly counts: GuestCounts = { vms: 0, running: 0, cts: 0, ctsRunning: 0 };
  private vmList: readonly VmRow[] = [];
  private ctList: readonly CtRow[] = [];
  private defaultContext = '';
  private readonly byKey = new Map<string, GuestRow>();
  /** Template VMs (they are not rows of the table). */
  private readonly templateByKey = new Map<string, VmRow>();
  private templateList: VmRow[] | null = [];
  private readonly tagCounts = new Map<string, number>();
  private tagList: [string, number][] | null = [];
  /** Every guest row in `order`; null until an order is asked for, or after a change too large to apply. */
  private sorted: { order: GuestOrder; rows: GuestRow[] } | null = null;
  /** The filter index over `sorted.rows`, made at the first filter after each change. */
  private index: FilterIndex<GuestRow> | null = null;
  /** The last filtered answer, kept up to date by changes like `sorted`. */
  private shownCache: { order: GuestOrder; filter: ParsedFilter; rows: GuestRow[] } | null = null;
  /** The run `advance` carries on. */
  private running: {
    order: GuestOrder;
    filter: ParsedFilter;
    steps: Generator<void, readonly GuestRow[], void>;
  } | null = null;
  /** The filter being answered in steps, with the changes made since its index was taken (null: start over). */
  private job: {
    order: GuestOrder;
    filter: ParsedFilter;
    log: { removed: GuestRow[]; added: GuestRow[] }[] | null;
  } | null = null;

  /** Takes the store's current lists; returns whether anything changed. */
  sync(vms: readonly VmRow[], cts: readonly CtRow[], defaultContext: string): boolean {
    if (vms === this.vmList && cts === this.ctList && defaultContext === this.defaultContext) return false;
    const dc = defaultContext;
    const vmKeyOf = (vm: VmRow) => vmGuestCached(vm, dc).key;
    const ctKeyOf = (ct: CtRow) => ctGuestCached(ct, dc).key;
    // A new default context changes every key and link: start over.
    const fresh = dc !== this.defaultContext;
    const vmDiff = fresh
      ? { removed: [...this.vmList], added: [...vms] }
      : diffRows(this.vmList, vms, (vm) => vmGuestCached(vm, this.defaultContext).key);
    const ctDiff = fresh
      ? { removed: [...this.ctList], added: [...cts] }
      : diffRows(this.ctList, cts, (ct) => ctGuestCached(ct, this.defaultContext).key);
    const oldContext = this.defaultContext;
    this.vmList = vms;
    this.ctList = cts;
    this.defaultContext = dc;
    if (vmDiff.removed.length + vmDiff.added.length + ctDiff.removed.length + ctDiff.added.length === 0) return false;

    const removed: GuestRow[] = [];
    const added: GuestRow[] = [];
    // Keys that come back as a table row, and as a template (a VM can turn into a template and back).
    const addedKeys = new Set<string>();
    const addedTemplates = new Set<string>();
    for (const vm of vmDiff.added) (vm.template ? addedTemplates : addedKeys).add(vmKeyOf(vm));
    for (const ct of ctDiff.added) addedKeys.add(ctKeyOf(ct));
    // Removals first, leaving the Map entry of a row that comes back (a change) where it is: insertion order kept.
    for (const vm of vmDiff.removed) {
      const g = vmGuestCached(vm, oldContext);
      if (vm.template) {
        if (!addedTemplates.has(g.key)) this.templateByKey.delete(g.key);
        this.templateList = null;
        continue;
      }
      if (!addedKeys.has(g.key)) this.byKey.delete(g.key);
      removed.push(g);
      this.counts.vms--;
      if (vm.status === 'Running') this.counts.running--;
      this.countTags(vm.tags, -1);
    }
    for (const ct of ctDiff.removed) {
      const g = ctGuestCached(ct, oldContext);
      if (!addedKeys.has(g.key)) this.byKey.delete(g.key);
      removed.push(g);
      this.counts.cts--;
      if (ct.phase === 'Running') this.counts.ctsRunning--;
    }
    for (const vm of vmDiff.added) {
      const g = vmGuestCached(vm, dc);
      if (vm.template) {
        this.templateByKey.set(g.key, vm);
        this.templateList = null;
        continue;
      }
      this.byKey.set(g.key, g);
      added.push(g);
      this.counts.vms++;
      if (vm.status === 'Running') this.counts.running++;
      this.countTags(vm.tags, 1);
    }
    for (const ct of ctDiff.added) {
      const g = ctGuestCached(ct, dc);
      this.byKey.set(g.key, g);
      added.push(g);
      this.counts.cts++;
      if (ct.phase === 'Running') this.counts.ctsRunning++;
    }
    // A template that stays a template changes no table row.
    if (removed.length + added.length === 0) return true;

    this.stamp++;
    this.index = null;
    if (this.job?.log) this.job.log.push({ removed, added });
    const large = removed.length + added.length > Math.max(64, this.byKey.size * RESORT_SHARE);
    if (!this.sorted || large) {
      this.sorted = null;
      this.shownCache = null;
      if (this.job) this.job.log = null;
      return true;
    }
    const { order } = this.sorted;
    this.sorted = { order, rows: applySorted(this.sorted.rows, removed, added, order) };
    if (this.shownCache) {
      const { filter } = this.shownCache;
      this.shownCache =
        this.shownCache.order === order
          ? {
              order,
              filter,
              rows: applySorted(
                this.shownCache.rows,
                removed,
                added.filter((g) => matchesFilter(filter, g)),
                order,
              ),
            }
          : null;
    }
    return true;
  }

  private countTags(tags: readonly string[], by: 1 | -1): void {
    if (tags.length === 0) return;
    for (const t of tags) {
      const n = (this.tagCounts.get(t) ?? 0) + by;
      if (n > 0) this.tagCounts.set(t, n);
      else this.tagCounts.delete(t);
    }
    this.tagList = null;
  }

  /** Every guest row in `order` (a new array after each change, the same one until then). */
  rows(order: GuestOrder): readonly GuestRow[] {
    if (this.sorted?.order !== order) {
      this.sorted = { order, rows: [...this.byKey.values()].sort(order.compare) };
      this.index = null;
      this.shownCache = null;
      if (this.job) this.job.log = null;
    }
    return this.sorted.rows;
  }

  /** The rows `filter` lets through, in `order`, all at once. */
  shown(order: GuestOrder, filter: ParsedFilter): readonly GuestRow[] {
    const now = this.answer(order, filter);
    return now.filter === filter ? now.rows : drain(this.filterSteps(order, filter));
  }

  /**
   * What to show for `filter` now: its rows when they are known (no filter, or answered and kept since), else the
   * latest answer in this order (of an earlier filter; `filter` null means no filter) until `filterSteps` ends.
   */
  answer(order: GuestOrder, filter: ParsedFilter): { rows: readonly GuestRow[]; filter: ParsedFilter | null } {
    const rows = this.rows(order);
    if (isEmptyFilter(filter)) {
      // The unfiltered table is what shows now: an earlier filter's answer is no longer "the latest".
      this.shownCache = null;
      return { rows, filter };
    }
    const cached = this.shownCache;
    if (cached?.order === order) return { rows: cached.rows, filter: cached.filter };
    return { rows, filter: null };
  }

  /**
   * Advances the answer of `filter` by about `budgetMs` (at least one step), starting its run when needed, and
   * says whether it is answered. The run is kept between calls, so whoever calls next (a render with a small
   * budget, the page's slices) carries it on; asking for another filter or order drops it.
   */
  advance(order: GuestOrder, filter: ParsedFilter, budgetMs: number, now = () => performance.now()): boolean {
    const until = now() + budgetMs;
    for (;;) {
      if (this.answer(order, filter).filter === filter) return true;
      if (this.running?.order !== order || this.running.filter !== filter)
        this.running = { order, filter, steps: this.filterSteps(order, filter) };
      if (this.running.steps.next().done) this.running = null;
      else if (now() >= until) return false;
    }
  }

  /** `advance` one step at a time, as steps for runSliced. */
  *advanceSteps(order: GuestOrder, filter: ParsedFilter): Generator<void, void, void> {
    while (!this.advance(order, filter, 0)) yield;
  }

  /**
   * Answers `filter` in steps (see FilterIndex.steps); at the end `answer` gives its rows. Changes that `sync`
   * takes meanwhile are applied to the answer as they are to the shown rows; a change too large for that, or a
   * new order, starts it over. Another run started later takes over: this one then ends without an answer.
   */
  *filterSteps(order: GuestOrder, filter: ParsedFilter): Generator<void, readonly GuestRow[], void> {
    for (;;) {
      const rows = this.rows(order);
      if (isEmptyFilter(filter)) return rows;
      const cached = this.shownCache;
      if (cached?.order === order && cached.filter === filter) return cached.rows;
      const index = (this.index ??= new FilterIndex(rows));
      const job = { order, filter, log: [] as { removed: GuestRow[]; added: GuestRow[] }[] | null };
      this.job = job;
      let hits = yield* index.steps(filter);
      if (this.job !== job) return hits;
      this.job = null;
      if (this.sorted && this.sorted.order !== order) return hits; // another order took over: its run answers
      if (!job.log) continue;
      for (const { removed, added } of job.log)
        hits = applySorted(
          hits,
          removed,
          added.filter((g) => matchesFilter(filter, g)),
          order,
        );
      this.shownCache = { order, filter, rows: hits };
      return hits;
    }
  }

  get(key: string): GuestRow | undefined {
    return this.byKey.get(key);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** Template VMs by name (then namespace, cluster): a handful, sorted again only when one changes. */
  templates(): VmRow[] {
    this.templateList ??= [...this.templateByKey.values()].sort(
      (a, b) => byName(a, b) || compareNames(a.context ?? '', b.context ?? ''),
    );
    return this.templateList;
  }

  /** Tags of the table's VMs with how many carry each, by tag. */
  tags(): [string, number][] {
    this.tagList ??= [...this.tagCounts.entries()].sort((a, b) => a[0].localeCompare(b[0]));
    return this.tagList;
  }
}
