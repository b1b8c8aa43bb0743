'use client';
// hour / day / week, as PVE's timeframe selector: one pressed button, the charts below redraw from that window.
import type { HistoryWindow } from '@/server/schemas/metrics';

const LABELS: Record<HistoryWindow, string> = { hour: 'Hour', day: 'Day', week: 'Week' };

export function WindowSelector({
  value,
  onChange,
  testId = 'chart-window',
}: {
  value: HistoryWindow;
  onChange: (w: HistoryWindow) => void;
  testId?: string;
}) {
  return (
    <div className="segmented window-select" role="group" aria-label="Chart time window" data-testid={testId}>
      {(Object.keys(LABELS) as HistoryWindow[]).map((w) => (
        <button
          key={w}
          type="button"
          aria-pressed={value === w}
          title={`Show the last ${w}`}
          onClick={() => onChange(w)}
        >
          {LABELS[w]}
        </button>
      ))}
    </div>
  );
}
