import { describe, expect, it } from 'vitest';
import { runAsTask, TaskJournal } from './tasks';

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
