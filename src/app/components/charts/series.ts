// The series each chart draws, shared by the VM, node and datacenter pages.
import type { ChartSeries } from './TimeChart';

export const CPU: ChartSeries[] = [{ label: 'CPU', value: (p) => p.cpu }];
export const MEM: ChartSeries[] = [{ label: 'Memory', value: (p) => p.mem }];
export const NET: ChartSeries[] = [
  { label: 'In', value: (p) => p.netin },
  { label: 'Out', value: (p) => p.netout },
];
export const DISK: ChartSeries[] = [
  { label: 'Read', value: (p) => p.diskread },
  { label: 'Write', value: (p) => p.diskwrite },
];
