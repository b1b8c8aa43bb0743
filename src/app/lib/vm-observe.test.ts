import { describe, expect, it } from 'vitest';
import type { VmEvent } from '@/server/schemas/vm-observe';
import { EVENT_ROWS, formatOffset, mergeEvent, relativeTime, usageLevel, usagePercent } from './vm-observe';

const ev = (id: string, time: string, extra: Partial<VmEvent> = {}): VmEvent => ({
  id,
  type: 'Normal',
  reason: 'Started',
  message: 'm',
  count: 1,
  object: { kind: 'VirtualMachineInstance', name: 'web' },
  time,
  ...extra,
});

describe('mergeEvent', () => {
  const list = [ev('b', '2026-12-01T10:00:05Z'), ev('a', '2026-12-01T10:00:00Z')];

  it('adds a new event at its place, newest first', () => {
    expect(mergeEvent(list, ev('c', '2026-12-01T10:00:09Z')).map((e) => e.id)).toEqual(['c', 'b', 'a']);
    expect(mergeEvent(list, ev('d', '2026-12-01T10:00:02Z')).map((e) => e.id)).toEqual(['b', 'd', 'a']);
  });

  it('replaces a repeat (same id, higher count) and moves it up', () => {
    const merged = mergeEvent(list, ev('a', '2026-12-01T10:01:00Z', { count: 4 }));
    expect(merged.map((e) => [e.id, e.count])).toEqual([
      ['a', 4],
      ['b', 1],
    ]);
  });

  it('leaves out an event of another type than the filter', () => {
    expect(mergeEvent(list, ev('w', '2026-12-01T10:02:00Z', { type: 'Warning' }), 'Normal')).toHaveLength(2);
    expect(mergeEvent(list, ev('w', '2026-12-01T10:02:00Z', { type: 'Warning' }), 'Warning')).toHaveLength(3);
  });

  it('stays bounded', () => {
    const full = Array.from({ length: EVENT_ROWS }, (_, i) => ev(`e${i}`, new Date(1e12 + i * 1000).toISOString()));
    const merged = mergeEvent(full, ev('new', new Date(2e12).toISOString()));
    expect(merged).toHaveLength(EVENT_ROWS);
    expect(merged[0]!.id).toBe('new');
  });
});

describe('relativeTime', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  it.each([
    ['2026-12-01T12:00:03Z', 'just now'],
    ['2026-12-01T11:59:18Z', '42 s ago'],
    ['2026-12-01T11:55:00Z', '5 min ago'],
    ['2026-12-01T09:00:00Z', '3 h ago'],
    ['2026-11-28T12:00:00Z', '3 days ago'],
    ['garbage', '—'],
  ])('%s → %s', (iso, text) => expect(relativeTime(iso, now)).toBe(text));
});

describe('filesystem usage', () => {
  it('percent and level', () => {
    expect(usagePercent({ usedBytes: 1, totalBytes: 4 })).toBe(25);
    expect(usagePercent({ usedBytes: 5, totalBytes: 0 })).toBe(0);
    expect(usagePercent({ usedBytes: 9, totalBytes: 4 })).toBe(100);
    expect([usageLevel(10), usageLevel(80), usageLevel(95)]).toEqual(['ok', 'warn', 'full']);
  });
  it('timezone offsets', () => {
    expect([formatOffset(0), formatOffset(3600), formatOffset(-16200)]).toEqual([
      'UTC+00:00',
      'UTC+01:00',
      'UTC-04:30',
    ]);
  });
});
