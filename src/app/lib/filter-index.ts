// The filter language of filter-query.ts over many rows at once, fast enough for a keystroke at 50,000 rows.
// Each row's lower-cased search keys are computed once (and cached per row object, so a live change re-keys only
// the rows it replaced); a query that only narrows the previous one (more characters in a word, another word or
// term) scans the previous result instead of every row. The answer is always exactly what `rows.filter(row =>
// matchesFilter(filter, row))` gives, in the same order (filter-index.test.ts checks that on random queries).
// The work comes in steps (`steps`, a generator that yields after about STEP rows, fewer while keying them), so a caller can spread one
// keystroke's filter over several tasks and let the browser paint in between (sliced.ts); `filter` runs them all.
import { isEmptyFilter, matchesFilter, UNPLACED_VALUES, type FilterableVm, type FilterTerm } from './filter-query';
import type { ParsedFilter } from './filter-query';

/** A row's search keys, lower-cased once. */
interface Keys {
  /** name, namespace, node, ip (as is: the plain filter does not lower-case it) and tags, joined by SEP. */
  text: string;
  status: string;
  node: string;
  ns: string;
  tags: readonly string[];
  type: 'vm' | 'ct';
  row: FilterableVm;
}

/** Cannot be typed into the filter box; a word that holds it anyway is matched the plain way. */
const SEP = '\u0000';

/** Rows are replaced, never changed in place, by the fleet store: a row object's keys never go stale. */
const cache = new WeakMap<object, Keys>();

function keysOf(row: FilterableVm): Keys {
  const tags = row.tags.map((t) => t.toLowerCase());
  const node = row.node.toLowerCase();
  const ns = row.namespace.toLowerCase();
  return {
    text: [row.name.toLowerCase(), ns, node, row.ip, ...tags].join(SEP),
    status: row.status.toLowerCase(),
    node,
    ns,
    tags,
    type: row.type ?? 'vm',
    row,
  };
}

function termMatches(term: FilterTerm, k: Keys): boolean {
  switch (term.key) {
    case 'tag':
      return k.tags.some((t) => term.values.includes(t));
    case 'status':
      return term.values.includes(k.status);
    case 'node':
      return term.values.some((v) => (UNPLACED_VALUES.has(v) ? k.node === '' : k.node === v));
    case 'ns':
      return term.values.includes(k.ns);
    case 'type':
      return term.values.includes(k.type);
  }
}

function keysMatch(filter: ParsedFilter, k: Keys): boolean {
  for (const term of filter.terms) if (termMatches(term, k) === term.negated) return false;
  for (const word of filter.words) {
    if (word.includes(SEP)) {
      if (!matchesFilter({ terms: [], words: [word], problems: [] }, k.row)) return false;
    } else if (!k.text.includes(word) && k.status !== word) return false;
  }
  return true;
}

const sameTerm = (a: FilterTerm, b: FilterTerm) =>
  a.key === b.key &&
  a.negated === b.negated &&
  a.values.length === b.values.length &&
  a.values.every((v, i) => v === b.values[i]);

/**
 * Whether every row `next` matches also matched `prev`: the same terms first (more may follow), and each earlier
 * word is contained in the word at its place (more words may follow). A word matches a status only by equality,
 * so a longer word that is some row's status (`run` → `running`) can reach rows the shorter one did not: no.
 */
export function narrows(prev: ParsedFilter, next: ParsedFilter, statuses: { has(status: string): boolean }): boolean {
  if (prev.terms.length > next.terms.length || prev.words.length > next.words.length) return false;
  for (let i = 0; i < prev.terms.length; i++) if (!sameTerm(prev.terms[i]!, next.terms[i]!)) return false;
  for (let i = 0; i < prev.words.length; i++) {
    const before = prev.words[i]!;
    const after = next.words[i]!;
    if (after === before) continue;
    if (!after.includes(before) || statuses.has(after)) return false;
  }
  return true;
}

/** Rows tested between two yields of `steps`: about a millisecond on a slow core. */
export const STEP = 2048;
/** Rows keyed between two yields of the first build: keying a row (lower-casing, joining) costs ~4× testing it. */
const BUILD_STEP = STEP / 4;

/** Runs a generator of steps to its end and returns its answer. */
export function drain<R>(steps: Generator<void, R, void>): R {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The index proper, once every row has its keys. */
interface Built {
  keys: Keys[];
  /** Every row's `text`, each followed by SEP: one `indexOf` jumps from one row that holds a word to the next. */
  all: string;
  starts: Int32Array;
  /** Row indexes by lower-cased status (a word also matches a status, by equality). */
  byStatus: Map<string, number[]>;
}

export class FilterIndex<T extends object> {
  /** Built at the first non-empty filter: a table that is never filtered never pays for the keys. */
  private built: Built | null = null;
  /** A build under way, carried on by whichever `steps` runs next (an abandoned one leaves it consistent). */
  private building: (Omit<Built, 'all'> & { done: number; offset: number; parts: string[] }) | null = null;
  private last: { filter: ParsedFilter; hits: number[] } | null = null;
  /** Rows tested one by one by the latest finished `filter` (what the index saves; the unit tests read it). */
  scanned = 0;

  /** `view` gives the filter's picture of a row (identity for rows that already are FilterableVm). */
  constructor(
    readonly rows: readonly T[],
    private readonly view: (row: T) => FilterableVm = (row) => row as unknown as FilterableVm,
  ) {}

  private *build(): Generator<void, Built, void> {
    if (this.built) return this.built;
    const { rows, view } = this;
    const n = rows.length;
    const b = (this.building ??= {
      keys: new Array<Keys>(n),
      starts: new Int32Array(n),
      byStatus: new Map<string, number[]>(),
      done: 0,
      offset: 0,
      parts: [] as string[],
    });
    while (b.done < n) {
      // One slice of rows: its keys, and its part of the joined text (joined again at the end, one copy).
      const end = Math.min(n, b.done + BUILD_STEP);
      const texts = new Array<string>(end - b.done);
      for (let i = b.done; i < end; i++) {
        const row = rows[i]!;
        let k = cache.get(row);
        if (!k) {
          k = keysOf(view(row));
          cache.set(row, k);
        }
        b.keys[i] = k;
        texts[i - b.done] = k.text;
        b.starts[i] = b.offset;
        b.offset += k.text.length + 1;
        const same = b.byStatus.get(k.status);
        if (same) same.push(i);
        else b.byStatus.set(k.status, [i]);
      }
      b.parts.push(texts.join(SEP) + SEP);
      b.done = end;
      if (this.built) return this.built; // another run finished the build meanwhile
      yield;
    }
    this.built ??= { keys: b.keys, all: b.parts.join(''), starts: b.starts, byStatus: b.byStatus };
    this.building = null;
    return this.built;
  }

  filter(filter: ParsedFilter): T[] {
    return drain(this.steps(filter));
  }

  /**
   * The same answer as `filter`, in steps: yields after about every STEP rows. Runs of several filters may
   * interleave or be dropped half-way; each answers for the rows the index was made with.
   */
  *steps(filter: ParsedFilter): Generator<void, T[], void> {
    if (isEmptyFilter(filter)) {
      this.last = null;
      this.scanned = 0;
      return [...this.rows];
    }
    const { byStatus } = yield* this.build();
    let hits: number[];
    let scanned = 0;
    const last = this.last;
    if (last && narrows(last.filter, filter, byStatus)) {
      hits = yield* this.test(filter, last.hits);
      scanned = last.hits.length;
    } else {
      // The first word picks the candidates through the joined text; the rest of the filter tests only those.
      const at = filter.words.findIndex((w) => !w.includes(SEP));
      if (at < 0) {
        hits = yield* this.test(filter, null);
        scanned = this.rows.length;
      } else {
        const rest = { ...filter, words: filter.words.filter((_, i) => i !== at) };
        const candidates = yield* this.holding(filter.words[at]!);
        if (isEmptyFilter(rest)) hits = candidates;
        else {
          hits = yield* this.test(rest, candidates);
          scanned = candidates.length;
        }
      }
    }
    this.last = { filter, hits };
    this.scanned = scanned;
    const out = new Array<T>(hits.length);
    for (let i = 0; i < hits.length; i++) {
      out[i] = this.rows[hits[i]!]!;
      if (i % STEP === STEP - 1) yield;
    }
    return out;
  }

  /** Rows whose text holds `word` or whose status is `word`, ascending: what that word alone lets through. */
  private *holding(word: string): Generator<void, number[], void> {
    const found: number[] = [];
    const { starts, all, byStatus } = yield* this.build();
    const n = starts.length;
    // Hits come in text order, so the row of each is found by walking on from the previous one: O(rows) in all.
    let row = 0;
    let work = 0;
    for (let at = all.indexOf(word); at >= 0;) {
      const from = row;
      while (row + 1 < n && starts[row + 1]! <= at) row++;
      found.push(row);
      if (++row >= n) break;
      work += row - from;
      if (work >= STEP) {
        work = 0;
        yield;
      }
      at = all.indexOf(word, starts[row]);
    }
    const status = byStatus.get(word);
    if (!status) return found;
    const merged: number[] = [];
    let a = 0;
    let b = 0;
    while (a < found.length || b < status.length) {
      const x = found[a] ?? Infinity;
      const y = status[b] ?? Infinity;
      merged.push(Math.min(x, y));
      if (x <= y) a++;
      if (y <= x) b++;
      if (merged.length % STEP === 0) yield;
    }
    return merged;
  }

  /** The rows among `candidates` (all when null) that match the whole filter. */
  private *test(filter: ParsedFilter, candidates: number[] | null): Generator<void, number[], void> {
    const { keys } = yield* this.build();
    const hits: number[] = [];
    const n = candidates ? candidates.length : keys.length;
    for (let j = 0; j < n; j++) {
      const i = candidates ? candidates[j]! : j;
      if (keysMatch(filter, keys[i]!)) hits.push(i);
      if (j % STEP === STEP - 1) yield;
    }
    return hits;
  }
}
