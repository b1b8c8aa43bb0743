import { describe, expect, it } from 'vitest';
import { DiskSpecError, formatDisk, parseDiskKey, parseDiskSpec, resolveResize } from './disk-spec';

const G = 1024 ** 3;

describe('parseDiskKey', () => {
  it('accepts PVE bus slots within their limits', () => {
    expect(parseDiskKey('scsi0')).toEqual({ key: 'scsi0', bus: 'scsi', index: 0 });
    expect(parseDiskKey('virtio15')?.index).toBe(15);
    expect(parseDiskKey('ide3')?.bus).toBe('ide');
    expect(parseDiskKey('ide4')).toBeUndefined();
    expect(parseDiskKey('sata6')).toBeUndefined();
    expect(parseDiskKey('scsi01')).toBeUndefined();
    expect(parseDiskKey('net0')).toBeUndefined();
  });
});

describe('parseDiskSpec', () => {
  it('reads storage:GiB as a new blank disk and keeps other options', () => {
    expect(parseDiskSpec('local-lvm:32,format=raw,iothread=1')).toEqual({
      source: { kind: 'new', storage: 'local-lvm', sizeBytes: 32 * G },
      options: { iothread: '1' },
    });
  });

  it("reads bpg's file=…,size=<bytes> form", () => {
    const spec = parseDiskSpec(
      'file=local-lvm:8,size=8589934592,aio=io_uring,backup=1,iothread=0,ssd=0,discard=ignore,cache=none,replicate=1',
    );
    expect(spec.source).toEqual({ kind: 'new', storage: 'local-lvm', sizeBytes: 8 * G });
    expect(spec.options).toMatchObject({ aio: 'io_uring', discard: 'ignore', cache: 'none' });
    expect(spec.options).not.toHaveProperty('size');
  });

  it('reads ISO media and empty drives', () => {
    expect(parseDiskSpec('local:iso/debian-12.iso,media=cdrom').source).toEqual({
      kind: 'iso',
      storage: 'local',
      path: 'iso/debian-12.iso',
    });
    expect(parseDiskSpec('file=local:iso/x.iso,media=cdrom').source.kind).toBe('iso');
    expect(parseDiskSpec('none,media=cdrom').source).toEqual({ kind: 'empty-cdrom' });
    expect(parseDiskSpec('cdrom').source).toEqual({ kind: 'empty-cdrom' });
  });

  it('reads import-from with or without a size', () => {
    expect(parseDiskSpec('local-lvm:0,import-from=https://example.com/img.qcow2').source).toEqual({
      kind: 'import',
      storage: 'local-lvm',
      from: 'https://example.com/img.qcow2',
    });
    expect(parseDiskSpec('local-lvm:10,import-from=local:base-disk').source).toMatchObject({ sizeBytes: 10 * G });
  });

  it('reads existing volumes and cloud-init drives', () => {
    expect(parseDiskSpec('local-lvm:web-disk-1,size=10G').source).toEqual({
      kind: 'volume',
      storage: 'local-lvm',
      volume: 'web-disk-1',
    });
    expect(parseDiskSpec('local-lvm:cloudinit').source).toEqual({ kind: 'cloudinit', storage: 'local-lvm' });
  });

  it.each([
    ['', /missing disk file/],
    ['32', /<storage>:/],
    ['bad storage!:32', /invalid storage ID/],
    ['local-lvm:0', /between 1 and 65536 GiB/],
    ['local-lvm:0.5', /between 1 and 65536 GiB/],
    ['local-lvm:65537', /between 1 and 65536 GiB/],
    ['local-lvm:1,size=abc', /invalid size 'abc'/],
    ['local-lvm:32,media=floppy', /invalid media/],
    ['local-lvm:32,format=vhd', /invalid format/],
    ['none', /only valid with media=cdrom/],
    ['local-lvm:web-disk,import-from=x', /import-from needs a new disk/],
    ['local-lvm:../etc', /invalid volume name/],
  ])('rejects %j', (text, message) => {
    expect(() => parseDiskSpec(text)).toThrow(DiskSpecError);
    expect(() => parseDiskSpec(text)).toThrow(message);
  });
});

describe('formatDisk', () => {
  it('prints volume, sorted options with format=raw, then size', () => {
    expect(
      formatDisk({ storage: 'local-lvm', volume: 'web-disk', sizeBytes: 32 * G, options: { iothread: '1' } }),
    ).toBe('local-lvm:web-disk,format=raw,iothread=1,size=32G');
  });

  it('prints CD-ROMs with media=cdrom and no format', () => {
    expect(formatDisk({ storage: 'local', volume: 'iso/x.iso', cdrom: true, sizeBytes: 600 * 1024 ** 2 })).toBe(
      'local:iso/x.iso,media=cdrom,size=600M',
    );
  });

  it('round-trips through the parser', () => {
    const line = formatDisk({ storage: 'local-lvm', volume: 'web-disk-2', sizeBytes: 10 * G });
    expect(parseDiskSpec(line).source).toEqual({ kind: 'volume', storage: 'local-lvm', volume: 'web-disk-2' });
  });
});

describe('resolveResize', () => {
  it('grows by +N and sets absolute sizes', () => {
    expect(resolveResize(32 * G, '+2G')).toBe(34 * G);
    expect(resolveResize(32 * G, '40G')).toBe(40 * G);
    expect(resolveResize(32 * G, String(33 * G))).toBe(33 * G);
  });

  it('refuses shrinking and garbage', () => {
    expect(() => resolveResize(32 * G, '16G')).toThrow(/shrinking/);
    expect(() => resolveResize(32 * G, 'big')).toThrow(/invalid size/);
  });
});
