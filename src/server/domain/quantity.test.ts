import { describe, expect, it } from 'vitest';
import { cpuToCores, normalizeSize, quantityToNumber } from './quantity';

describe('normalizeSize', () => {
  it.each([
    ['4G', '4Gi'],
    ['4Gi', '4Gi'],
    ['512M', '512Mi'],
    ['1.5T', '1.5Ti'],
    ['100k', '100Ki'],
  ])('%s → %s', (input, out) => expect(normalizeSize(input)).toBe(out));
  it('rejects a bare number', () => expect(() => normalizeSize('4')).toThrow());
});

describe('quantityToNumber', () => {
  it.each([
    ['4Gi', 4 * 2 ** 30],
    ['4G', 4e9],
    ['1500m', 1.5],
    ['65838656Ki', 65838656 * 1024],
    ['12', 12],
  ])('%s', (q, n) => expect(quantityToNumber(q)).toBe(n));
  it('is NaN for garbage', () => expect(quantityToNumber('lots')).toBeNaN());
  it('cpu cores', () => expect(cpuToCores('15500m')).toBe(15.5));
});
