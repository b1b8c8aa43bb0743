import { describe, expect, it } from 'vitest';
import { asKubeCaller, currentKubeCaller, FairRateLimiter, parseRateLimit, SYSTEM_CALLER } from './rate-limiter';

/** A manual clock: timers run only when `advance` passes their time. */
function fakeClock() {
  let now = 0;
  let timers: { at: number; fn: () => void }[] = [];
  return {
    now: () => now,
    setTimeout(fn: () => void, ms: number) {
      timers.push({ at: now + ms, fn });
      return {};
    },
    async advance(ms: number) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const next = timers[0];
        if (!next || next.at > end) break;
        timers = timers.slice(1);
        now = next.at;
        next.fn();
        await Promise.resolve();
      }
      now = end;
      await Promise.resolve();
    },
  };
}

describe('FairRateLimiter', () => {
  it('lets a burst through at once, then no more than qps a second', async () => {
    const clock = fakeClock();
    const limiter = new FairRateLimiter({ qps: 10, burst: 5 }, clock);
    const grants: number[] = [];
    for (let i = 0; i < 40; i++) void limiter.acquire('alice').then(() => grants.push(clock.now()));
    await clock.advance(0);
    expect(grants).toHaveLength(5);
    await clock.advance(3000);
    expect(grants).toHaveLength(35);
    // Any one-second window holds at most burst + qps grants; after the burst, exactly qps per second.
    for (const start of grants)
      expect(grants.filter((t) => t >= start && t < start + 1000).length).toBeLessThanOrEqual(15);
    expect(grants.filter((t) => t >= 1000 && t < 2000)).toHaveLength(10);
    expect(limiter.stats()).toMatchObject({ granted: 35, waiting: 5, waitingUsers: 1 });
  });

  it('serves waiting users round-robin: a single request is not stuck behind another user’s thousand', async () => {
    const clock = fakeClock();
    const limiter = new FairRateLimiter({ qps: 10, burst: 1 }, clock);
    const order: string[] = [];
    for (let i = 0; i < 1000; i++) void limiter.acquire('bulk').then(() => order.push('bulk'));
    await clock.advance(250); // the burst and a couple more of bulk's
    const before = order.length;
    void limiter.acquire('bob').then(() => order.push('bob'));
    void limiter.acquire('bob').then(() => order.push('bob'));
    await clock.advance(500);
    // bulk's turn was already due; after it bob's two requests interleave with bulk's, one each per turn.
    expect(order.slice(before, before + 4)).toEqual(['bulk', 'bob', 'bulk', 'bob']);
  });

  it('an aborted wait leaves the queue and rejects with the abort’s reason', async () => {
    const clock = fakeClock();
    const limiter = new FairRateLimiter({ qps: 1, burst: 1 }, clock);
    await limiter.acquire('a');
    const ac = new AbortController();
    const waiting = limiter.acquire('a', ac.signal);
    expect(limiter.stats().waiting).toBe(1);
    ac.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(limiter.stats().waiting).toBe(0);
  });

  it('qps 0 switches it off; close fails the waiting requests', async () => {
    const off = new FairRateLimiter({ qps: 0, burst: 1 }, fakeClock());
    await Promise.all(Array.from({ length: 100 }, () => off.acquire('x')));
    expect(off.stats().granted).toBe(100);
    const limiter = new FairRateLimiter({ qps: 1, burst: 1 }, fakeClock());
    await limiter.acquire('x');
    const waiting = limiter.acquire('x');
    limiter.close();
    await expect(waiting).rejects.toThrow('closed');
    await expect(limiter.acquire('x')).rejects.toThrow('closed');
  });

  it('requests queue as the caller of the async context they run in', async () => {
    expect(currentKubeCaller()).toBe(SYSTEM_CALLER);
    const seen = await asKubeCaller('alice', async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentKubeCaller();
    });
    expect(seen).toBe('alice');
  });
});

describe('parseRateLimit', () => {
  it('defaults, values, and errors naming the setting', () => {
    expect(parseRateLimit({})).toEqual({ qps: 50, burst: 100 });
    expect(parseRateLimit({ qps: '5', burst: '10' })).toEqual({ qps: 5, burst: 10 });
    expect(parseRateLimit({ qps: '500' })).toEqual({ qps: 500, burst: 500 });
    expect(parseRateLimit({ qps: '0' })).toEqual({ qps: 0, burst: 100 });
    expect(() => parseRateLimit({ qps: 'fast' })).toThrow('CORRAL_KUBE_QPS must be a number');
    expect(() => parseRateLimit({ burst: '0' })).toThrow('CORRAL_KUBE_BURST must be a number between 1');
    expect(() => parseRateLimit({ qps: '-1' }, { qps: '--kube-qps', burst: '--kube-burst' })).toThrow('--kube-qps');
  });
});
