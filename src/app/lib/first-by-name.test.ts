import { describe, expect, it } from 'vitest';
import { byName, firstByName } from './first-by-name';

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
});
