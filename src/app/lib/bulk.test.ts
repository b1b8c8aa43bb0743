import { describe, expect, it } from 'vitest';
import { runBulk } from './bulk';

describe('runBulk', () => {
  it('reports each item in input order, failures with their message', async () => {
    const r = await runBulk(
      ['a', 'b', 'c'],
      (x) => x,
      async (x) => {
        await new Promise((res) => setTimeout(res, x === 'a' ? 20 : 1));
        if (x === 'b') throw new Error('b is already running');
      },
    );
    expect(r).toEqual([
      { key: 'a', ok: true, message: 'ok' },
      { key: 'b', ok: false, message: 'b is already running' },
      { key: 'c', ok: true, message: 'ok' },
    ]);
  });

  it('never runs more than the concurrency limit at once', async () => {
    let active = 0;
    let peak = 0;
    await runBulk(
      [...Array(20).keys()],
      String,
      async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((res) => setTimeout(res, 2));
        active--;
      },
      3,
    );
    expect(peak).toBe(3);
  });
});
