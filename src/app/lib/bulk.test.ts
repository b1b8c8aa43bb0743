import { describe, expect, it } from 'vitest';
import { chunks, runBulk, type BulkTarget } from './bulk';

const vm = (name: string): BulkTarget => ({ type: 'vm', namespace: 'tailvm', name });
const ct = (name: string): BulkTarget => ({ type: 'ct', namespace: 'tailvm', name });

describe('runBulk', () => {
  it("reports each guest's own result in order, keyed like the table's selection", async () => {
    const r = await runBulk([vm('a'), ct('a'), vm('b')], (chunk) =>
      Promise.resolve({
        results: chunk.map((t) => ({
          ...t,
          ok: t.name !== 'b',
          message: t.name === 'b' ? 'VM tailvm/b is not running (Stopped)' : 'stop accepted',
        })),
      }),
    );
    expect(r).toEqual([
      { key: 'tailvm/a', type: 'vm', ok: true, message: 'stop accepted' },
      { key: 'ct:tailvm/a', type: 'ct', ok: true, message: 'stop accepted' },
      { key: 'tailvm/b', type: 'vm', ok: false, message: 'VM tailvm/b is not running (Stopped)' },
    ]);
  });

  it('sends at most the server limit per request, and fails only the guests of a refused request', async () => {
    const sizes: number[] = [];
    const targets = Array.from({ length: 2500 }, (_, i) => vm(`v${i}`));
    const r = await runBulk(targets, (chunk) => {
      sizes.push(chunk.length);
      if (sizes.length === 2) return Promise.reject(new Error('you are read-only'));
      return Promise.resolve({ results: chunk.map((t) => ({ ...t, ok: true, message: 'ok' })) });
    });
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(r.filter((x) => !x.ok)).toHaveLength(1000);
    expect(r[1000]).toEqual({ key: 'tailvm/v1000', type: 'vm', ok: false, message: 'you are read-only' });
    expect(r[2499]?.ok).toBe(true);
  });

  it('chunks an empty selection into no requests', () => {
    expect(chunks([])).toEqual([]);
  });
});
