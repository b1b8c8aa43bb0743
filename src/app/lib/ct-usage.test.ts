import { describe, expect, it } from 'vitest';
import { ctDiskUsage } from './ct-usage';

const GiB = 1024 ** 3;

describe('ctDiskUsage', () => {
  it('says used of total with a percentage when measured', () => {
    expect(ctDiskUsage({ phase: 'Running', diskUsage: { usedBytes: 2 * GiB, totalBytes: 8 * GiB } })).toEqual({
      text: '2 GiB of 8 GiB used (25%)',
      percent: 25,
    });
  });

  it('shows a tiny but non-zero usage as <1%, never as 0%', () => {
    const v = ctDiskUsage({ phase: 'Running', diskUsage: { usedBytes: 4096, totalBytes: 8 * GiB } });
    expect(v.text).toBe('4 KiB of 8 GiB used (<1%)');
    expect(v.percent).toBeGreaterThan(0);
  });

  it('says unknown and why when there is no reading', () => {
    expect(ctDiskUsage({ phase: 'Stopped', diskUsage: null })).toEqual({
      text: 'unknown — measured only while the CT runs',
      percent: null,
    });
    expect(ctDiskUsage({ phase: 'Running', diskUsage: null }).text).toBe(
      'unknown — the kubelet has not reported it yet',
    );
    expect(ctDiskUsage({ phase: 'Running', diskUsage: { usedBytes: 1, totalBytes: 0 } }).percent).toBeNull();
  });
});
