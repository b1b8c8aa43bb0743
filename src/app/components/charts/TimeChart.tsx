'use client';
// A time-series chart drawn as SVG: one path per series (no element per sample, so a week of 30-minute points or
// an hour of 15-second ones costs the same few nodes), a time axis whose ticks suit the window, a value axis in
// the metric's unit, an optional dashed reference line (CPU allocation, memory limit), and a crosshair with the
// values under the pointer or the arrow keys. Colours are the theme's CSS variables (charts.css).
import { useEffect, useId, useMemo, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import type { HistoryPoint, HistoryWindow } from '@/server/schemas/metrics';
import {
  nearestIndex,
  referenceOnScale,
  seriesPath,
  timeTicks,
  typicalStep,
  valueScale,
  WINDOW_MS,
  WINDOW_STEP_MS,
  xOf,
  yOf,
  type Frame,
} from '../../lib/chart-scale';
import { formatMetric, formatSampleTime, type MetricUnit } from '../../lib/metric-format';
import './charts.css';

export interface ChartSeries {
  label: string;
  value: (p: HistoryPoint) => number | undefined;
}

export interface TimeChartProps {
  /** Names the chart for screen readers and the tooltip ("CPU usage"). */
  title: string;
  points: readonly HistoryPoint[];
  /** One or two series; the first is filled, the second drawn as a line over it. */
  series: readonly ChartSeries[];
  unit: MetricUnit;
  window: HistoryWindow;
  /** A dashed line at a fixed value, e.g. the vCPU allocation or the memory limit. */
  reference?: { value: number; label: string };
  /** The smallest top the value axis may have (so an idle VM's noise is not blown up to full height). */
  floor?: number;
  height?: number;
  testId?: string;
}

const M = { left: 64, right: 12, top: 10, bottom: 22 };

function useWidth(ref: React.RefObject<HTMLDivElement | null>): number {
  const [width, setWidth] = useState(0);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    setWidth(el.clientWidth);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth));
    ro.observe(el);
    return () => ro.disconnect();
  }, [ref]);
  return width;
}

export function TimeChart({
  title,
  points,
  series,
  unit,
  window,
  reference,
  floor = 0,
  height = 160,
  testId,
}: TimeChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const width = useWidth(box);
  const [hover, setHover] = useState<number | null>(null);
  const liveId = useId();

  // The right edge is "now" as of the newest data, so the axis slides with each pushed sample.
  const to = useMemo(() => Math.max(Date.now(), points[points.length - 1]?.t ?? 0), [points]);
  const from = to - WINDOW_MS[window];

  const peak = useMemo(() => {
    let max = 0;
    for (const p of points) {
      if (p.t < from) continue;
      for (const s of series) max = Math.max(max, s.value(p) ?? 0);
    }
    return max;
  }, [points, series, from]);
  // The reference line joins the scale when it is near the data; far above it (an idle VM's allocation, a fleet's
  // capacity) it would squash the series flat, so it is only named at the top edge.
  const refOnScale = reference !== undefined && referenceOnScale(reference.value, peak, floor);
  const scale = valueScale(
    Math.max(peak, refOnScale ? reference.value : 0),
    unit === 'cpu' ? 'decimal' : 'binary',
    4,
    floor,
  );
  const frame: Frame = {
    left: M.left,
    top: M.top,
    width: Math.max(10, width - M.left - M.right),
    height: height - M.top - M.bottom,
    from,
    to,
    yMax: scale.max,
  };
  // The drawing depends on the data and the size only, so moving the crosshair re-renders without rebuilding it.
  const { left, top, width: plotW, height: plotH, yMax } = frame;
  const { paths, ticks, visible } = useMemo(() => {
    const f: Frame = { left, top, width: plotW, height: plotH, from, to, yMax };
    // Two missed samples make a gap: the VM was off or metrics-server did not answer.
    const gap = typicalStep(points, WINDOW_STEP_MS[window]) * 2.5;
    return {
      paths: series.map((s, i) => ({
        line: seriesPath(points, s.value, f, gap),
        area: i === 0 ? seriesPath(points, s.value, f, gap, true) : '',
      })),
      ticks: timeTicks(from, to, plotW),
      visible: points.filter((p) => p.t >= from),
    };
  }, [points, series, window, left, top, plotW, plotH, from, to, yMax]);
  const last = visible[visible.length - 1];

  const hovered = hover !== null ? visible[hover] : undefined;
  const describe = (p: HistoryPoint) =>
    series.map((s) => `${s.label} ${fmt(s.value(p), unit)}`).join(', ') + ` at ${formatSampleTime(p.t)}`;
  const summary = last
    ? `${title}, last ${window}: ${describe(last)}; peak ${formatMetric(peak, unit, true)}.`
    : `${title}, last ${window}: no samples.`;

  const onPointer = (e: PointerEvent<SVGRectElement>) => {
    const rect = e.currentTarget.getBoundingClientRect();
    const t = from + ((e.clientX - rect.left) / rect.width) * (to - from);
    const i = nearestIndex(visible, t);
    setHover(i < 0 ? null : i);
  };
  const onKey = (e: KeyboardEvent<HTMLDivElement>) => {
    if (visible.length === 0) return;
    const at = hover ?? visible.length;
    const next: Record<string, number> = {
      ArrowLeft: Math.max(0, at - 1),
      ArrowRight: Math.min(visible.length - 1, hover === null ? visible.length - 1 : at + 1),
      Home: 0,
      End: visible.length - 1,
    };
    if (e.key === 'Escape') setHover(null);
    else if (e.key in next) setHover(next[e.key]!);
    else return;
    e.preventDefault();
  };

  const hx = hovered ? xOf(frame, hovered.t) : 0;
  return (
    <div className="chart" ref={box} style={{ height }}>
      <div
        className="chart-focus"
        role="img"
        aria-roledescription="chart"
        aria-label={`${summary} Arrow keys read single samples.`}
        tabIndex={0}
        onKeyDown={onKey}
        onBlur={() => setHover(null)}
        data-testid={testId}
        data-window={window}
        data-points={visible.length}
        data-last-t={last?.t ?? ''}
        data-tick-step={ticks.length > 1 ? ticks[1]!.t - ticks[0]!.t : ''}
      >
        {width > 0 && (
          <svg width={width} height={height} className="chart-svg" aria-hidden="true">
            <g className="chart-grid">
              {scale.ticks.map((v) => (
                <g key={v}>
                  <line x1={frame.left} x2={frame.left + frame.width} y1={yOf(frame, v)} y2={yOf(frame, v)} />
                  <text x={frame.left - 6} y={yOf(frame, v)} dy="0.32em" textAnchor="end">
                    {formatMetric(v, unit)}
                  </text>
                </g>
              ))}
            </g>
            <g className="chart-axis" data-axis="x">
              {ticks.map((tk) => (
                <text key={tk.t} x={xOf(frame, tk.t)} y={height - 6} textAnchor="middle">
                  {tk.label}
                </text>
              ))}
            </g>
            {paths.map((p, i) => (
              <g key={series[i]!.label} className={`chart-series chart-s${i}`} data-series={series[i]!.label}>
                {p.area && <path className="chart-area" d={p.area} />}
                <path className="chart-line" d={p.line} />
              </g>
            ))}
            {reference && !refOnScale && (
              <g className="chart-ref" data-off-scale="true">
                <text x={frame.left + frame.width - 4} y={frame.top + 10} textAnchor="end">
                  ▲ {reference.label}
                </text>
              </g>
            )}
            {reference && refOnScale && (
              <g className="chart-ref">
                <line
                  x1={frame.left}
                  x2={frame.left + frame.width}
                  y1={yOf(frame, reference.value)}
                  y2={yOf(frame, reference.value)}
                />
                <text x={frame.left + frame.width - 4} y={yOf(frame, reference.value) - 4} textAnchor="end">
                  {reference.label}
                </text>
              </g>
            )}
            {hovered && (
              <g className="chart-cross">
                <line x1={hx} x2={hx} y1={frame.top} y2={frame.top + frame.height} />
                {series.map((s, i) => {
                  const v = s.value(hovered);
                  return v === undefined ? null : (
                    <circle key={s.label} className={`chart-s${i}`} cx={hx} cy={yOf(frame, v)} r={3.5} />
                  );
                })}
              </g>
            )}
            <rect
              className="chart-hit"
              x={frame.left}
              y={frame.top}
              width={frame.width}
              height={frame.height}
              onPointerMove={onPointer}
              onPointerDown={onPointer}
              onPointerLeave={() => setHover(null)}
            />
          </svg>
        )}
        {hovered && (
          <div
            className="chart-tip"
            data-testid={testId ? `${testId}-tip` : undefined}
            style={hx > width / 2 ? { right: width - hx + 8 } : { left: hx + 8 }}
          >
            <div className="chart-tip-time">{formatSampleTime(hovered.t)}</div>
            {series.map((s, i) => (
              <div key={s.label}>
                <span className={`chart-swatch chart-s${i}`} /> {s.label}: <b>{fmt(s.value(hovered), unit, true)}</b>
              </div>
            ))}
          </div>
        )}
      </div>
      <span id={liveId} className="visually-hidden" aria-live="polite">
        {hovered ? describe(hovered) : ''}
      </span>
    </div>
  );
}

function fmt(v: number | undefined, unit: MetricUnit, long = false): string {
  return v === undefined ? 'not measured' : formatMetric(v, unit, long);
}
