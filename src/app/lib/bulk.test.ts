import { describe, expect, it } from 'vitest';
import {
  CANCELLED,
  chunks,
  groupByCluster,
  runBulk,
  type BulkApi,
  type BulkProgress,
  type BulkResult,
  type BulkTarget,
} from './bulk';

const vm = (name: string, context?: string): BulkTarget => ({ type: 'vm', namespace: 'tailvm', name, context });
const ct = (name: string, context?: string): BulkTarget => ({ type: 'ct', namespace: 'tailvm', name, context });
const ok = (key: string, type: 'vm' | 'ct', name: string, cluster = ''): BulkResult => ({
  key,
  type,
  namespace: 'tailvm',
  name,
  cluster,
  ok: true,
  message: 'ok',
});

/**
 * A server whose runs take `polls` reads to finish, answering `answer` for each guest. Like the real one, a run
 * belongs to the cluster it was started in (`started` records each chunk's context and guests) and reading it from
 * another cluster is a 404.
 */
function fakeServer(
  answer: (t: BulkTarget, context: string | undefined) => { ok: boolean; message: string },
  polls = 2,
  refuse?: number,
) {
  const runs = new Map<string, { chunk: BulkTarget[]; context: string | undefined; reads: number }>();
  const sizes: number[] = [];
  const started: { context: string | undefined; names: string[] }[] = [];
  const api: BulkApi = {
    start(chunk, context) {
      sizes.push(chunk.length);
      started.push({ context, names: chunk.map((t) => `${t.type}:${t.name}`) });
      if (sizes.length === refuse) return Promise.reject(new Error('you are read-only'));
      const task = `bulk-${sizes.length}`;
      runs.set(task, { chunk, context, reads: 0 });
      return Promise.resolve({ task });
    },
    get(task, context) {
      const run = runs.get(task)!;
      if (run.context !== context) return Promise.reject(new Error(`task ${task} not found in ${context}`));
      run.reads++;
      const ended = run.reads >= polls;
      return Promise.resolve({
        status: ended ? 'done' : 'running',
        finished: ended ? run.chunk.length : Math.floor(run.chunk.length / 2),
        results: ended ? run.chunk.map((t) => ({ ...t, ...answer(t, context) })) : [],
      });
    },
  };
  return { api, sizes, started };
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
      ok('tailvm/a', 'vm', 'a'),
      ok('ct:tailvm/a', 'ct', 'a'),
      { ...ok('tailvm/b', 'vm', 'b'), ok: false, message: 'VM tailvm/b is not running (Stopped)' },
      ok('tailvm/c', 'vm', 'c'),
    ]);
  });

  it('sends at most the server limit per run, and fails only the guests of a refused run', async () => {
    const { api, sizes } = fakeServer(() => ({ ok: true, message: 'ok' }), 1, 2);
    const targets = Array.from({ length: 2500 }, (_, i) => vm(`v${i}`));
    const r = await runBulk(targets, api, undefined, undefined, 0);
    expect(sizes).toEqual([1000, 1000, 500]);
    expect(r.filter((x) => !x.ok)).toHaveLength(1000);
    expect(r[1000]).toEqual({ ...ok('tailvm/v1000', 'vm', 'v1000'), ok: false, message: 'you are read-only' });
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

  it("runs a selection spanning clusters in each guest's own cluster and merges the results in the order asked", async () => {
    // home's tailvm/a and lab's tailvm/a are different VMs: lab's must be stopped in lab, never in home.
    const { api, started } = fakeServer((t, context) =>
      context === 'lab' && t.name === 'b'
        ? { ok: false, message: 'VM tailvm/b is not running' }
        : { ok: true, message: 'ok' },
    );
    const progress: BulkProgress[] = [];
    const selection = [vm('a', 'lab'), vm('a', 'home'), ct('a', 'lab'), vm('b', 'home'), vm('b', 'lab')];
    const r = await runBulk(selection, api, (p) => progress.push(p), undefined, 0, 'home');
    expect(started).toEqual([
      { context: 'lab', names: ['vm:a', 'ct:a', 'vm:b'] },
      { context: 'home', names: ['vm:a', 'vm:b'] },
    ]);
    expect(progress.map((p) => [p.task, p.context, p.finished, p.total])).toEqual([
      ['bulk-1', 'lab', 1, 5],
      ['bulk-1', 'lab', 3, 5],
      ['bulk-2', 'home', 4, 5],
      ['bulk-2', 'home', 5, 5],
    ]);
    expect(r).toEqual([
      ok('lab//tailvm/a', 'vm', 'a', 'lab'),
      ok('tailvm/a', 'vm', 'a'),
      ok('ct:lab//tailvm/a', 'ct', 'a', 'lab'),
      ok('tailvm/b', 'vm', 'b'),
      { ...ok('lab//tailvm/b', 'vm', 'b', 'lab'), ok: false, message: 'VM tailvm/b is not running' },
    ]);
  });

  it('groups a selection per cluster in first-seen order; guests without a context go to the default cluster', () => {
    const groups = groupByCluster([vm('a'), vm('b', 'lab'), ct('c'), vm('d', 'lab')]);
    const t = (type: 'vm' | 'ct', name: string) => ({ type, namespace: 'tailvm', name });
    expect(groups).toEqual([
      { context: undefined, targets: [t('vm', 'a'), t('ct', 'c')], indices: [0, 2] },
      { context: 'lab', targets: [t('vm', 'b'), t('vm', 'd')], indices: [1, 3] },
    ]);
  });

  it('chunks an empty selection into no requests', () => {
    expect(chunks([])).toEqual([]);
  });
});
