'use client';
// A chart in a panel: the title, a legend with each series' newest value, and either the drawing or the sentence
// that explains why there is none (no metrics-server, no samples yet); stale history is drawn under a caption.
import { useId } from 'react';
import type { HistoryPoint } from '@/server/schemas/metrics';
import { typicalStep, WINDOW_MS, WINDOW_STEP_MS } from '../../lib/chart-scale';
import { formatMetric } from '../../lib/metric-format';
import { chartNotice, type MetricsStatus } from '../../lib/metrics-live';
import { BlockedBy, useBlocker } from '../health/BlockedBy';
import { TimeChart, type TimeChartProps } from './TimeChart';

interface Props extends Omit<TimeChartProps, 'title'> {
  title: string;
  status: MetricsStatus;
  /** True while the first answer is on its way (draws an empty frame rather than "No samples yet"). */
  loading?: boolean;
}

export function MetricChartPanel({ title, status, loading, ...chart }: Props) {
  const headId = useId();
  // metrics-server missing (the doctor's metrics-server row): the empty chart names the row and links to it.
  const metricsBlocker = useBlocker('metrics');
  const { points, series, unit, window, testId } = chart;
  // A cluster may measure CPU and memory but not network or disk (no kubelet stats): say so instead of an empty frame.
  const measured = points.some((p) => series.some((s) => s.value(p) !== undefined));
  const notice = loading
    ? null
    : (chartNotice(points, status, Date.now(), typicalStep(points, WINDOW_STEP_MS[window])) ??
      (measured ? null : { text: 'Not measured on this cluster (no kubelet stats for it)', blocking: true }));
  const newest: HistoryPoint | undefined = points[points.length - 1];
  const recent = newest && newest.t >= Date.now() - WINDOW_MS[window] ? newest : undefined;
  const height = chart.height ?? 160;
  return (
    <section className="panel chart-panel" aria-labelledby={headId}>
      <div className="panel-head">
        <h2 id={headId}>{title}</h2>
        <div className="chart-legend">
          {series.map((s, i) => {
            const v = recent ? s.value(recent) : undefined;
            return (
              <span key={s.label}>
                <span className={`chart-swatch chart-s${i}`} /> {s.label}{' '}
                <b>{v === undefined ? '—' : formatMetric(v, unit)}</b>
              </span>
            );
          })}
        </div>
      </div>
      <div className="panel-body">
        {notice && !notice.blocking && (
          <p className="chart-caption" role="status">
            {notice.text}
          </p>
        )}
        {notice?.blocking ? (
          <div className="chart-notice" style={{ height }} data-testid={testId ? `${testId}-empty` : undefined}>
            {metricsBlocker && status.stale ? <BlockedBy blocker={metricsBlocker} what="Usage charts" /> : notice.text}
          </div>
        ) : (
          <TimeChart title={title} {...chart} />
        )}
      </div>
    </section>
  );
}
