import { describe, expect, it } from 'vitest';
import { CANCELLED, chunks, runBulk, type BulkApi, type BulkProgress, type BulkTarget } from './bulk';

const vm = (name: string): BulkTarget => ({ type: 'vm', namespace: 'tailvm', name });
const ct = (name: string): BulkTarget => ({ type: 'ct', namespace: 'tailvm', name });

/** A server whose runs take `polls` reads to finish, answering `answer` for each guest. */
function fakeServer(answer: (t: BulkTarget) => { ok: boolean; message: string }, polls = 2, refuse?: number) {
  const runs = new Map<string, { chunk: BulkTarget[]; reads: number }>();
  const sizes: number[] = [];
  const api: BulkApi = {
    start(chunk) {
      sizes.push(chunk.length);
      if (sizes.length === refuse) return Promise.reject(new Error('you are read-only'));
      const task = `bulk-${sizes.length}`;
      runs.set(task, { chunk, reads: 0 });
      return Promise.resolve({ task });
    },
    get(task) {
      const run = runs.get(task)!;
      run.reads++;
      const ended = run.reads >= polls;
      return Promise.resolve({
        status: ended ? 'done' : 'running',
        finished: ended ? run.chunk.length : Math.floor(run.chunk.length / 2),
        results: ended ? run.chunk.map((t) => ({ ...t, ...answer(t) })) : [],
      });
    },
  };
  return { api, sizes };
}

describe('runBulk', () => {
  it("follows the run's progress and reports each guest's own result in order, keyed like the selection", async () => {
    const { api } = fakeServer((t) =>
      t.name === 'b' ? { ok: false, message: 'VM tailvm/b is not running (Stopped)' } : { ok: true, message: 'ok' },
    );
    const progress: BulkProgress[] = [];
    const r = await runBulk([vm('a'), ct('a'), vm('b'), vm('c')], api, (p) => progress.push(p), undefined, 0);
    expect(progress).toEqual([
      { task: 'bulk-1', finished: 2, total: 4 },
      { task: 'bulk-1', finished: 4, total: 4 },
    ]);
    expect(r).toEqual([
      { key: 'tailvm/a', type: 'vm', ok: true, message: 'ok' },
      { key: 'ct:tailvm/a', type: 'ct', ok: true, message: 'ok' },
      { key: 'tailvm/b', type: 'vm', ok: false, message: 'VM tailvm/b is not running (Stopped)' },
      { key: 'tailvm/c', type: 'vm', ok: true, message: 'ok' },
    ]);
  });

  it('sends at most the server limit per run, and fails only the guests of a refused run', async () => {
    const { api, sizes } = fakeServer(() => ({ ok: true, message: 'ok' }), 1, 2);
    const targets = Array.from({ length: 2500 }, (_, i) => vm(`v${i}`));
    const r = await runBulk(targets, api, undefined, undefined, 0);
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(r.filter((x) => !x.ok)).toHaveLength(1000);
    expect(r[1000]).toEqual({ key: 'tailvm/v1000', type: 'vm', ok: false, message: 'you are read-only' });
    expect(r[2499]?.ok).toBe(true);
  });

  it('once stopped, the chunks not yet started end as cancelled without a request', async () => {
    const { api, sizes } = fakeServer(() => ({ ok: true, message: 'ok' }), 1);
    let stop = false;
    const targets = Array.from({ length: 2500 }, (_, i) => vm(`v${i}`));
    const r = await runBulk(
      targets,
      api,
      () => (stop = true),
      () => stop,
      0,
    );
    expect(sizes).toEqual([1000]);
    expect(r).toHaveLength(2500);
    expect(r.filter((x) => x.message === CANCELLED)).toHaveLength(1500);
  });

  it('chunks an empty selection into no requests', () => {
    expect(chunks([])).toEqual([]);
  });
});
