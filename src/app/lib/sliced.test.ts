import { describe, expect, it } from 'vitest';
import { postTask, runSliced } from './sliced';

/** A generator that records when each of its `n` steps ran and costs `cost` fake milliseconds per step. */
function work(n: number, clock: { t: number }, cost: number, ran: number[]) {
  return (function* () {
    for (let i = 0; i < n; i++) {
      clock.t += cost;
      ran.push(i);
      yield;
    }
    return n * 10;
  })();
}

describe('runSliced', () => {
  it('runs nothing before it returns, then slices of the budget, each a task of its own, then done once', () => {
    const clock = { t: 0 };
    const tasks: (() => void)[] = [];
    const ran: number[] = [];
    const answers: number[] = [];
    runSliced(work(10, clock, 1, ran), (a) => answers.push(a), {
      budgetMs: 3,
      post: (run) => tasks.push(run),
      now: () => clock.t,
    });
    expect(ran).toEqual([]);
    const perTask: number[] = [];
    while (tasks.length) {
      const before = ran.length;
      tasks.shift()!();
      perTask.push(ran.length - before);
    }
    // 3 ms of 1 ms steps per task; the last task takes the end of the generator.
    expect(perTask).toEqual([3, 3, 3, 1]);
    expect(answers).toEqual([100]);
  });

  it('takes at least one step per slice even when a step costs more than the budget', () => {
    const clock = { t: 0 };
    const tasks: (() => void)[] = [];
    const ran: number[] = [];
    runSliced(work(3, clock, 10, ran), () => undefined, {
      budgetMs: 4,
      post: (r) => tasks.push(r),
      now: () => clock.t,
    });
    let n = 0;
    while (tasks.length) {
      tasks.shift()!();
      n++;
    }
    expect(ran).toEqual([0, 1, 2]);
    expect(n).toBe(4);
  });

  it('a cancelled run takes no further step and never calls done', () => {
    const clock = { t: 0 };
    const tasks: (() => void)[] = [];
    const ran: number[] = [];
    const answers: number[] = [];
    const cancel = runSliced(work(10, clock, 1, ran), (a) => answers.push(a), {
      budgetMs: 2,
      post: (r) => tasks.push(r),
      now: () => clock.t,
    });
    tasks.shift()!();
    expect(ran).toEqual([0, 1]);
    cancel();
    while (tasks.length) tasks.shift()!();
    expect(ran).toEqual([0, 1]);
    expect(answers).toEqual([]);
  });

  it('posts through a MessageChannel by default, in order', async () => {
    const seen: number[] = [];
    await new Promise<void>((resolve) => {
      postTask(() => seen.push(1));
      postTask(() => seen.push(2));
      postTask(() => {
        seen.push(3);
        resolve();
      });
    });
    expect(seen).toEqual([1, 2, 3]);
    const answer = await new Promise<number>((resolve) => runSliced(work(5, { t: 0 }, 0, []), resolve));
    expect(answer).toBe(50);
  });
});
