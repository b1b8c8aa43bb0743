import { describe, expect, it } from 'vitest';
import {
  ABSENT,
  decode,
  encode,
  type Reading,
  SERIES_COUNT,
  SeriesBlock,
  TickClock,
  VALUES_PER_SERIES_BLOCK,
  WINDOW_SPECS,
  type WindowName,
} from './metrics-ring';

/** A block's points in one window, oldest first, as [t, cpu] pairs (cpu NaN where absent). */
function points(clock: TickClock, block: SeriesBlock, w: WindowName, s = 0): [number, number][] {
  const open = clock.openSlot(w);
  return clock.slots(w).map(({ slot, t }) => [t, block.value(w, slot, s, open)]);
}

function run(ticks: number, value: (i: number) => Reading | undefined): { clock: TickClock; block: SeriesBlock } {
  const clock = new TickClock();
  const block = new SeriesBlock();
  for (let i = 0; i < ticks; i++) block.write(clock.advance(i * 15_000), value(i));
  return { clock, block };
}

describe('16-bit value encoding', () => {
  it('keeps about three significant digits from fractions of a millicore to terabytes', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 5000; i++) {
      const v = 10 ** (rnd() * 17 - 2); // 0.01 … 1e15
      const back = decode(encode(v));
      expect(Math.abs(back - v) / v).toBeLessThanOrEqual(1 / 2048);
    }
    expect(decode(encode(1500))).toBe(1500);
    expect(decode(encode(4 * 2 ** 30))).toBe(4 * 2 ** 30);
  });

  it('has an exact zero and a distinct "not measured"', () => {
    expect(decode(encode(0))).toBe(0);
    expect(decode(encode(-5))).toBe(0);
    expect(encode(undefined)).toBe(ABSENT);
    expect(encode(Number.NaN)).toBe(ABSENT);
    expect(decode(ABSENT)).toBeNaN();
    // The largest values saturate instead of wrapping into ABSENT.
    expect(encode(1e30)).not.toBe(ABSENT);
    expect(decode(encode(1e30))).toBeGreaterThan(1e16);
  });

  it('orders codes like values (sorting by code sorts by value)', () => {
    const values = [0, 0.01, 0.5, 1, 2, 999, 1000, 1001, 1e6, 3e9];
    const codes = values.map(encode);
    expect([...codes].sort((a, b) => a - b)).toEqual(codes);
  });
});

describe('history rings', () => {
  it('writes every tick to the hour ring at full resolution', () => {
    const { clock, block } = run(5, (i) => ({ cpu: 100 + i, mem: 2 ** 30 }));
    expect(points(clock, block, 'hour')).toEqual([
      [0, 100],
      [15_000, 101],
      [30_000, 102],
      [45_000, 103],
      [60_000, 104],
    ]);
    expect(decode(block.code('hour', clock.newestSlot(), 1))).toBe(2 ** 30);
  });

  it('averages 20 ticks into a day point and 120 into a week point, the newest being the bucket so far', () => {
    const { clock, block } = run(130, (i) => ({ cpu: i }));
    const day = points(clock, block, 'day');
    expect(day).toHaveLength(7); // 6 full buckets and one started
    expect(day[0]).toEqual([0, 9.5]); // mean of 0…19, stamped with the bucket's first tick
    expect(day[1]).toEqual([20 * 15_000, 29.5]);
    expect(day[6]![1]).toBeCloseTo((120 + 129) / 2, 2); // the partial bucket: ticks 120…129
    const week = points(clock, block, 'week');
    expect(week).toHaveLength(2);
    expect(week[0]![1]).toBeCloseTo(59.5, 2);
    expect(week[1]![1]).toBeCloseTo(124.5, 2);
  });

  it('averages over the measured ticks only, and leaves a bucket without any measurement absent', () => {
    const { clock, block } = run(40, (i) => (i < 10 ? { cpu: 10 } : i >= 30 ? { cpu: 30 } : undefined));
    const day = points(clock, block, 'day');
    expect(day[0]![1]).toBe(10); // ticks 10…19 unmeasured: not counted as zeros
    expect(day[1]![1]).toBe(30);
    const hour = points(clock, block, 'hour');
    expect(hour[15]![1]).toBeNaN();
    // One series missing does not hide the others.
    const partial = run(3, () => ({ cpu: 5, netin: 100 }));
    expect(decode(partial.block.code('hour', partial.clock.newestSlot(), 1))).toBeNaN();
    expect(decode(partial.block.code('hour', partial.clock.newestSlot(), 2))).toBe(100);
  });

  it('wraps: the hour ring keeps the newest 240 points, oldest first', () => {
    const { clock, block } = run(250, (i) => ({ cpu: i }));
    const hour = points(clock, block, 'hour');
    expect(hour).toHaveLength(240);
    expect(hour[0]).toEqual([10 * 15_000, 10]);
    expect(hour[239]).toEqual([249 * 15_000, 249]);
    // A VM that stops measuring has its old values overwritten as the ring turns, not kept forever.
    for (let i = 250; i < 500; i++) block.write(clock.advance(i * 15_000), undefined);
    expect(points(clock, block, 'hour').every(([, v]) => Number.isNaN(v))).toBe(true);
  });

  it('holds a fixed number of points per window however long it runs', () => {
    const week = WINDOW_SPECS.week;
    const { clock, block } = run(week.slots * week.every + 500, (i) => ({ cpu: i % 1000 }));
    expect(clock.slots('hour')).toHaveLength(240);
    expect(clock.slots('day')).toHaveLength(288);
    expect(clock.slots('week')).toHaveLength(336);
    expect(block.values.length).toBe(VALUES_PER_SERIES_BLOCK);
    expect(VALUES_PER_SERIES_BLOCK).toBe((240 + 288 + 336) * SERIES_COUNT);
    expect(SeriesBlock.bytes()).toBeLessThanOrEqual(16 * 1024);
    // Points are time-ordered with the window's spacing.
    const times = clock.slots('week').map((p) => p.t);
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBe(week.every * 15_000);
  });

  it('sums blocks slot by slot, marking which slots had a value', () => {
    const clock = new TickClock();
    const a = new SeriesBlock();
    const b = new SeriesBlock();
    for (let i = 0; i < 3; i++) {
      const at = clock.advance(i);
      a.write(at, { cpu: 100, mem: 10 });
      b.write(at, i === 0 ? undefined : { cpu: 50 });
    }
    const size = WINDOW_SPECS.hour.slots * SERIES_COUNT;
    const sums = new Float64Array(size);
    const present = new Uint8Array(size);
    a.addInto('hour', sums, present, -1);
    b.addInto('hour', sums, present, -1);
    expect([sums[0], sums[SERIES_COUNT], sums[2 * SERIES_COUNT]]).toEqual([100, 150, 150]);
    expect(sums[1]).toBe(10);
    expect(present[2]).toBe(0); // netin never measured
    // A day bucket still filling is summed from the running averages.
    const day = new Float64Array(WINDOW_SPECS.day.slots * SERIES_COUNT);
    const dayPresent = new Uint8Array(day.length);
    expect(clock.openSlot('day')).toBe(0);
    a.addInto('day', day, dayPresent, clock.openSlot('day'));
    b.addInto('day', day, dayPresent, clock.openSlot('day'));
    expect([day[0], day[1], dayPresent[2]]).toEqual([150, 10, 0]);
  });
});
