import { describe, expect, it } from 'vitest';
import { gunzipSync } from 'node:zlib';
import { compressShared, negotiateCoding } from './compression';

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

describe('compressShared', () => {
  it('compresses one Buffer once per coding, and an equal but different Buffer again', async () => {
    const body = Buffer.from(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ name: `vm-${i}` }))));
    const first = compressShared(body, 'gzip');
    expect(compressShared(body, 'gzip')).toBe(first);
    expect(compressShared(body, 'br')).not.toBe(first);
    expect(compressShared(Buffer.from(body), 'gzip')).not.toBe(first);
    expect(gunzipSync(await first).equals(body)).toBe(true);
  });
});
