import { describe, expect, it } from 'vitest';
import { cronProblem, lastRunBetween, nextRun, parseCron } from './cron';

const next = (expr: string, after: string) => nextRun(parseCron(expr), new Date(after))?.toISOString();

describe('cron', () => {
  it.each([
    ['* * * * *', '2026-12-01T23:55:30Z', '2026-12-01T23:56:00.000Z'],
    ['0 2 * * *', '2026-12-01T23:55:00Z', '2026-12-02T02:00:00.000Z'],
    ['@daily', '2026-12-31T12:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['@hourly', '2026-12-01T10:00:00Z', '2026-12-01T11:00:00.000Z'],
    ['*/15 9-17 * * mon-fri', '2026-12-04T17:50:00Z', '2026-12-07T09:00:00.000Z'], // Friday evening → Monday
    ['0 0 29 feb *', '2026-03-01T00:00:00Z', '2028-02-29T00:00:00.000Z'],
    ['0 19 * * 7', '2026-12-01T00:00:00Z', '2026-12-06T19:00:00.000Z'], // 7 is Sunday
    ['5/20 * * * *', '2026-12-01T10:06:00Z', '2026-12-01T10:25:00.000Z'],
    ['0 0 1,15 * *', '2026-12-02T00:00:00Z', '2026-12-15T00:00:00.000Z'],
  ])('%s after %s fires at %s', (expr, after, expected) => {
    expect(next(expr, after)).toBe(expected);
  });

  it('ORs the day fields when both are restricted, as cron(8) does', () => {
    // The 13th or any Friday: 2026-12-04 is a Friday, before the 13th.
    expect(next('0 0 13 * fri', '2026-12-01T00:00:00Z')).toBe('2026-12-04T00:00:00.000Z');
  });

  it('names the field that is wrong', () => {
    expect(cronProblem('61 * * * *')).toBe('minute: 61 is outside 0-59');
    expect(cronProblem('* * *')).toContain('expected 5 fields');
    expect(cronProblem('* 5-1 * * *')).toBe('hour: range 5-1 runs backwards');
    expect(cronProblem('* * * foo *')).toBe('month: "foo" is not a number');
    expect(cronProblem('*/0 * * * *')).toBe('minute: bad step "0"');
    expect(cronProblem('@sometimes')).toBe('unknown macro @sometimes');
    expect(cronProblem('TZ=Europe/Paris 0 * * * *')).toContain('time zones');
    expect(cronProblem('0 0 * * *')).toBeUndefined();
  });

  it('finds the latest missed time in a window (what a CronJob controller starts)', () => {
    const s = parseCron('*/10 * * * *');
    expect(lastRunBetween(s, new Date('2026-12-01T10:00:00Z'), new Date('2026-12-01T10:35:00Z'))?.toISOString()).toBe(
      '2026-12-01T10:30:00.000Z',
    );
    expect(lastRunBetween(s, new Date('2026-12-01T10:00:00Z'), new Date('2026-12-01T10:05:00Z'))).toBeUndefined();
  });
});
