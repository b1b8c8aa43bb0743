import { describe, expect, it } from 'vitest';
import { bytesToMiB, formatPveSize, formatQuantity, mibToBytes, parsePveSize, parseQuantity } from './size';

describe('Proxmox sizes', () => {
  it('parses units as binary, bytes as bytes', () => {
    expect(parsePveSize('32G')).toBe(32 * 1024 ** 3);
    expect(parsePveSize('512M')).toBe(512 * 1024 ** 2);
    expect(parsePveSize('1.5T')).toBe(1.5 * 1024 ** 4);
    expect(parsePveSize('8589934592')).toBe(8589934592);
    expect(parsePveSize('2GiB')).toBe(2 * 1024 ** 3);
    expect(parsePveSize('2gb')).toBe(2 * 1024 ** 3);
    expect(parsePveSize('x2G')).toBeUndefined();
    expect(parsePveSize('')).toBeUndefined();
  });

  it('formats with the largest exact unit', () => {
    expect(formatPveSize(32 * 1024 ** 3)).toBe('32G');
    expect(formatPveSize(1536 * 1024 ** 2)).toBe('1536M');
    expect(formatPveSize(1024 ** 4)).toBe('1T');
    expect(formatPveSize(1000)).toBe('1000');
  });
});

describe('Kubernetes quantities', () => {
  it('parses binary and decimal suffixes', () => {
    expect(parseQuantity('4Gi')).toBe(4 * 1024 ** 3);
    expect(parseQuantity('4G')).toBe(4e9);
    expect(parseQuantity('512Mi')).toBe(512 * 1024 ** 2);
    expect(parseQuantity('1073741824')).toBe(1073741824);
    expect(parseQuantity('1e3')).toBe(1000);
    expect(parseQuantity(2048)).toBe(2048);
    expect(parseQuantity('lots')).toBeUndefined();
    expect(parseQuantity(undefined)).toBeUndefined();
  });

  it('formats exactly', () => {
    expect(formatQuantity(4 * 1024 ** 3)).toBe('4Gi');
    expect(formatQuantity(1536 * 1024 ** 2)).toBe('1536Mi');
    expect(formatQuantity(123)).toBe('123');
  });

  it('converts memory MiB <-> bytes', () => {
    expect(mibToBytes(2048)).toBe(2 * 1024 ** 3);
    expect(bytesToMiB(4e9)).toBe(3814);
    expect(bytesToMiB(mibToBytes(777))).toBe(777);
  });
});
