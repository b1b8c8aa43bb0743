import { describe, expect, it } from 'vitest';
import { compareByName, firstByName } from './vm-first-page';

const row = (name: string, namespace = 'default', context?: string) => ({ name, namespace, context });

/** A small random generator (the same rows every run). */
function rng(seed: number) {
  return () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
}

describe('firstByName', () => {
  it('picks the rows a name-sorted table shows first, in natural order', () => {
    const rows = [row('vm-10'), row('vm-2'), row('Web'), row('vm-1'), row('alpha')];
    expect(firstByName(rows, 3).map((r) => r.name)).toEqual(['alpha', 'vm-1', 'vm-2']);
    expect(firstByName(rows, 10).map((r) => r.name)).toEqual(['alpha', 'vm-1', 'vm-2', 'vm-10', 'Web']);
    expect(firstByName(rows, 0)).toEqual([]);
  });

  it('breaks ties by namespace and keeps namesakes (one per cluster) in their input order', () => {
    const a = row('web', 'prod', 'home');
    const b = row('web', 'prod', 'lab');
    const c = row('web', 'dev', 'lab');
    const d = row('web', 'prod', 'edge');
    expect(firstByName([a, b, c, d], 4)).toEqual([c, a, b, d]);
    expect(firstByName([a, b, c, d], 2)).toEqual([c, a]);
  });

  it('equals a full stable sort cut to the limit, for any input order', () => {
    const next = rng(7);
    const names = ['vm', 'VM', 'web', 'db', 'a', 'vm-0', 'Vm-00'];
    const rows = Array.from({ length: 400 }, () =>
      row(
        `${names[Math.floor(next() * names.length)]}-${Math.floor(next() * 60)}`,
        next() < 0.5 ? 'a' : 'b',
        next() < 0.2 ? 'lab' : undefined,
      ),
    ).map((r, i) => ({ ...r, i }));
    const sorted = [...rows].sort(compareByName);
    for (const limit of [1, 7, 50, 399, 400, 500]) expect(firstByName(rows, limit)).toEqual(sorted.slice(0, limit));
  });
});
