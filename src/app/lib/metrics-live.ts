// How a chart's history takes a pushed sample, and what a chart says instead of drawing. Pure, unit-tested.
import type { HistoryPoint, HistoryWindow } from '@/server/schemas/metrics';
import { typicalStep, WINDOW_MS, WINDOW_STEP_MS } from './chart-scale';
import { formatAgo } from './metric-format';

export type Merge = { kind: 'append'; points: HistoryPoint[] } | { kind: 'refetch' } | { kind: 'ignore' };

/**
 * The hour window holds raw samples, so a pushed sample is appended (and samples older than an hour dropped). The
 * day and week windows hold averages over 5/30 minutes (at the default interval) that only the store computes: a
 * pushed sample there means "refetch" once a new bucket can have closed since the newest point held (judged by the
 * spacing of the points held), and nothing otherwise.
 */
export function mergePoint(points: readonly HistoryPoint[], point: HistoryPoint, window: HistoryWindow): Merge {
  const last = points[points.length - 1];
  if (last && point.t <= last.t) return { kind: 'ignore' };
  if (window !== 'hour') {
    const step = typicalStep(points, WINDOW_STEP_MS[window]);
    return !last || point.t - last.t >= step ? { kind: 'refetch' } : { kind: 'ignore' };
  }
  const from = point.t - WINDOW_MS.hour;
  let start = 0;
  while (start < points.length && points[start]!.t < from) start++;
  return { kind: 'append', points: [...points.slice(start), point] };
}

export interface MetricsStatus {
  /** metrics-server is not answering (or never answered): what is held, if anything, is not current. */
  stale?: boolean;
  /** Newest sample time the store holds, for "stale since". */
  lastSample?: number | null;
}

/**
 * The sentence a chart shows instead of (or above) its drawing: none when there is something current to draw.
 * `blocking` says whether the drawing is replaced (nothing to draw) or only captioned (stale history is still shown).
 */
export function chartNotice(
  points: readonly HistoryPoint[],
  status: MetricsStatus,
  now: number = Date.now(),
  step: number = typicalStep(points, WINDOW_STEP_MS.hour),
): { text: string; blocking: boolean } | null {
  if (status.stale) {
    const since = status.lastSample ?? points[points.length - 1]?.t;
    if (since == null) {
      return { text: 'metrics-server is not installed or not answering: no metrics.k8s.io', blocking: true };
    }
    return {
      text: `metrics-server is not answering: stale since ${formatAgo(since, now)}`,
      blocking: points.length === 0,
    };
  }
  if (points.length === 0) return { text: 'No samples yet', blocking: true };
  // Three missed rounds: the VM stopped, or metrics-server went away before this page opened (the store says
  // "stale" once, when it happens, so a page opened later learns it from the data).
  const last = points[points.length - 1]!.t;
  if (now - last > Math.max(3 * step, 60_000)) {
    return { text: `No new samples since ${formatAgo(last, now)}`, blocking: false };
  }
  return null;
}
