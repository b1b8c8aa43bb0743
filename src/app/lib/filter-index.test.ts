import { describe, expect, it } from 'vitest';
import { FilterIndex, narrows, STEP } from './filter-index';
import { ctFilterable, matchesFilter, parseFilter, type FilterableVm } from './filter-query';

/** A small deterministic PRNG (mulberry32), so a failure names a reproducible seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATUSES = ['Running', 'Stopped', 'Paused', 'ErrorUnschedulable', 'Run', 'Starting'];
const NODES = ['', 'corral-1', 'Corral-2', 'bihar', 'kerala'];
const NAMESPACES = ['bench', 'dev', 'TailVM', 'prod-web'];
const TAGS = ['prod', 'Frontend', 'db', 'web-tier', 'run'];
const PARTS = ['web', 'db', 'vm', 'Run', 'ci', '-', '0', '1', '12', 'X'];

function randomRows(rand: () => number, n: number): FilterableVm[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  return Array.from({ length: n }, (_, i) => ({
    name: `${pick(PARTS)}${pick(PARTS)}-${i}`,
    namespace: pick(NAMESPACES),
    status: pick(STATUSES),
    node: pick(NODES),
    ip: rand() < 0.3 ? '' : rand() < 0.9 ? `10.42.${i & 7}.${i}` : `FD00::${i.toString(16).toUpperCase()}`,
    tags: TAGS.filter(() => rand() < 0.2),
    type: rand() < 0.2 ? 'ct' : rand() < 0.5 ? 'vm' : undefined,
  }));
}

/** Queries as a user types them: words, fragments of names/statuses, keyed terms, negations, typos. */
const TOKENS = [
  'w',
  'we',
  'web',
  'r',
  'ru',
  'run',
  'runn',
  'running',
  'RUNNING',
  'stopped',
  'st',
  '10',
  '10.42',
  '10.42.3',
  'fd00',
  'FD00',
  'db',
  '-',
  '-1',
  '1',
  '12',
  'corral',
  'corral-2',
  'ti',
  'tailvm',
  'prod',
  'x',
  'zz',
  'tag:prod',
  'tag:fr',
  'tag:frontend',
  '-tag:db',
  'status:running',
  'status:run',
  'status:running,paused',
  '-status:stopped',
  'node:none',
  'node:corral-2',
  'node:-',
  '-node:bihar',
  'ns:dev',
  'namespace:tailvm',
  'type:ct',
  '-type:vm',
  'kind:lxc',
  'type:pod',
  'color:red',
  'tag:',
  '"web -"',
  '"db main"',
  '-"web"',
];

function randomQuery(rand: () => number): string {
  const count = 1 + Math.floor(rand() * 3);
  return Array.from({ length: count }, () => TOKENS[Math.floor(rand() * TOKENS.length)]!).join(' ');
}

/** Every prefix of a query, as typed one key at a time. */
const typed = (query: string) => Array.from({ length: query.length }, (_, i) => query.slice(0, i + 1));

const plain = <T extends FilterableVm>(rows: readonly T[], query: string) => {
  const filter = parseFilter(query);
  return rows.filter((r) => matchesFilter(filter, r));
};

describe('FilterIndex', () => {
  it('answers exactly what the plain filter answers, in order, on random rows and random typed queries', () => {
    const mismatches: string[] = [];
    let steps = 0;
    for (let seed = 1; seed <= 20; seed++) {
      const rand = prng(seed);
      const rows = randomRows(rand, 200);
      const position = new Map(rows.map((r, i) => [r, i]));
      const index = new FilterIndex(rows);
      for (let q = 0; q < 12; q++) {
        const query = randomQuery(rand);
        // Typed key by key, then erased key by key: narrowing on the way in, full scans on the way out.
        for (const step of [...typed(query), ...typed(query).reverse()]) {
          steps++;
          const got = index
            .filter(parseFilter(step))
            .map((r) => position.get(r))
            .join(',');
          const want = plain(rows, step)
            .map((r) => position.get(r))
            .join(',');
          if (got !== want) mismatches.push(`seed ${seed}, ${JSON.stringify(step)}: got [${got}], want [${want}]`);
        }
      }
    }
    expect(mismatches).toEqual([]);
    expect(steps).toBeGreaterThan(3000);
  });

  it('matches CTs through the same view the plain filter uses', () => {
    const rand = prng(99);
    const cts = randomRows(rand, 200).map((r) => ({
      name: r.name,
      namespace: r.namespace,
      phase: r.status,
      node: r.node,
      ip: r.ip,
    }));
    const index = new FilterIndex(cts, ctFilterable);
    for (const query of ['type:ct', 'type:vm', 'run', 'running', 'tag:prod', '-tag:prod', 'corral web', 'node:none']) {
      expect(index.filter(parseFilter(query))).toEqual(
        cts.filter((c) => matchesFilter(parseFilter(query), ctFilterable(c))),
      );
    }
  });

  it('scans only the previous hits while the query narrows, and every row again when it widens', () => {
    const rows = Array.from({ length: 1000 }, (_, i) => ({
      name: `vm-${String(i).padStart(4, '0')}`,
      namespace: 'bench',
      status: i % 2 ? 'Stopped' : 'Running',
      node: i % 2 ? '' : 'corral-1',
      ip: '',
      tags: i % 5 ? [] : ['prod'],
    }));
    const index = new FilterIndex(rows);
    expect(index.filter(parseFilter('status:running'))).toHaveLength(500);
    expect(index.scanned).toBe(1000);
    expect(index.filter(parseFilter('status:running vm-01'))).toHaveLength(50);
    expect(index.scanned).toBe(500);
    expect(index.filter(parseFilter('status:running vm-012'))).toHaveLength(5);
    expect(index.scanned).toBe(50);
    expect(index.filter(parseFilter('status:running vm-012 tag:prod'))).toHaveLength(1);
    expect(index.scanned).toBe(5);
    // Erasing widens: no longer from the previous hits, but from the rows whose text holds the word.
    expect(index.filter(parseFilter('status:running vm-01'))).toHaveLength(50);
    expect(index.scanned).toBe(100);
    expect(index.filter(parseFilter('status:running'))).toHaveLength(500);
    expect(index.scanned).toBe(1000);
    // A lone word is answered from the joined text, without testing rows one by one.
    expect(index.filter(parseFilter('vm-099'))).toHaveLength(10);
    expect(index.scanned).toBe(0);
  });

  it('does not narrow from a word to a longer word that is some row’s status', () => {
    const rows: FilterableVm[] = [
      { name: 'runner', namespace: 'a', status: 'Stopped', node: '', ip: '', tags: [] },
      { name: 'web', namespace: 'a', status: 'Running', node: '', ip: '', tags: [] },
    ];
    const index = new FilterIndex(rows);
    expect(index.filter(parseFilter('runne')).map((r) => r.name)).toEqual(['runner']);
    // `running` is web's status: the previous answer (runner alone) must not be the starting point.
    expect(index.filter(parseFilter('running')).map((r) => r.name)).toEqual(['web']);
    const statuses = new Set(['running']);
    expect(narrows(parseFilter('runne'), parseFilter('running'), statuses)).toBe(false);
    expect(narrows(parseFilter('runne'), parseFilter('runnex'), statuses)).toBe(true);
    expect(narrows(parseFilter('tag:pro'), parseFilter('tag:prod'), statuses)).toBe(false);
    expect(narrows(parseFilter('web'), parseFilter('web tag:prod'), statuses)).toBe(true);
    expect(narrows(parseFilter('web db'), parseFilter('web'), statuses)).toBe(false);
  });

  it('sees a replaced row’s new values (keys are cached per row object)', () => {
    const first: FilterableVm = { name: 'web', namespace: 'a', status: 'Running', node: 'n1', ip: '', tags: [] };
    expect(new FilterIndex([first]).filter(parseFilter('status:running'))).toEqual([first]);
    const replaced = { ...first, status: 'Stopped' };
    expect(new FilterIndex([replaced]).filter(parseFilter('status:running'))).toEqual([]);
    expect(new FilterIndex([replaced]).filter(parseFilter('stopped'))).toEqual([replaced]);
  });

  it('answers every row, in order, for an empty query', () => {
    const rows = randomRows(prng(7), 50);
    expect(new FilterIndex(rows).filter(parseFilter('  '))).toEqual(rows);
  });
});

describe('FilterIndex in steps', () => {
  const big = (n: number): FilterableVm[] =>
    Array.from({ length: n }, (_, i) => ({
      name: `vm-${String(i).padStart(5, '0')}`,
      namespace: 'bench',
      status: i % 2 ? 'Stopped' : 'Running',
      node: i % 2 ? '' : `corral-${(i % 3) + 1}`,
      ip: i % 2 ? '' : `10.42.${(i >> 8) & 255}.${i & 255}`,
      tags: i % 5 ? [] : ['prod'],
    }));

  /** Runs `steps` to the end, counting the yields. */
  const count = <R>(steps: Generator<void, R, void>) => {
    let yields = 0;
    for (;;) {
      const r = steps.next();
      if (r.done) return { answer: r.value, yields };
      yields++;
    }
  };

  it('yields about every STEP rows (the first build, a scan, the copy out) and answers as the plain filter', () => {
    const rows = big(20_000);
    const index = new FilterIndex(rows);
    // `v` is in every row: building the keys, walking the joined text and copying 20,000 rows out, each in steps.
    const first = count(index.steps(parseFilter('v')));
    expect(first.answer).toEqual(rows);
    expect(first.yields).toBeGreaterThanOrEqual(3 * Math.floor(rows.length / STEP));
    const running = count(index.steps(parseFilter('status:running')));
    expect(running.answer).toEqual(plain(rows, 'status:running'));
    expect(running.yields).toBeGreaterThanOrEqual(Math.floor(rows.length / STEP));
    // Nothing holds the word: one native search of the joined text, no row by row work to split.
    expect(count(index.steps(parseFilter('zzz'))).answer).toEqual([]);
  });

  it('runs that interleave or are dropped half-way leave every later answer exact', () => {
    const rand = prng(5);
    const rows = randomRows(rand, 9000);
    const index = new FilterIndex(rows);
    // Dropped in the middle of the first build: the next run carries the build on.
    const dropped = index.steps(parseFilter('web'));
    dropped.next();
    dropped.next();
    expect(index.filter(parseFilter('db'))).toEqual(plain(rows, 'db'));
    for (let round = 0; round < 40; round++) {
      const qa = randomQuery(rand);
      const qb = randomQuery(rand);
      const a = index.steps(parseFilter(qa));
      const b = index.steps(parseFilter(qb));
      let aDone: FilterableVm[] | undefined;
      let bDone: FilterableVm[] | undefined;
      // Alternate at random; sometimes abandon `a` for good.
      const abandon = rand() < 0.3;
      while (bDone === undefined || (!abandon && aDone === undefined)) {
        if (rand() < 0.5 && !abandon && aDone === undefined) {
          const r = a.next();
          if (r.done) aDone = r.value;
        } else if (bDone === undefined) {
          const r = b.next();
          if (r.done) bDone = r.value;
        }
      }
      expect(bDone, qb).toEqual(plain(rows, qb));
      if (!abandon) expect(aDone, qa).toEqual(plain(rows, qa));
      const next = randomQuery(rand);
      expect(index.filter(parseFilter(next)), next).toEqual(plain(rows, next));
    }
  });
});
