// A CT's data volume usage in words for the Summary: used of total with a percentage when the kubelet measured it,
// and "unknown" with the reason when it did not (a stopped CT has no mounted volume to measure).
import type { CtRow } from './model';
import { formatBytes } from './quantity';

export interface DiskUsageView {
  text: string;
  /** 0–100, or null when unknown. */
  percent: number | null;
}

export function ctDiskUsage(ct: Pick<CtRow, 'diskUsage' | 'phase'>): DiskUsageView {
  const u = ct.diskUsage;
  if (!u || u.totalBytes <= 0) {
    return {
      text:
        ct.phase === 'Running'
          ? 'unknown — the kubelet has not reported it yet'
          : 'unknown — measured only while the CT runs',
      percent: null,
    };
  }
  const percent = Math.min(100, Math.max(0, (u.usedBytes / u.totalBytes) * 100));
  const shown = percent > 0 && percent < 1 ? '<1' : String(Math.round(percent));
  return { text: `${formatBytes(u.usedBytes)} of ${formatBytes(u.totalBytes)} used (${shown}%)`, percent };
}
