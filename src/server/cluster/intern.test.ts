import { describe, expect, it } from 'vitest';
import { Interner } from './intern';

/** Two equal strings that are distinct heap copies (as two JSON.parse calls make them). */
const copy = (s: string) => JSON.parse(JSON.stringify(s)) as string;

describe('Interner', () => {
  it('holds one entry per distinct string, however many copies are interned', () => {
    const strings = new Interner();
    for (let i = 0; i < 5; i++) {
      expect(strings.intern(copy('quay.io/containerdisks/fedora:42'))).toBe('quay.io/containerdisks/fedora:42');
      strings.intern(copy('bench'));
    }
    expect(strings.size).toBe(2);
  });

  it('starts its table over at the limit: unique values cannot grow it without end, repeated ones come back', () => {
    const strings = new Interner(3);
    for (let i = 0; i < 10; i++) strings.intern(`vm-${i}`);
    expect(strings.size).toBeLessThanOrEqual(3);
    strings.intern(copy('corral-1'));
    const size = strings.size;
    strings.intern(copy('corral-1'));
    expect(strings.size).toBe(size);
  });
});
