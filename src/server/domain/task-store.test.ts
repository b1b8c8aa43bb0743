import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import type { Task } from '../schemas/tasks';
import type { ClusterPort, KObject } from './cluster-port';
import { TaskStore, retentionVictims, taskConfigMapName } from './task-store';
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

/** A cluster whose journal is a plain map: the first list answers, the watch then stays silent (a lagging cache). */
function laggingCluster(objects: Map<string, KObject>, removed: string[]): ClusterPort {
  return {
    listPage: () => Promise.resolve({ items: [...objects.values()], resourceVersion: '1' }),
    watch: (_k: unknown, _o: unknown, _c: unknown, signal: AbortSignal) =>
      new Promise((resolve) => signal.addEventListener('abort', () => resolve('closed'))),
    fetchList: () => Promise.resolve([]),
    remove: (_kind: unknown, _ns: unknown, name: string) => {
      removed.push(name);
      return Promise.resolve(objects.delete(name));
    },
  } as unknown as ClusterPort;
}

function taskObject(id: string, startedAt: string, status: Task['status'] = 'done'): KObject {
  const endedAt = status === 'running' ? null : startedAt;
  const task: Task = {
    id,
    action: 'keep',
    target: 'ns/x',
    caller: 'c',
    status,
    progress: 100,
    log: '',
    error: '',
    startedAt,
    endedAt,
  };
  return {
    metadata: { name: taskConfigMapName(id), namespace: 'tailvm', resourceVersion: '1' },
    data: { 'task.json': JSON.stringify({ ...task, log: undefined }), log: '' },
  };
}

describe('journal retention', () => {
  it('cuts on the cluster’s journal, not on a watch cache that has not seen the newest tasks yet', async () => {
    const objects = new Map<string, KObject>();
    const add = (id: string, second: number, status?: Task['status']) => {
      const cm = taskObject(id, `2026-12-01T00:00:${String(second).padStart(2, '0')}.000Z`, status);
      objects.set(cm.metadata.name!, cm);
    };
    for (let i = 0; i < 10; i++) add(`old-${i}`, i);
    const removed: string[] = [];
    const store = new TaskStore(laggingCluster(objects, removed), new TaskJournal(), {
      namespace: 'tailvm',
      identity: 'leader',
      flushMs: 10,
      leaseSeconds: 15,
      retainCount: 10,
      retainDays: 14,
    });
    await store.start();
    expect(store.size()).toBe(10);
    // Another replica writes three more (one still running); this replica's watch has not delivered them.
    add('new-0', 20);
    add('new-1', 21);
    add('new-2', 22, 'running');
    expect(store.size()).toBe(10);
    expect(await store.prune(Date.parse('2026-12-02T00:00:00Z'))).toBe(3);
    // Exactly the three oldest went (newest first); the running task counts toward the 10 and stays.
    expect(removed).toEqual(['old-2', 'old-1', 'old-0'].map(taskConfigMapName));
    expect(objects.size).toBe(10);
    expect(objects.has(taskConfigMapName('new-2'))).toBe(true);
    // A second round finds nothing more to do.
    expect(await store.prune(Date.parse('2026-12-02T00:00:00Z'))).toBe(0);
    await store.close();
  });

  it('retentionVictims: the count includes running tasks, age applies to finished ones, ties cut by name', () => {
    const at = (s: number) => `2026-12-01T00:00:0${s}.000Z`;
    const entry = (name: string, s: number, status: Task['status'] = 'done') => ({
      name,
      task: { startedAt: at(s), status } as Task,
    });
    const entries = [entry('a', 1), entry('b', 2), entry('c', 2), entry('d', 3, 'running'), entry('e', 4)];
    const now = Date.parse('2026-12-02T00:00:00Z');
    expect(retentionVictims(entries, { retainCount: 3, retainDays: 14, now })).toEqual(['b', 'a']);
    expect(retentionVictims(entries, { retainCount: 10, retainDays: 14, now })).toEqual([]);
    // Fifteen days later every finished task is past the 14-day limit; the running one is never a victim.
    const later = now + 15 * 86_400_000;
    expect(retentionVictims(entries, { retainCount: 10, retainDays: 14, now: later })).toEqual(['e', 'c', 'b', 'a']);
  });
});
