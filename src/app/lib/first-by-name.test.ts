import { describe, expect, it } from 'vitest';
import { byName, firstByName, firstByNameSteps } from './first-by-name';

describe('firstByName', () => {
  it('equals a stable sort by name then namespace, cut to n, on random rows', () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let round = 0; round < 50; round++) {
      const rows = Array.from({ length: 1 + Math.floor(rand() * 400) }, (_, i) => ({
        name: `${['web', 'Web', 'db', 'vm-'][Math.floor(rand() * 4)]}${Math.floor(rand() * 30)}`,
        namespace: ['a', 'B', 'c'][Math.floor(rand() * 3)]!,
        i,
      }));
      for (const n of [1, 10, 100, 1000]) {
        expect(firstByName(rows, n).map((r) => r.i)).toEqual(
          [...rows]
            .sort(byName)
            .slice(0, n)
            .map((r) => r.i),
        );
      }
    }
  });

  it('uses natural order (web-2 before web-10) and keeps nothing for n = 0', () => {
    const rows = ['web-10', 'web-2', 'web-1'].map((name) => ({ name, namespace: 'x' }));
    expect(firstByName(rows, 2).map((r) => r.name)).toEqual(['web-1', 'web-2']);
    expect(firstByName(rows, 0)).toEqual([]);
  });

  it('in steps: yields every 2,048 rows and keeps the same rows', () => {
    const rows = Array.from({ length: 10_000 }, (_, i) => ({ name: `vm-${(i * 7919) % 10_000}`, namespace: 'x', i }));
    const steps = firstByNameSteps(rows, 100);
    let yields = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) yields++;
    expect(yields).toBe(Math.floor(rows.length / 2048));
    expect(r.value).toEqual(firstByName(rows, 100));
    expect(r.value.map((x) => x.name).slice(0, 3)).toEqual(['vm-0', 'vm-1', 'vm-2']);
  });
});
