import { describe, expect, it } from 'vitest';
import {
  nearestIndex,
  referenceOnScale,
  seriesPath,
  tickLabel,
  timeStep,
  timeTicks,
  typicalStep,
  valueScale,
  WINDOW_MS,
  type Frame,
  type ZoneOffset,
} from './chart-scale';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const utc: ZoneOffset = () => 0;
const plus2: ZoneOffset = () => 2 * HOUR;
// Tuesday 2026-12-01 14:07:30 UTC.
const NOW = Date.UTC(2026, 11, 1, 14, 7, 30);

describe('time ticks', () => {
  it('picks a step per window that keeps labels apart at desktop and phone width', () => {
    expect(timeStep(WINDOW_MS.hour, 600)).toBe(10 * MIN);
    expect(timeStep(WINDOW_MS.day, 600)).toBe(3 * HOUR);
    expect(timeStep(WINDOW_MS.week, 600)).toBe(DAY);
    expect(timeStep(WINDOW_MS.hour, 300)).toBe(15 * MIN);
    expect(timeStep(WINDOW_MS.day, 300)).toBe(6 * HOUR);
    expect(timeStep(WINDOW_MS.week, 300)).toBe(2 * DAY);
  });

  it('the hour window ticks at round minutes inside the range, labelled HH:MM', () => {
    const ticks = timeTicks(NOW - WINDOW_MS.hour, NOW, 600, utc);
    expect(ticks.map((t) => t.label)).toEqual(['13:10', '13:20', '13:30', '13:40', '13:50', '14:00']);
    for (const t of ticks) expect(t.t % (10 * MIN)).toBe(0);
  });

  it('the day window names the day at midnight', () => {
    const ticks = timeTicks(NOW - WINDOW_MS.day, NOW, 600, utc);
    expect(ticks.map((t) => t.label)).toEqual(['15:00', '18:00', '21:00', 'Tue 1', '03:00', '06:00', '09:00', '12:00']);
  });

  it('the week window ticks at midnights, labelled with weekday and date', () => {
    const ticks = timeTicks(NOW - WINDOW_MS.week, NOW, 600, utc);
    expect(ticks.map((t) => t.label)).toEqual(['Wed 25', 'Thu 26', 'Fri 27', 'Sat 28', 'Sun 29', 'Mon 30', 'Tue 1']);
    expect(ticks.every((t) => t.t % DAY === 0)).toBe(true);
  });

  it('aligns to the viewer’s wall clock, not UTC', () => {
    const ticks = timeTicks(NOW - WINDOW_MS.week, NOW, 600, plus2);
    // Local midnight at UTC+2 is 22:00 UTC the day before.
    expect(ticks.every((t) => (t.t + 2 * HOUR) % DAY === 0)).toBe(true);
    expect(tickLabel(Date.UTC(2026, 11, 1, 22, 0), HOUR, plus2)).toBe('Wed 2');
    expect(tickLabel(Date.UTC(2026, 11, 1, 22, 30), HOUR, plus2)).toBe('00:30');
  });

  it('answers nothing for an empty range', () => {
    expect(timeTicks(NOW, NOW, 600, utc)).toEqual([]);
  });
});

describe('value scale', () => {
  it('rounds the top up to a 1-2-5 step', () => {
    expect(valueScale(870)).toEqual({ max: 1000, ticks: [0, 250, 500, 750, 1000] });
    expect(valueScale(1900)).toEqual({ max: 2000, ticks: [0, 500, 1000, 1500, 2000] });
    expect(valueScale(3.2, 'decimal', 4).max).toBe(4);
  });

  it('uses binary steps for bytes', () => {
    const GiB = 1024 ** 3;
    const s = valueScale(1.7 * GiB, 'binary');
    expect(s.max).toBe(2 * GiB);
    expect(s.ticks).toEqual([0, 0.5, 1, 1.5, 2].map((g) => g * GiB));
    expect(valueScale(300 * 1024 ** 2, 'binary').ticks[1]).toBe(100 * 1024 ** 2);
  });

  it('keeps a floor so an idle series is not scaled up to fill the chart', () => {
    expect(valueScale(3, 'decimal', 4, 1000).max).toBe(1000);
    expect(valueScale(0).max).toBeGreaterThan(0);
  });
});

describe('series path', () => {
  const frame: Frame = { left: 0, top: 0, width: 100, height: 50, from: 0, to: 100, yMax: 10 };
  const pts = [
    { t: 0, v: 0 },
    { t: 10, v: 5 },
    { t: 20, v: 10 },
    { t: 60, v: 5 },
    { t: 70, v: undefined },
    { t: 80, v: 20 },
  ];

  it('draws one line, broken at gaps in time and at missing values, clamped at the top', () => {
    expect(seriesPath(pts, (p) => p.v, frame, 15)).toBe('M0 50L10 25L20 0M60 25h0M80 0h0');
  });

  it('closes each run to the baseline for an area', () => {
    expect(seriesPath(pts.slice(0, 3), (p) => p.v, frame, 15, true)).toBe('M0 50L0 50L10 25L20 0L20 50Z');
  });

  it('skips samples outside the frame and draws nothing for no samples', () => {
    expect(
      seriesPath(
        [
          { t: -5, v: 1 },
          { t: 200, v: 1 },
        ],
        (p) => p.v,
        frame,
        1000,
      ),
    ).toBe('');
    expect(seriesPath([], () => 1, frame, 1000)).toBe('');
  });
});

describe('nearestIndex', () => {
  const pts = [{ t: 0 }, { t: 10 }, { t: 20 }];
  it('finds the closest sample, earlier on a tie', () => {
    expect(nearestIndex(pts, -3)).toBe(0);
    expect(nearestIndex(pts, 4)).toBe(0);
    expect(nearestIndex(pts, 5)).toBe(0);
    expect(nearestIndex(pts, 6)).toBe(1);
    expect(nearestIndex(pts, 99)).toBe(2);
    expect(nearestIndex([], 1)).toBe(-1);
  });
});

describe('typicalStep', () => {
  it('is the median spacing, robust to one gap', () => {
    expect(typicalStep([{ t: 0 }, { t: 15 }, { t: 30 }, { t: 600 }, { t: 615 }], 99)).toBe(15);
    expect(typicalStep([{ t: 0 }], 99)).toBe(99);
  });
});

describe('referenceOnScale', () => {
  it('keeps a limit near the data on the scale and leaves a far one off it', () => {
    expect(referenceOnScale(512, 600)).toBe(true); // memory above its guest size
    expect(referenceOnScale(1000, 300)).toBe(true); // a VM using 30 % of its vCPU
    expect(referenceOnScale(64_000, 1_400)).toBe(false); // a fleet using 2 % of its cores
    expect(referenceOnScale(1000, 10, 100)).toBe(false); // idle: the floor, not the noise, decides
    expect(referenceOnScale(1000, 10, 300)).toBe(true);
  });
});
