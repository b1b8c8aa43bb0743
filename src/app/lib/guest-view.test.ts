import { describe, expect, it } from 'vitest';
import { byName } from './first-by-name';
import { KeyedCollection, rowKey, type Keyed } from './fleet-store';
import { isEmptyFilter, matchesFilter, parseFilter } from './filter-query';
import { applySorted, guestOrder, type GuestSortKey } from './guest-order';
import { ctGuestCached, vmGuestCached, type GuestRow } from './guest-rows';
import { diffRows, GuestView } from './guest-view';
import type { CtRow, VmRow } from './model';
import { sortRows, type SortKind } from './sort';

/** mulberry32, so a failure names a reproducible seed. */
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

const KINDS: Record<GuestSortKey, SortKind> = {
  type: 'text',
  name: 'text',
  status: 'text',
  node: 'text',
  namespace: 'text',
  cpu: 'number',
  mem: 'quantity',
  ip: 'ip',
};
const STATUSES = ['Running', 'Stopped', 'Paused', 'Starting', ''];
const NAMES = ['web', 'Web', 'db', 'vm-', 'vm-0', 'ci'];

function makeVm(rand: () => number, name: string, namespace: string, context: string): VmRow {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const status = pick(STATUSES);
  return {
    context,
    name,
    namespace,
    status,
    ready: status === 'Running',
    running: status === 'Running',
    cpu: pick([0, 1, 2, 4, 16]),
    mem: pick(['', '512Mi', '4Gi', '4096Mi', '1G']),
    disk: '',
    ip: rand() < 0.3 ? '' : `10.42.${Math.floor(rand() * 3)}.${Math.floor(rand() * 20)}`,
    node: pick(['', 'corral-1', 'corral-2', 'Corral-3']),
    tags: ['prod', 'db', 'web-tier'].filter(() => rand() < 0.3),
    template: rand() < 0.05,
    uid: name,
    createdAt: '',
    runStrategy: 'Always',
    instancetype: '',
    preference: '',
    os: '',
    vmid: 100,
  };
}

function makeCt(rand: () => number, name: string, namespace: string, context: string): CtRow {
  const phase = rand() < 0.5 ? 'Running' : 'Stopped';
  return {
    context,
    name,
    namespace,
    node: phase === 'Running' ? 'corral-1' : '',
    phase,
    ready: phase === 'Running',
    image: 'alpine',
    cpu: 1,
    mem: '256Mi',
    privileged: false,
    disk: '1Gi',
    storageClass: '',
    ip: '',
    createdAt: '',
    reason: '',
    diskUsage: null,
  };
}

/** What the table showed before it kept its rows: every guest again, sorted, filtered. */
function rebuilt(vms: VmRow[], cts: CtRow[], dc: string, key: GuestSortKey, dir: 'asc' | 'desc', q: string) {
  const guests = [
    ...vms.filter((v) => !v.template).map((v) => vmGuestCached(v, dc)),
    ...cts.map((c) => ctGuestCached(c, dc)),
  ];
  const filter = parseFilter(q);
  return guests.sort(guestOrder({ key, dir }, KINDS[key]).compare).filter((g) => matchesFilter(filter, g));
}

const QUERIES = ['', 'web', 'status:running', 'tag:prod', '10.42.1', 'type:ct', '-tag:db w'];

describe('guest order', () => {
  it('orders as the stable sortRows does when name, namespace and type tell every row apart', () => {
    const rand = prng(3);
    const rows = Array.from({ length: 300 }, (_, i) => vmGuestCached(makeVm(rand, `${NAMES[i % 6]}${i}`, 'a', '')));
    for (const key of Object.keys(KINDS) as GuestSortKey[])
      for (const dir of ['asc', 'desc'] as const) {
        const old = sortRows(rows, { key, dir }, KINDS[key], (a, b) =>
          guestOrder({ key: 'name', dir: 'asc' }, 'text').compare(a, b),
        );
        expect([...rows].sort(guestOrder({ key, dir }, KINDS[key]).compare)).toEqual(old);
      }
  });

  it('inserting and removing rows one by one equals sorting everything, on random input', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const rand = prng(seed);
      const key = (Object.keys(KINDS) as GuestSortKey[])[seed % 8]!;
      const order = guestOrder({ key, dir: seed % 2 ? 'asc' : 'desc' }, KINDS[key]);
      const pool = Array.from({ length: 200 }, (_, i) =>
        vmGuestCached(makeVm(rand, NAMES[Math.floor(rand() * 6)]!, `ns${i % 3}`, i % 4 ? '' : 'lab'), 'home'),
      );
      // Namesakes on two clusters and equal names keep one place each: keys are unique, so the order is total.
      const unique = [...new Map(pool.map((g) => [g.key, g])).values()];
      let live: GuestRow[] = [];
      let sorted: GuestRow[] = [];
      for (const g of unique) {
        const removed = rand() < 0.3 && live.length > 0 ? [live[Math.floor(rand() * live.length)]!] : [];
        live = live.filter((r) => !removed.includes(r)).concat(g);
        sorted = applySorted(sorted, removed, [g], order);
        expect(sorted).toEqual([...live].sort(order.compare));
      }
    }
  });
});

describe('diffRows', () => {
  it('finds replaced, new and gone rows; a reordered list comes out removed and added again', () => {
    const a = { k: 'a' };
    const b = { k: 'b' };
    const b2 = { k: 'b' };
    const c = { k: 'c' };
    const d = { k: 'd' };
    const key = (r: { k: string }) => r.k;
    expect(diffRows([a, b, c], [a, b2, c], key)).toEqual({ removed: [b], added: [b2] });
    expect(diffRows([a, b, c], [a, c, d], key)).toEqual({ removed: [b], added: [d] });
    expect(diffRows([a, b, c], [a, b, c], key)).toEqual({ removed: [], added: [] });
    const shuffled = diffRows([a, b, c], [c, a, b], key);
    const after = new Set([a, b, c].filter((r) => !shuffled.removed.includes(r)).concat(shuffled.added));
    expect(after).toEqual(new Set([a, b, c]));
  });
});

describe('GuestView', () => {
  it('after every random change equals sorting and filtering every guest again', () => {
    for (let seed = 1; seed <= 8; seed++) {
      const rand = prng(100 + seed);
      let dc = '';
      const key = (row: Keyed) => rowKey(row, dc);
      const vms = new KeyedCollection<VmRow>(key);
      const cts = new KeyedCollection<CtRow>(key);
      const view = new GuestView();
      const sortKey = (Object.keys(KINDS) as GuestSortKey[])[seed % 8]!;
      let dir: 'asc' | 'desc' = 'asc';
      let order = guestOrder({ key: sortKey, dir }, KINDS[sortKey]);
      let q = '';
      let filter = parseFilter(q);
      const name = () => `${NAMES[Math.floor(rand() * 6)]}${Math.floor(rand() * 60)}`;
      const ctx = () => (rand() < 0.2 ? 'lab' : 'home');
      vms.replaceAll(Array.from({ length: 150 }, () => makeVm(rand, name(), 'ns', ctx())));
      for (let step = 0; step < 80; step++) {
        const r = rand();
        if (r < 0.45) {
          const list = vms.list();
          const old = list[Math.floor(rand() * list.length)];
          // A change: the store replaces the row with a new object under the same key.
          if (old) vms.upsert(makeVm(rand, old.name, old.namespace, old.context));
        } else if (r < 0.6) vms.upsert(makeVm(rand, name(), 'ns', ctx()));
        else if (r < 0.7) {
          const list = vms.list();
          const gone = list[Math.floor(rand() * list.length)];
          if (gone) vms.remove(key(gone));
        } else if (r < 0.78) cts.upsert(makeCt(rand, name(), 'ns', ctx()));
        else if (r < 0.82) {
          const list = cts.list();
          const gone = list[Math.floor(rand() * list.length)];
          if (gone) cts.remove(key(gone));
        } else if (r < 0.9) {
          q = QUERIES[Math.floor(rand() * QUERIES.length)]!;
          filter = parseFilter(q);
        } else if (r < 0.95) {
          dir = dir === 'asc' ? 'desc' : 'asc';
          order = guestOrder({ key: sortKey, dir }, KINDS[sortKey]);
        } else if (r < 0.97) {
          // A snapshot: every row a new object.
          vms.replaceAll(vms.list().map((v) => ({ ...v })));
        } else {
          // The default cluster becomes known (a snapshot naming the clusters): every key changes.
          dc = dc ? '' : 'home';
          vms.replaceAll(vms.list().map((v) => ({ ...v })));
          cts.replaceAll(cts.list().map((c) => ({ ...c })));
        }
        view.sync(vms.list(), cts.list(), dc);
        const want = rebuilt(vms.list(), cts.list(), dc, sortKey, dir, q);
        const label = `seed ${seed} step ${step} ${q}`;
        const shown = view.shown(order, filter);
        expect(
          shown.map((g) => g.key),
          label,
        ).toEqual(want.map((g) => g.key));
        // The very row objects (one GuestRow per store row), not copies.
        expect(
          shown.every((g, i) => g === want[i]),
          label,
        ).toBe(true);
        const plain = vms.list().filter((v) => !v.template);
        expect(view.counts, label).toEqual({
          vms: plain.length,
          running: plain.filter((v) => v.status === 'Running').length,
          cts: cts.size,
          ctsRunning: cts.list().filter((c) => c.phase === 'Running').length,
        });
        expect(view.templates(), label).toEqual(
          vms
            .list()
            .filter((v) => v.template)
            .sort((a, b) => byName(a, b) || a.context.localeCompare(b.context)),
        );
        const tags = new Map<string, number>();
        for (const v of plain) for (const t of v.tags) tags.set(t, (tags.get(t) ?? 0) + 1);
        expect(view.tags(), label).toEqual([...tags.entries()].sort((a, b) => a[0].localeCompare(b[0])));
        expect(view.size, label).toEqual(plain.length + cts.size);
      }
    }
  });

  it('a change of one row gives new arrays and moves only that row; nothing changed keeps the arrays', () => {
    const rand = prng(9);
    const vms = new KeyedCollection<VmRow>();
    vms.replaceAll(Array.from({ length: 1000 }, (_, i) => ({ ...makeVm(rand, `vm-${i}`, 'ns', ''), template: false })));
    const view = new GuestView();
    const order = guestOrder({ key: 'name', dir: 'asc' }, 'text');
    view.sync(vms.list(), [], '');
    const filter = parseFilter('vm-1');
    const before = view.rows(order);
    const shownBefore = view.shown(order, filter);
    expect(view.sync(vms.list(), [], '')).toBe(false);
    expect(view.rows(order)).toBe(before);
    const old = vms.get('ns/vm-10')!;
    vms.upsert({ ...old, template: false, status: 'Paused' });
    const stamp = view.stamp;
    expect(view.sync(vms.list(), [], '')).toBe(true);
    expect(view.stamp).toBe(stamp + 1);
    const after = view.rows(order);
    expect(after).not.toBe(before);
    expect(after.filter((g, i) => g !== before[i]).map((g) => g.key)).toEqual(['ns/vm-10']);
    expect(view.shown(order, filter)).not.toBe(shownBefore);
    expect(view.shown(order, filter).find((g) => g.key === 'ns/vm-10')?.status).toBe('Paused');
  });
});

describe('GuestView filter in steps', () => {
  it('answers a filter in steps while changes land, exactly as filtering everything again; meanwhile the previous answer', () => {
    for (let seed = 1; seed <= 4; seed++) {
      const rand = prng(500 + seed);
      const vms = new KeyedCollection<VmRow>((row: Keyed) => rowKey(row, ''));
      let next = 0;
      const fresh = () => makeVm(rand, `${NAMES[next % 6]}${next++}`, 'ns', '');
      vms.replaceAll(Array.from({ length: 3000 }, fresh));
      const view = new GuestView();
      const sortKey = (Object.keys(KINDS) as GuestSortKey[])[seed % 8]!;
      const order = guestOrder({ key: sortKey, dir: 'asc' }, KINDS[sortKey]);
      view.sync(vms.list(), [], '');
      let shownQuery = '';
      for (let round = 0; round < 12; round++) {
        const q = QUERIES[Math.floor(rand() * QUERIES.length)]!;
        const filter = parseFilter(q);
        const steps = view.filterSteps(order, filter);
        let yields = 0;
        let changes = 0;
        for (let r = steps.next(); !r.done; r = steps.next()) {
          yields++;
          // The first step always sees a change; later ones at random.
          const x = yields === 1 ? 0 : rand();
          if (x < 0.3) {
            const list = vms.list();
            const old = list[Math.floor(rand() * list.length)]!;
            vms.upsert(makeVm(rand, old.name, old.namespace, old.context));
          } else if (x < 0.4) vms.upsert(fresh());
          else if (x < 0.5) {
            const list = vms.list();
            vms.remove(rowKey(list[Math.floor(rand() * list.length)]!, ''));
          } else if (x < 0.52)
            vms.replaceAll(vms.list().map((v) => ({ ...v }))); // a snapshot: starts over
          else continue;
          changes++;
          view.sync(vms.list(), [], '');
          // Still running: the table keeps showing the previous answer, up to date with the change.
          const now = view.answer(order, filter);
          if (changes === 1 && !isEmptyFilter(filter) && shownQuery !== q) {
            expect(now.filter).not.toBe(filter);
            expect(now.rows.map((g) => g.key)).toEqual(
              rebuilt(vms.list(), [], '', sortKey, 'asc', shownQuery).map((g) => g.key),
            );
          }
        }
        const label = `seed ${seed} round ${round} ${q}`;
        const want = rebuilt(vms.list(), [], '', sortKey, 'asc', q);
        const now = view.answer(order, filter);
        expect(now.filter, label).toBe(filter);
        expect(
          now.rows.map((g) => g.key),
          label,
        ).toEqual(want.map((g) => g.key));
        expect(
          now.rows.every((g, i) => g === want[i]),
          label,
        ).toBe(true);
        if (!isEmptyFilter(filter) && shownQuery !== q) {
          expect(yields, label).toBeGreaterThan(1);
          expect(changes, label).toBeGreaterThan(0);
        }
        shownQuery = q;
      }
    }
  });

  it('a run overtaken by a later one ends without replacing the later answer', () => {
    const rand = prng(77);
    const vms = new KeyedCollection<VmRow>((row: Keyed) => rowKey(row, ''));
    vms.replaceAll(Array.from({ length: 5000 }, (_, i) => makeVm(rand, `${NAMES[i % 6]}${i}`, 'ns', '')));
    const view = new GuestView();
    const order = guestOrder({ key: 'name', dir: 'asc' }, 'text');
    view.sync(vms.list(), [], '');
    const web = parseFilter('web');
    const db = parseFilter('db');
    const first = view.filterSteps(order, web);
    first.next();
    const later = view.filterSteps(order, db);
    for (let r = later.next(); !r.done; r = later.next());
    for (let r = first.next(); !r.done; r = first.next());
    expect(view.answer(order, db).filter).toBe(db);
    expect(view.answer(order, web).filter).toBe(db);
    expect(view.shown(order, web).map((g) => g.key)).toEqual(
      rebuilt(vms.list(), [], '', 'name', 'asc', 'web').map((g) => g.key),
    );
  });
  it('advance carries one run on across calls within its budget, whoever calls, and drops it for another filter', () => {
    const rand = prng(31);
    const vms = new KeyedCollection<VmRow>((row: Keyed) => rowKey(row, ''));
    vms.replaceAll(Array.from({ length: 9000 }, (_, i) => makeVm(rand, `${NAMES[i % 6]}${i}`, 'ns', '')));
    const view = new GuestView();
    const order = guestOrder({ key: 'name', dir: 'asc' }, 'text');
    view.sync(vms.list(), [], '');
    const clock = { t: 0 };
    // Every reading of the clock is a millisecond later: a budget of 3 allows a few steps only.
    const tick = () => clock.t++;
    const web = parseFilter('web');
    expect(view.advance(order, web, 3, tick)).toBe(false);
    expect(view.answer(order, web).filter).toBe(null);
    const db = parseFilter('db');
    // Another filter: the web run is dropped, db starts; a few calls later db is answered.
    let calls = 0;
    while (!view.advance(order, db, 3, tick)) calls++;
    expect(calls).toBeGreaterThan(1);
    expect(view.answer(order, db).rows.map((g) => g.key)).toEqual(
      rebuilt(vms.list(), [], '', 'name', 'asc', 'db').map((g) => g.key),
    );
    // The steps for the page's slices carry on the same run as render calls do.
    const steps = view.advanceSteps(order, web);
    expect(view.advance(order, web, 3, tick)).toBe(false);
    let yields = 0;
    while (!steps.next().done) yields++;
    expect(yields).toBeGreaterThan(0);
    expect(view.answer(order, web).filter).toBe(web);
    expect(view.answer(order, web).rows.map((g) => g.key)).toEqual(
      rebuilt(vms.list(), [], '', 'name', 'asc', 'web').map((g) => g.key),
    );
    expect(view.advance(order, parseFilter(''), 0, tick)).toBe(true);
  });
});
