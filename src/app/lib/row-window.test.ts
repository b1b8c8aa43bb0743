import { describe, expect, it } from 'vitest';
import { rowWindow } from './row-window';

describe('rowWindow', () => {
  it('renders the rows in the viewport and the overscan on each side', () => {
    expect(rowWindow(0, 340, 34, 50_000, 12)).toEqual({ start: 0, end: 22 });
    // Scrolled to row 1,000: rows 988 to 1,022 (10 on screen, 12 either side).
    expect(rowWindow(34_000, 340, 34, 50_000, 12)).toEqual({ start: 988, end: 1022 });
    // Half a row scrolled: the partly shown rows count.
    expect(rowWindow(17, 340, 34, 50_000, 0)).toEqual({ start: 0, end: 11 });
  });

  it('stops at the ends and never asks for more rows than there are', () => {
    expect(rowWindow(0, 640, 34, 5, 12)).toEqual({ start: 0, end: 5 });
    expect(rowWindow(0, 640, 34, 0, 12)).toEqual({ start: 0, end: 0 });
    expect(rowWindow(-50, 340, 34, 100, 2)).toEqual({ start: 0, end: 12 });
  });

  it('shows the last rows when the list got shorter than the scroll position', () => {
    // 50,000 rows scrolled to 1,000, then a filter leaves 30: the last 10 on screen plus the overscan above.
    expect(rowWindow(34_000, 340, 34, 30, 12)).toEqual({ start: 8, end: 30 });
  });
});
