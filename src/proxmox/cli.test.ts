import { describe, expect, it, vi } from 'vitest';
import { UsageError, main, parseServeArgs } from './cli';
import { parseAddr } from './serve';

describe('corral proxmox serve arguments', () => {
  it('defaults to :8006 and reads flags in both forms', () => {
    expect(parseServeArgs([])).toEqual({ addr: ':8006' });
    expect(parseServeArgs(['--addr', '127.0.0.1:9006', '--cert=c.pem', '--key', 'k.pem', '--token', 'x'])).toEqual({
      addr: '127.0.0.1:9006',
      cert: 'c.pem',
      key: 'k.pem',
      token: 'x',
    });
  });

  it('refuses unknown flags, missing values and a cert without a key', () => {
    expect(() => parseServeArgs(['--port', '1'])).toThrow(UsageError);
    expect(() => parseServeArgs(['--addr'])).toThrow(/needs a value/);
    expect(() => parseServeArgs(['--cert', 'c.pem'])).toThrow(/go together/);
  });

  it('parses listen addresses', () => {
    expect(parseAddr(':8006')).toEqual({ host: '0.0.0.0', port: 8006 });
    expect(parseAddr('8006')).toEqual({ host: '0.0.0.0', port: 8006 });
    expect(parseAddr('127.0.0.1:9000')).toEqual({ host: '127.0.0.1', port: 9000 });
    expect(parseAddr('[::1]:9000')).toEqual({ host: '::1', port: 9000 });
    expect(() => parseAddr('nowhere')).toThrow(/--addr/);
    expect(() => parseAddr(':70000')).toThrow(/out of range/);
  });
});

describe('corral proxmox serve --help', () => {
  it('prints the usage and exits 0; an unknown option exits 2', async () => {
    const out: string[] = [];
    const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void out.push(line));
    const err = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(await main(['serve', '--help'])).toBe(0);
      expect(out.join('\n')).toContain('usage: corral proxmox serve');
      expect(await main(['serve', '--bogus'])).toBe(2);
    } finally {
      log.mockRestore();
      err.mockRestore();
    }
  });
});
