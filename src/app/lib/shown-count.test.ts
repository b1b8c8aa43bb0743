import { describe, expect, it } from 'vitest';
import { shownCount } from './shown-count';

describe('shownCount', () => {
  it('says every guest, or how many of how many the filter shows', () => {
    expect(shownCount(120, 120, false)).toBe('120');
    expect(shownCount(3, 120, true)).toBe('3 of 120');
    expect(shownCount(120, 120, true)).toBe('120');
  });

  it('while only the first page is held: the whole count unfiltered, and that a filter searched only the first rows', () => {
    expect(shownCount(60, 60, false, 50_060)).toBe('50060');
    expect(shownCount(3, 60, true, 50_060)).toBe('3 of the first 60; the rest are loading');
    // A filter that matches every row held still searched only those.
    expect(shownCount(60, 60, true, 50_060)).toBe('60 of the first 60; the rest are loading');
    // The first page was the whole fleet: nothing is loading.
    expect(shownCount(3, 40, true, 40)).toBe('3 of 40');
  });
});
