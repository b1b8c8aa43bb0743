// The arithmetic of the time-series charts, kept pure so it is unit-tested: which time ticks suit a window and a
// width, a "nice" value axis (binary steps for bytes), the SVG path of a series (one path, broken at gaps), and
// which sample the pointer is nearest to. The components only lay these out.
import type { HistoryWindow } from '@/server/schemas/metrics';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** How far back each window reaches. */
export const WINDOW_MS: Record<HistoryWindow, number> = { hour: HOUR, day: DAY, week: 7 * DAY };

/**
 * The spacing of the samples in each window at the default 15 s sampling interval (15 s raw, 5 min and 30 min
 * downsampled). A server may sample at another interval, so drawing goes by `typicalStep` of the data when it can.
 */
export const WINDOW_STEP_MS: Record<HistoryWindow, number> = { hour: 15_000, day: 5 * MIN, week: 30 * MIN };

/** Tick spacings to choose from, smallest first; every one divides a day or is a whole number of days. */
const TIME_STEPS = [
  MIN,
  2 * MIN,
  5 * MIN,
  10 * MIN,
  15 * MIN,
  30 * MIN,
  HOUR,
  2 * HOUR,
  3 * HOUR,
  6 * HOUR,
  12 * HOUR,
  DAY,
  2 * DAY,
  7 * DAY,
];

/** Milliseconds to add to an epoch time to get the wall-clock time of the viewer's zone (DST-aware). */
export type ZoneOffset = (t: number) => number;
export const localOffset: ZoneOffset = (t) => -new Date(t).getTimezoneOffset() * MIN;

export interface TimeTick {
  t: number;
  label: string;
}

/** Smallest spacing that keeps the labels at least `minPx` apart. */
export function timeStep(spanMs: number, widthPx: number, minPx = 72): number {
  const maxTicks = Math.max(1, Math.floor(widthPx / minPx));
  return TIME_STEPS.find((s) => spanMs / s <= maxTicks) ?? TIME_STEPS[TIME_STEPS.length - 1]!;
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number) => String(n).padStart(2, '0');

/** "14:30" for times of day; "Tue 3" at midnight (and for day-sized steps), so a day/week axis names its days. */
export function tickLabel(t: number, step: number, offset: ZoneOffset = localOffset): string {
  const wall = new Date(t + offset(t));
  const h = wall.getUTCHours();
  const m = wall.getUTCMinutes();
  if (step >= DAY || (h === 0 && m === 0)) return `${WEEKDAYS[wall.getUTCDay()]} ${wall.getUTCDate()}`;
  return `${pad(h)}:${pad(m)}`;
}

/** Ticks at round wall-clock times ("every 10 minutes", "every 4 hours", "every midnight") inside [from, to]. */
export function timeTicks(from: number, to: number, widthPx: number, offset: ZoneOffset = localOffset): TimeTick[] {
  if (!(to > from)) return [];
  const step = timeStep(to - from, widthPx);
  const ticks: TimeTick[] = [];
  // Align in wall-clock time (multi-day steps start at a midnight), then map each wall time back to epoch time.
  const off = offset(from);
  const align = step > DAY ? DAY : step;
  const toEpoch = (wall: number) => wall - offset(wall - off);
  for (let wall = Math.ceil((from + off) / align) * align; toEpoch(wall) <= to && ticks.length < 100; wall += step) {
    const t = toEpoch(wall);
    if (t >= from) ticks.push({ t, label: tickLabel(t, step, offset) });
  }
  return ticks;
}

/** Value axes: plain numbers in 1-2-5 steps, or bytes in 1-2-5 steps of a binary unit (256 MiB, 1 GiB…). */
export type AxisBase = 'decimal' | 'binary';

export interface ValueScale {
  max: number;
  ticks: number[];
}

function niceStep(raw: number): number {
  const exp = Math.floor(Math.log10(raw));
  const f = raw / 10 ** exp;
  const nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
  return nice * 10 ** exp;
}

/** Top of the axis at a round value ≥ `max` (and ≥ `floor`, so an idle chart is not all noise), with its ticks. */
export function valueScale(max: number, base: AxisBase = 'decimal', count = 4, floor = 0): ValueScale {
  const top = Math.max(max, floor) || 1;
  let unit = 1;
  if (base === 'binary') while (top / unit >= 1024) unit *= 1024;
  const step = niceStep(top / unit / count) * unit;
  const end = Math.ceil(top / step - 1e-9) * step;
  const ticks: number[] = [];
  for (let v = 0; v <= end + step / 2; v += step) ticks.push(v);
  return { max: end, ticks };
}

export interface Frame {
  /** Plot area in SVG pixels. */
  left: number;
  top: number;
  width: number;
  height: number;
  from: number;
  to: number;
  yMax: number;
}

export const xOf = (f: Frame, t: number) => f.left + ((t - f.from) / (f.to - f.from)) * f.width;
export const yOf = (f: Frame, v: number) => f.top + f.height - (Math.min(v, f.yMax) / f.yMax) * f.height;
const r1 = (n: number) => Math.round(n * 10) / 10;

/**
 * One SVG path for a series: a line through the samples, broken where a sample is missing or two samples lie more
 * than `gapMs` apart (the VM was off, metrics-server was down), so no line invents values. With `area`, each run is
 * closed down to the baseline for a filled area. Samples outside the frame's time range are skipped.
 */
export function seriesPath<P extends { t: number }>(
  points: readonly P[],
  value: (p: P) => number | undefined,
  frame: Frame,
  gapMs: number,
  area = false,
): string {
  const out: string[] = [];
  const base = r1(frame.top + frame.height);
  let run: string[] = [];
  let firstX = 0;
  let lastX = 0;
  let lastT = -Infinity;
  const close = () => {
    if (run.length > 0) {
      if (area) out.push(`M${firstX} ${base}L${run.join('L')}L${lastX} ${base}Z`);
      // A lone sample is a zero-length segment, which the round line cap draws as a dot.
      else out.push(run.length === 1 ? `M${run[0]}h0` : `M${run.join('L')}`);
    }
    run = [];
  };
  for (const p of points) {
    if (p.t < frame.from || p.t > frame.to) continue;
    const v = value(p);
    if (v === undefined || !Number.isFinite(v)) {
      close();
      continue;
    }
    if (p.t - lastT > gapMs) close();
    const x = r1(xOf(frame, p.t));
    if (run.length === 0) firstX = x;
    run.push(`${x} ${r1(yOf(frame, v))}`);
    lastX = x;
    lastT = p.t;
  }
  close();
  return out.join('');
}

/** A reference line up to this many times the data's peak is drawn to scale. */
export const REF_SPAN = 4;

/**
 * Whether a reference line (allocation, limit, capacity) joins the value scale: near the data it is drawn where it
 * belongs; far above (an idle VM's allocation, a fleet's capacity) it would squash the series flat, so it is not.
 */
export function referenceOnScale(reference: number, peak: number, floor = 0): boolean {
  return reference <= Math.max(peak, floor) * REF_SPAN;
}

/** The median spacing of the newest samples (up to 64 of them), or `fallback` with fewer than two. */
export function typicalStep(points: readonly { t: number }[], fallback: number): number {
  const gaps: number[] = [];
  for (let i = Math.max(1, points.length - 64); i < points.length; i++) gaps.push(points[i]!.t - points[i - 1]!.t);
  if (gaps.length === 0) return fallback;
  gaps.sort((a, b) => a - b);
  return gaps[gaps.length >> 1]!;
}

/** Index of the sample closest in time to `t` (points sorted by t), or -1 for no points. */
export function nearestIndex(points: readonly { t: number }[], t: number): number {
  if (points.length === 0) return -1;
  let lo = 0;
  let hi = points.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.t < t) lo = mid + 1;
    else hi = mid;
  }
  if (lo > 0 && t - points[lo - 1]!.t <= points[lo]!.t - t) return lo - 1;
  return lo;
}
