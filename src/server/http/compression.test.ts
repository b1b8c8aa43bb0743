import { describe, expect, it } from 'vitest';
import { negotiateCoding } from './compression';

describe('negotiateCoding', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['gzip', 'gzip'],
    ['gzip, deflate, br, zstd', 'gzip'],
    ['br', 'br'],
    ['br;q=0, gzip', 'gzip'],
    ['BR;q=0.5, gzip;q=0', 'br'],
    ['gzip;q=0', undefined],
    ['*', 'gzip'],
    ['*;q=0, br', 'br'],
    ['*;q=0, gzip', 'gzip'],
    [['deflate', 'gzip'], 'gzip'],
    ['gzip;q=x', undefined],
  ] as const)('%j → %s', (header, coding) => {
    expect(negotiateCoding(header as string | string[] | undefined)).toBe(coding);
  });
});
