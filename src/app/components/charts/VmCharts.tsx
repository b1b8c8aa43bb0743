'use client';
// The VM Summary tab's charts (PVE's layout): CPU against the vCPU allocation, memory against the guest's size,
// network in/out and disk read/write, over the chosen window; new samples arrive over `metrics.follow`.
import { useState } from 'react';
import type { HistoryWindow } from '@/server/schemas/metrics';
import { formatCpu } from '../../lib/metric-format';
import type { VmRow } from '../../lib/model';
import { formatBytes, parseQuantity } from '../../lib/quantity';
import { MetricChartPanel } from './MetricChartPanel';
import { CPU, DISK, MEM, NET } from './series';
import { useVmHistory } from './use-metrics';
import { WindowSelector } from './WindowSelector';

export function VmCharts({ vm }: { vm: VmRow }) {
  const [window, setWindow] = useState<HistoryWindow>('hour');
  const { points, loading, error, status } = useVmHistory(vm.namespace, vm.name, window, vm.context);
  const cpuLimit = vm.cpu > 0 ? vm.cpu * 1000 : undefined;
  const memLimit = vm.mem ? (parseQuantity(vm.mem) ?? undefined) : undefined;
  const common = { points, window, status, loading };
  return (
    <section className="vm-charts" aria-label="Usage charts" data-testid="vm-charts">
      <div className="charts-head">
        <h2>Usage</h2>
        {error && <span className="result-err">{error}</span>}
        <WindowSelector value={window} onChange={setWindow} />
      </div>
      <div className="charts-grid">
        <MetricChartPanel
          {...common}
          title="CPU usage"
          series={CPU}
          unit="cpu"
          testId="chart-cpu"
          reference={cpuLimit ? { value: cpuLimit, label: `${formatCpu(cpuLimit)} allocated` } : undefined}
          floor={100}
        />
        <MetricChartPanel
          {...common}
          title="Memory usage"
          series={MEM}
          unit="bytes"
          testId="chart-mem"
          reference={memLimit ? { value: memLimit, label: `${formatBytes(memLimit)} limit` } : undefined}
          floor={64 * 1024 ** 2}
        />
        <MetricChartPanel {...common} title="Network" series={NET} unit="rate" testId="chart-net" floor={1024} />
        <MetricChartPanel {...common} title="Disk I/O" series={DISK} unit="rate" testId="chart-disk" floor={1024} />
      </div>
    </section>
  );
}
