/**
 * The embedded cluster's tar reader and writer against GNU tar itself: what the writer makes, tar lists and
 * unpacks; what tar makes (GNU format, `./` names, long names, links), the reader reads; and it refuses what GNU
 * tar refuses (not a tar, cut off, `..` members, a damaged header).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readTar, TarError, writeTar, type TarEntry } from '@/sim/storage/tar';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), 'corral-tar-test-'));
  dirs.push(d);
  return d;
}

const LONG = `${'deep/'.repeat(30)}${'n'.repeat(120)}.txt`; // 270 bytes: no ustar split fits, a pax record carries it
const SPLIT = `${'a'.repeat(90)}/${'b'.repeat(90)}.log`; // fits ustar's prefix + name

function entry(path: string, type: TarEntry['type'], data?: string, extra: Partial<TarEntry> = {}) {
  const bytes = data === undefined ? undefined : Buffer.from(data);
  return {
    path,
    type,
    mode: type === 'dir' ? 0o755 : type === 'symlink' ? 0o777 : 0o640,
    mtime: 1_796_083_200,
    size: bytes?.length ?? 0,
    ...(bytes ? { data: bytes } : {}),
    ...extra,
  };
}

const FILES = [
  entry('etc', 'dir'),
  entry('etc/hostname', 'file', 'box\n'),
  entry('empty', 'file', ''),
  entry(SPLIT, 'file', 'split name\n'),
  entry(LONG, 'file', 'long name\n'),
  entry('etc/localtime', 'symlink', undefined, { linkname: '/usr/share/zoneinfo/UTC' }),
];

describe('tar writer', () => {
  it('writes an archive GNU tar lists and unpacks to the same names, modes and contents', () => {
    const archive = writeTar(FILES, './');
    expect(archive.length % 512).toBe(0);
    const listed = execFileSync('tar', ['-tf', '-'], { input: archive }).toString().trim().split('\n');
    expect(listed).toEqual(['./etc/', './etc/hostname', './empty', `./${SPLIT}`, `./${LONG}`, './etc/localtime']);
    const out = scratch();
    execFileSync('tar', ['-xf', '-', '-C', out], { input: archive });
    expect(readFileSync(join(out, 'etc/hostname'), 'utf8')).toBe('box\n');
    expect(readFileSync(join(out, LONG), 'utf8')).toBe('long name\n');
    expect(readFileSync(join(out, SPLIT), 'utf8')).toBe('split name\n');
    const modes = execFileSync('tar', ['-tvf', '-'], { input: archive }).toString();
    expect(modes).toMatch(/^-rw-r----- .* \.\/etc\/hostname$/m);
    expect(modes).toMatch(/^lrwxrwxrwx .* \.\/etc\/localtime -> \/usr\/share\/zoneinfo\/UTC$/m);
  });

  it('reads back what it wrote', () => {
    const back = readTar(writeTar(FILES));
    expect(back.map((e) => [e.path, e.type, e.mode, e.data.toString(), e.linkname])).toEqual(
      FILES.map((f) => [f.path, f.type, f.mode, f.data?.toString() ?? '', f.linkname]),
    );
  });
});

describe('tar reader', () => {
  it("reads GNU tar's own archive of a directory (gnu format, ./ names, long names, links)", () => {
    const src = scratch();
    mkdirSync(join(src, 'etc'));
    writeFileSync(join(src, 'etc/hostname'), 'box\n');
    mkdirSync(join(src, 'deep/'.repeat(30)), { recursive: true });
    writeFileSync(join(src, LONG), 'long name\n');
    symlinkSync('hostname', join(src, 'etc/name'));
    execFileSync('ln', [join(src, 'etc/hostname'), join(src, 'hardlink')]);
    const archive = execFileSync('tar', ['-c', '--sort=name', '-C', src, '.']);
    const byPath = new Map(readTar(archive).map((e) => [e.path, e]));
    expect(byPath.get('etc')?.type).toBe('dir');
    expect(byPath.get('etc/hostname')?.data.toString()).toBe('box\n');
    expect(byPath.get(LONG)?.data.toString()).toBe('long name\n');
    expect(byPath.get('etc/name')).toMatchObject({ type: 'symlink', linkname: 'hostname' });
    expect(byPath.get('hardlink')).toMatchObject({ type: 'hardlink', linkname: 'etc/hostname' });
    expect(byPath.has('')).toBe(false);
  });

  it('refuses what GNU tar refuses: not a tar, empty, cut off, a damaged header, a member with ..', () => {
    const good = writeTar([entry('a.txt', 'file', 'x'.repeat(2000))]);
    const damaged = Buffer.from(good);
    damaged[0] = 'b'.charCodeAt(0);
    const cases: [string, Buffer, RegExp][] = [
      ['junk', Buffer.from('hello world\n'.repeat(100)), /does not look like a tar archive/],
      ['empty', Buffer.alloc(0), /does not look like a tar archive/],
      ['zeros', Buffer.alloc(1024), /does not look like a tar archive/],
      ['cut off', good.subarray(0, 1024), /Unexpected EOF/],
      ['damaged', damaged, /does not look like a tar archive/],
      ['dot-dot', writeTar([entry('../escape', 'file', 'x')]), /Member name contains '\.\.'/],
    ];
    for (const [what, archive, message] of cases) {
      expect(() => readTar(archive), what).toThrow(TarError);
      expect(() => readTar(archive), what).toThrow(message);
    }
    // A device node, as the upload server's unprivileged tar cannot make one.
    const device = writeTar([entry('dev', 'dir')]);
    const dev = Buffer.from(device.subarray(0, 512));
    dev.write('dev/null\0', 0, 'latin1');
    dev[156] = '3'.charCodeAt(0);
    dev.write('        ', 148, 'latin1');
    let sum = 0;
    for (const b of dev) sum += b;
    dev.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    expect(() => readTar(Buffer.concat([dev, Buffer.alloc(1024)]))).toThrow(/dev\/null: Cannot mknod/);
    // The same inputs GNU tar refuses as well.
    for (const bad of [cases[0]![1], cases[3]![1]])
      expect(() => execFileSync('tar', ['-tf', '-'], { input: bad, stdio: ['pipe', 'pipe', 'ignore'] })).toThrow();
  });

  it('takes the last of two members with one path, as extraction overwrites', () => {
    const archive = writeTar([entry('a', 'file', 'first'), entry('b', 'file', 'b'), entry('a', 'file', 'second')]);
    expect(readTar(archive).map((e) => [e.path, e.data.toString()])).toEqual([
      ['b', 'b'],
      ['a', 'second'],
    ]);
  });
});
