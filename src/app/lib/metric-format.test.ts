import { describe, expect, it } from 'vitest';
import { formatAgo, formatBytesShort, formatCpu, formatMetric, formatRate } from './metric-format';

describe('metric formatting', () => {
  it('CPU in millicores below a core, cores above', () => {
    expect(formatCpu(250)).toBe('250 m');
    expect(formatCpu(250, true)).toBe('250 millicores');
    expect(formatCpu(2.5, true)).toBe('2.5 millicores');
    expect(formatCpu(999.6)).toBe('1000 m');
    expect(formatCpu(1000)).toBe('1 core');
    expect(formatCpu(1500)).toBe('1.5 cores');
    expect(formatCpu(12_345)).toBe('12.3 cores');
    expect(formatCpu(0)).toBe('0');
  });

  it('bytes and rates in binary units with three significant digits', () => {
    expect(formatBytesShort(0)).toBe('0 B');
    expect(formatBytesShort(512 * 1024 ** 2)).toBe('512 MiB');
    expect(formatBytesShort(1.5 * 1024 ** 3)).toBe('1.5 GiB');
    expect(formatBytesShort(1023)).toBe('1023 B');
    expect(formatRate(12.34 * 1024)).toBe('12.3 KiB/s');
    expect(formatMetric(2048, 'rate')).toBe('2 KiB/s');
    expect(formatMetric(2048, 'bytes')).toBe('2 KiB');
    expect(formatMetric(2000, 'cpu')).toBe('2 cores');
  });

  it('relative ages', () => {
    expect(formatAgo(0, 12_000)).toBe('12 s ago');
    expect(formatAgo(0, 4 * 60_000)).toBe('4 min ago');
    expect(formatAgo(0, 3 * 3_600_000)).toBe('3 h ago');
    expect(formatAgo(0, 3 * 86_400_000)).toBe('3 days ago');
  });
});
