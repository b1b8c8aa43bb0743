import { describe, expect, it } from 'vitest';
import { formatUpid, parseUpid, upidNode } from './upid';

const task = {
  node: 'corral-1',
  pid: 42,
  pstart: 0x65000000,
  starttime: 0x65001234,
  type: 'qmstart',
  id: '100',
  user: 'root@pam!ci',
};

describe('UPIDs', () => {
  it('formats with hex fields and a trailing colon, matching PVE’s regex', () => {
    const upid = formatUpid(task);
    expect(upid).toBe('UPID:corral-1:0000002A:65000000:65001234:qmstart:100:root@pam!ci:');
  });

  it('round-trips', () => {
    expect(parseUpid(formatUpid(task))).toEqual(task);
  });

  it('parses the way bpg does (hex pid/pstart/starttime)', () => {
    const parsed = parseUpid('UPID:pve:000A1B2C:0102ABCD:66AABBCC:qmcreate:101:root@pam:');
    expect(parsed).toMatchObject({ node: 'pve', pid: 0xa1b2c, pstart: 0x102abcd, starttime: 0x66aabbcc, id: '101' });
  });

  it('rejects malformed UPIDs', () => {
    expect(parseUpid('UPID:pve:1:2:3:qmstart:100:root@pam:')).toBeUndefined();
    expect(parseUpid('UPID:pve:0000002A:65000000:65001234:qmstart:100:root@pam')).toBeUndefined();
    expect(parseUpid('UPID:-bad:0000002A:65000000:65001234:qmstart:100:root@pam:')).toBeUndefined();
    expect(() => formatUpid({ ...task, user: '' })).toThrow();
    expect(() => formatUpid({ ...task, id: 'a:b' })).toThrow();
  });

  it('derives node names PVE accepts', () => {
    expect(upidNode('corral-2')).toBe('corral-2');
    expect(upidNode('ip-10-0-0-1.ec2.internal')).toBe('ip-10-0-0-1');
    expect(upidNode('')).toBe('corral');
  });
});
