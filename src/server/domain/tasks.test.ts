import { describe, expect, it } from 'vitest';
import type { Task } from '../schemas/tasks';
import type { CorralError } from '../errors';
import { runAsTask, TaskCancelled, TaskJournal } from './tasks';

describe('TaskJournal', () => {
  it('records caller, progress, log and end state', () => {
    const j = new TaskJournal(10);
    const t = j.start('delete', 'tailvm/web', 'alice@github');
    t.progress(40);
    t.log('stopping');
    expect(j.get(t.id)).toMatchObject({ status: 'running', progress: 40, caller: 'alice@github', endedAt: null });
    t.done('gone');
    const done = j.get(t.id)!;
    expect(done.status).toBe('done');
    expect(done.progress).toBe(100);
    expect(done.log).toMatch(/stopping\n.*gone/);
    expect(done.endedAt).not.toBeNull();
  });

  it('lists newest first and evicts the oldest beyond capacity', () => {
    const j = new TaskJournal(3);
    const ids = ['a', 'b', 'c', 'd'].map((n) => j.start('start', `ns/${n}`, 'x').id);
    expect(j.list().map((t) => t.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect(j.get(ids[0]!)).toBeUndefined();
  });

  it('runAsTask records a failure and rethrows it', async () => {
    const j = new TaskJournal();
    await expect(
      runAsTask(j, 'create', 'tailvm/x', 'bob', () => Promise.reject(new Error('quota exceeded'))),
    ).rejects.toThrow('quota exceeded');
    expect(j.list()[0]).toMatchObject({ status: 'error', error: 'quota exceeded' });
  });

  it('ignores updates after the end', () => {
    const j = new TaskJournal();
    const t = j.start('x', 'y', 'z');
    t.fail(new Error('boom'));
    t.done();
    expect(j.get(t.id)?.status).toBe('error');
  });
});

describe('TaskJournal as the view of the cluster journal', () => {
  const remote = (over: Partial<Task> = {}): Task => ({
    id: 'start-web-100-ab.1',
    action: 'start',
    target: 'tailvm/web',
    caller: 'bob',
    status: 'running',
    progress: 10,
    log: '10:00:00 start requested',
    error: '',
    startedAt: '2026-12-01T10:00:00.000Z',
    endedAt: null,
    ...over,
  });

  it('tags ids so two replicas never mint the same one', () => {
    const a = new TaskJournal({ idTag: 'aaaa.' });
    const b = new TaskJournal({ idTag: 'bbbb.' });
    expect(a.start('x', 'ns/y', 'z').id).not.toBe(b.start('x', 'ns/y', 'z').id);
    expect(a.start('x', 'ns/y', 'z').id).toMatch(/^x-y-\d+-aaaa\.2$/);
  });

  it('adopts other replicas’ tasks in age order, publishes them, but never to the local writers', () => {
    const j = new TaskJournal();
    const seen: string[] = [];
    const local: string[] = [];
    j.subscribe((t) => seen.push(`${t.id}:${t.status}`));
    j.subscribeLocal((t) => local.push(t.id));
    j.adopt(remote({ id: 'newer', startedAt: '2026-12-01T11:00:00.000Z' }));
    j.adopt(remote({ id: 'older', startedAt: '2026-12-01T09:00:00.000Z' }));
    expect(j.list().map((t) => t.id)).toEqual(['newer', 'older']);
    j.adopt(remote({ id: 'older', status: 'done', progress: 100, endedAt: '2026-12-01T09:01:00.000Z' }));
    // An ended task is not revived by a late running copy.
    j.adopt(remote({ id: 'older' }));
    expect(j.get('older')?.status).toBe('done');
    expect(seen).toEqual(['newer:running', 'older:running', 'older:done']);
    expect(local).toEqual([]);
    expect(j.isLocal('older')).toBe(false);
  });

  it('keeps its own running task over a trailing cluster copy, but takes a survivor’s interruption', () => {
    const j = new TaskJournal();
    const t = j.start('import', 'tailvm/disk', 'alice');
    t.log('step one');
    t.log('step two');
    j.adopt({ ...j.get(t.id)!, log: 'step one' });
    expect(j.get(t.id)?.log).toMatch(/step two$/);
    j.adopt({ ...j.get(t.id)!, status: 'error', error: 'interrupted (replica gone)' });
    expect(j.get(t.id)?.status).toBe('error');
    t.done('late');
    expect(j.get(t.id)).toMatchObject({ status: 'error', error: 'interrupted (replica gone)' });
  });

  it('bounds a task’s log by lines and characters, saying how many were dropped', () => {
    const j = new TaskJournal({ maxLogLines: 3, maxLogChars: 1000 });
    const t = j.start('x', 'ns/y', 'z');
    for (let i = 0; i < 10; i++) t.log(`line ${i}`);
    const lines = j.get(t.id)!.log.split('\n');
    expect(lines[0]).toBe('… 7 earlier line(s) dropped');
    expect(lines.slice(1).map((l) => l.slice(9))).toEqual(['line 7', 'line 8', 'line 9']);
    const k = new TaskJournal({ maxLogChars: 50 });
    const u = k.start('x', 'ns/y', 'z');
    for (let i = 0; i < 10; i++) u.log('y'.repeat(20));
    expect(k.get(u.id)!.log.length).toBeLessThan(100);
  });

  it('interruptLocal ends only this process’s running tasks, with the reason', () => {
    const j = new TaskJournal();
    const mine = j.start('x', 'ns/a', 'z');
    const finished = j.start('x', 'ns/b', 'z');
    finished.done();
    j.adopt(remote({ id: 'theirs' }));
    expect(j.runningLocal().map((t) => t.id)).toEqual([mine.id]);
    expect(j.interruptLocal('interrupted (replica shut down)')).toBe(1);
    expect(j.get(mine.id)).toMatchObject({ status: 'error', error: 'interrupted (replica shut down)' });
    expect(j.get(finished.id)?.status).toBe('done');
    expect(j.get('theirs')?.status).toBe('running');
  });
});

describe('TaskJournal.cancel', () => {
  const admin = { login: 'root', name: 'root', admin: true, enforced: true };
  const alice = { login: 'alice', name: 'alice', admin: false, enforced: true };

  it('runs the handlers once, marks the task and ends it as cancelled by the caller', () => {
    const j = new TaskJournal();
    const t = j.start('move', 'tailvm/web', 'alice');
    const heard: string[] = [];
    t.onCancel((by) => heard.push(by));
    expect(j.get(t.id)?.cancellable).toBe(true);
    const during = j.cancel(t.id, alice);
    expect(during).toMatchObject({ status: 'running', cancelledBy: 'alice' });
    expect(during.cancellable).toBeUndefined();
    expect(during.log).toMatch(/cancel requested by alice$/);
    // Asked again while it winds down: the same answer, the handlers not run twice.
    expect(j.cancel(t.id, admin).cancelledBy).toBe('alice');
    expect(heard).toEqual(['alice']);
    t.fail(new TaskCancelled('alice'));
    expect(j.get(t.id)).toMatchObject({ status: 'error', error: 'cancelled by alice', cancelledBy: 'alice' });
  });

  it('refuses what it cannot cancel: unknown 404, ended 409, no handler 409, someone else 403', () => {
    const j = new TaskJournal();
    const code = (f: () => unknown) => {
      try {
        f();
      } catch (err) {
        return `${(err as CorralError).code}: ${(err as Error).message}`;
      }
      return 'accepted';
    };
    expect(code(() => j.cancel('nope', admin))).toBe('NOT_FOUND: task nope not found');
    const plain = j.start('start', 'tailvm/web', 'alice');
    expect(code(() => j.cancel(plain.id, admin))).toMatch(/^CONFLICT: .* cannot be cancelled \(a start task/);
    const move = j.start('move', 'tailvm/web', 'bob');
    const off = move.onCancel(() => undefined);
    expect(code(() => j.cancel(move.id, alice))).toMatch(
      /^FORBIDDEN: alice may not cancel .*only who started it \(bob\)/,
    );
    expect(code(() => j.cancel(move.id, { ...alice, login: 'bob', readOnlyReason: 'remote' }))).toMatch(/^FORBIDDEN/);
    off(); // past its point of no return
    expect(j.get(move.id)?.cancellable).toBeUndefined();
    expect(code(() => j.cancel(move.id, admin))).toMatch(/^CONFLICT: .* cannot be cancelled/);
    move.done();
    expect(code(() => j.cancel(move.id, admin))).toMatch(/^CONFLICT: task .* has already ended \(OK\)$/);
    // Another replica's running task (adopted from the cluster journal) is not this process's to stop.
    j.adopt({ ...j.get(move.id)!, id: 'remote-1', status: 'running', cancellable: true, endedAt: null });
    expect(code(() => j.cancel('remote-1', admin))).toMatch(/^CONFLICT: .*another Corral replica runs it/);
  });
});
