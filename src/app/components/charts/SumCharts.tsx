'use client';
// Charts of summed usage: the fleet's (Datacenter) or one node's (Node page). One history query per chart window,
// never per-VM histories; new points come from the `metrics` events of the live stream.
import { useState } from 'react';
import type { HistoryWindow } from '@/server/schemas/metrics';
import { formatBytesShort, formatCpu } from '../../lib/metric-format';
import { MetricChartPanel } from './MetricChartPanel';
import { CPU, DISK, MEM, NET } from './series';
import { useSumHistory } from './use-metrics';
import { WindowSelector } from './WindowSelector';

interface Props {
  /** A node's name; the whole fleet when absent. */
  node?: string;
  /** The node's cluster when it is not the default one. */
  context?: string;
  /** Allocatable CPUs and memory bytes of the node (or of all ready nodes): drawn as reference lines. */
  capacity?: { cpus: number; memBytes: number | null };
  /** Network and disk charts as well as CPU and memory. */
  io?: boolean;
  title: string;
}

export function SumCharts({ node, context, capacity, io = false, title }: Props) {
  const [window, setWindow] = useState<HistoryWindow>('hour');
  const { points, loading, error, status } = useSumHistory(node, window, context);
  const common = { points, window, status, loading };
  const prefix = node === undefined ? 'fleet' : 'node';
  const cpuCap = capacity && capacity.cpus > 0 ? capacity.cpus * 1000 : undefined;
  const memCap = capacity?.memBytes ?? undefined;
  return (
    <section className="sum-charts" aria-label={title} data-testid={`${prefix}-charts`}>
      <div className="charts-head">
        <h2>{title}</h2>
        {error && <span className="result-err">{error}</span>}
        <WindowSelector value={window} onChange={setWindow} testId={`${prefix}-window`} />
      </div>
      <div className="charts-grid">
        <MetricChartPanel
          {...common}
          title="CPU usage"
          series={CPU}
          unit="cpu"
          testId={`${prefix}-chart-cpu`}
          reference={cpuCap ? { value: cpuCap, label: `${formatCpu(cpuCap)} allocatable` } : undefined}
          floor={1000}
        />
        <MetricChartPanel
          {...common}
          title="Memory usage"
          series={MEM}
          unit="bytes"
          testId={`${prefix}-chart-mem`}
          reference={memCap ? { value: memCap, label: `${formatBytesShort(memCap)} allocatable` } : undefined}
          floor={1024 ** 3}
        />
        {io && (
          <>
            <MetricChartPanel {...common} title="Network" series={NET} unit="rate" testId={`${prefix}-chart-net`} />
            <MetricChartPanel {...common} title="Disk I/O" series={DISK} unit="rate" testId={`${prefix}-chart-disk`} />
          </>
        )}
      </div>
    </section>
  );
}
