import { describe, expect, it } from 'vitest';
import type { DomainDeps } from './deps';
import { mirrorInDestination } from './move-journal';
import { TaskCancelled, TaskJournal } from './tasks';

const side = (context: string, journal = new TaskJournal()) =>
  ({ journal, cluster: { info: { context } } }) as unknown as DomainDeps;
const admin = { login: 'root', name: 'root', admin: true, enforced: false };
const facts = { target: 'tailvm/web', from: 'kubevirt/home/tailvm/web', caller: 'alice' };

describe('mirrorInDestination', () => {
  it("writes the destination's move-in entry along with the move, each naming the other", () => {
    const [home, lab] = [side('home'), side('lab')];
    const task = home.journal.start('move', 'tailvm/web', 'alice');
    const both = mirrorInDestination(task, home, lab, facts);
    expect(both.id).toBe(task.id);
    both.log('disk copied');
    both.progress(50);
    both.done('moved');
    const [mirror] = lab.journal.list();
    expect(mirror).toMatchObject({ action: 'move-in', target: 'tailvm/web', caller: 'alice', status: 'done' });
    expect(mirror!.log).toContain(`follows task ${task.id} in home's journal`);
    expect(mirror!.log).toMatch(/disk copied\n.* moved$/);
    expect(home.journal.get(task.id)!.log).toContain(`shows in lab's journal as task ${mirror!.id}`);
  });

  it('a cancel of either entry cancels the move once; both end cancelled', () => {
    const [home, lab] = [side('home'), side('lab')];
    const task = home.journal.start('move', 'tailvm/web', 'alice');
    const both = mirrorInDestination(task, home, lab, facts);
    const heard: string[] = [];
    both.onCancel((by) => heard.push(by));
    const mirrorId = lab.journal.list()[0]!.id;
    expect([home.journal.get(task.id)?.cancellable, lab.journal.get(mirrorId)?.cancellable]).toEqual([true, true]);
    lab.journal.cancel(mirrorId, admin);
    home.journal.cancel(task.id, admin);
    expect(heard).toEqual(['root']);
    both.fail(new TaskCancelled('root'));
    for (const t of [home.journal.get(task.id), lab.journal.get(mirrorId)])
      expect(t).toMatchObject({ status: 'error', error: 'cancelled by root', cancelledBy: 'root' });
  });

  it('a move within one cluster keeps one task', () => {
    const home = side('home');
    const task = home.journal.start('move', 'tailvm/web', 'alice');
    expect(mirrorInDestination(task, home, side('home', home.journal), facts)).toBe(task);
    expect(home.journal.list()).toHaveLength(1);
  });
});
