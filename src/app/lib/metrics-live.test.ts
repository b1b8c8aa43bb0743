import { describe, expect, it } from 'vitest';
import { chartNotice, mergePoint } from './metrics-live';

const HOUR = 3_600_000;
const p = (t: number, cpu = 100) => ({ t, cpu });

describe('mergePoint', () => {
  it('appends to the hour window and drops what fell out of the hour', () => {
    const held = [p(0), p(HOUR / 2), p(HOUR)];
    const m = mergePoint(held, p(HOUR + 15_000), 'hour');
    expect(m).toEqual({ kind: 'append', points: [p(HOUR / 2), p(HOUR), p(HOUR + 15_000)] });
    expect(held).toHaveLength(3); // not mutated
  });

  it('ignores a sample that is not newer than the newest held', () => {
    expect(mergePoint([p(10)], p(10), 'hour')).toEqual({ kind: 'ignore' });
    expect(mergePoint([p(10)], p(5), 'day')).toEqual({ kind: 'ignore' });
  });

  it('asks the day and week windows to refetch once a bucket can have closed', () => {
    expect(mergePoint([p(0)], p(60_000), 'day')).toEqual({ kind: 'ignore' });
    expect(mergePoint([p(0)], p(300_000), 'day')).toEqual({ kind: 'refetch' });
    expect(mergePoint([p(0)], p(300_000), 'week')).toEqual({ kind: 'ignore' });
    expect(mergePoint([p(0)], p(1_800_000), 'week')).toEqual({ kind: 'refetch' });
    expect(mergePoint([], p(1), 'week')).toEqual({ kind: 'refetch' });
    // A server sampling every 2 s closes its day buckets every 40 s: the spacing held decides, not 5 min.
    const held = [p(0), p(40_000), p(80_000)];
    expect(mergePoint(held, p(100_000), 'day')).toEqual({ kind: 'ignore' });
    expect(mergePoint(held, p(120_000), 'day')).toEqual({ kind: 'refetch' });
  });
});

describe('chartNotice', () => {
  it('says metrics-server is missing when it never answered', () => {
    expect(chartNotice([], { stale: true, lastSample: null })).toEqual({
      text: 'metrics-server is not installed or not answering: no metrics.k8s.io',
      blocking: true,
    });
  });

  it('says "no samples yet" for an empty history while metrics-server answers', () => {
    expect(chartNotice([], { stale: false })).toEqual({ text: 'No samples yet', blocking: true });
    expect(chartNotice([], {})).toEqual({ text: 'No samples yet', blocking: true });
  });

  it('captions stale history without hiding it, and says since when', () => {
    expect(chartNotice([p(0)], { stale: true, lastSample: 0 }, 120_000)).toEqual({
      text: 'metrics-server is not answering: stale since 2 min ago',
      blocking: false,
    });
    expect(chartNotice([p(0), p(60_000)], { stale: true }, 120_000)?.text).toContain('since 1 min ago');
    // A VM without points of its own on a stale store: the store's newest sample says since when.
    expect(chartNotice([], { stale: true, lastSample: 60_000 }, 120_000)).toEqual({
      text: 'metrics-server is not answering: stale since 1 min ago',
      blocking: true,
    });
  });

  it('is silent with current samples', () => {
    expect(chartNotice([p(0), p(15_000)], { stale: false }, 30_000)).toBeNull();
  });

  it('captions a history whose newest sample is three rounds old (a stopped VM, an outage before the page opened)', () => {
    const held = [p(0), p(15_000), p(30_000)];
    expect(chartNotice(held, { stale: false }, 80_000)).toBeNull();
    expect(chartNotice(held, { stale: false }, 30_000 + 5 * 60_000)).toEqual({
      text: 'No new samples since 5 min ago',
      blocking: false,
    });
    // A day chart's 5-minute averages are not late after 3 minutes.
    const day = [p(0), p(300_000), p(600_000)];
    expect(chartNotice(day, {}, 600_000 + 3 * 60_000, 300_000)).toBeNull();
  });
});
