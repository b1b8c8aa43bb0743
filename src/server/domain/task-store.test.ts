import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import type { ClusterPort } from './cluster-port';
import { TaskStore } from './task-store';
import { TaskJournal } from './tasks';

/** A cluster that lists nothing, watches until aborted and refuses every write at once (connection refused). */
function refusingCluster(calls: string[]): ClusterPort {
  const refuse = (what: string) => {
    calls.push(what);
    return Promise.reject(new CorralError('UNAVAILABLE', 'connection refused'));
  };
  return {
    listPage: () => Promise.resolve({ items: [], resourceVersion: '1' }),
    watch: (_k: unknown, _o: unknown, _c: unknown, signal: AbortSignal) =>
      new Promise((resolve) => signal.addEventListener('abort', () => resolve('closed'))),
    fetchList: () => Promise.resolve([]),
    create: () => refuse('create'),
    patch: () => refuse('patch'),
    fetch: () => refuse('fetch'),
    remove: () => refuse('remove'),
  } as unknown as ClusterPort;
}

describe('TaskStore against an apiserver that refuses', () => {
  it('backs off between attempts instead of spinning, and flush/close do not hang on it', async () => {
    const calls: string[] = [];
    const journal = new TaskJournal();
    const store = new TaskStore(refusingCluster(calls), journal, {
      namespace: 'tailvm',
      identity: 'r1',
      flushMs: 10,
      leaseSeconds: 15,
      retainCount: 1000,
      retainDays: 14,
    });
    await store.start();
    const task = journal.start('x', 'ns/y', 'z');
    task.done();
    await new Promise((r) => setTimeout(r, 400));
    // One attempt at once, the next 500 ms later at the earliest.
    expect(calls).toEqual(['create']);
    const t0 = Date.now();
    await store.flush();
    await store.close();
    expect(Date.now() - t0).toBeLessThan(1000);
    const after = calls.length;
    await new Promise((r) => setTimeout(r, 700));
    expect(calls.length).toBe(after); // nothing retried after close
  });
});
