import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, formatQuantity, parseQuantity } from './quantity';

describe('parseQuantity', () => {
  it('reads decimal and binary suffixes like Kubernetes', () => {
    expect(parseQuantity('4Gi')).toBe(4 * 1024 ** 3);
    expect(parseQuantity('4G')).toBe(4e9);
    expect(parseQuantity('512Mi')).toBe(512 * 1024 ** 2);
    expect(parseQuantity('1.5Gi')).toBe(1.5 * 1024 ** 3);
    expect(parseQuantity('1024')).toBe(1024);
    expect(parseQuantity(' 20Gi ')).toBe(20 * 1024 ** 3);
  });

  it('rejects what is not a size', () => {
    for (const bad of ['', 'Gi', '4 GB', '-1Gi', '4gi', 'lots', '4Gi2']) expect(parseQuantity(bad)).toBeNull();
  });
});

describe('formatting', () => {
  it('formats bytes with binary units', () => {
    expect(formatBytes(4 * 1024 ** 3)).toBe('4 GiB');
    expect(formatBytes(1536 * 1024 ** 2)).toBe('1.5 GiB');
    expect(formatBytes(100)).toBe('100 B');
    expect(formatQuantity('4Gi')).toBe('4 GiB');
    expect(formatQuantity('weird')).toBe('weird');
    expect(formatQuantity('')).toBe('');
  });

  it('formats durations for the tasks panel', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_340)).toBe('12.3 s');
    expect(formatDuration(245_000)).toBe('4 min 05 s');
    expect(formatDuration(7_380_000)).toBe('2 h 03 min');
    expect(formatDuration(-1)).toBe('—');
  });
});
