/**
 * A small tar reader and writer for the embedded cluster's filesystem volumes: what KubeVirt's export server sends
 * as `tar.gz` (GNU `tar Scv .` in the exporter pod) and what CDI's upload server unpacks into an archive
 * DataVolume (GNU `tar -xvC`). The writer emits POSIX ustar (a pax `path` record for names that do not fit); the
 * reader takes ustar, GNU (`ustar  `, `L`/`K` long names, base-256 sizes) and pax `path`/`linkpath`/`size`
 * records, checks each header's checksum and refuses what GNU tar refuses: input that is not a tar archive, an
 * archive cut off inside a member, and member names with `..`; and, as CDI's upload server extracts as a non-root
 * user, device nodes (`Cannot mknod`). FIFOs are skipped; owners are not kept.
 */

export type TarEntryType = 'file' | 'dir' | 'symlink' | 'hardlink';

export interface TarEntry {
  /** Relative path without `./` or a leading `/`, no trailing `/`. */
  path: string;
  type: TarEntryType;
  /** Permission bits (e.g. 0o644). */
  mode: number;
  /** Modification time, seconds since the epoch. */
  mtime: number;
  /** Bytes of a file's data (0 for the other types). */
  size: number;
  /** Target of a symlink or hard link. */
  linkname?: string;
}

/** An entry as read from an archive: where its data starts in the archive. */
export interface IndexedEntry extends TarEntry {
  offset: number;
}

export class TarError extends Error {}

export const BLOCK = 512;
const NOT_TAR = 'This does not look like a tar archive';

// --- writing ---------------------------------------------------------------------------------------------------

function field(block: Buffer, offset: number, length: number, value: string): void {
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length > length) throw new TarError(`tar header field too long: ${value}`);
  bytes.copy(block, offset);
}

function octalField(block: Buffer, offset: number, length: number, value: number): void {
  // length - 1 digits and a NUL, as tar writes them.
  field(block, offset, length, `${value.toString(8).padStart(length - 1, '0')}\0`);
}

function checksum(block: Buffer): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  return sum;
}

const TYPE_FLAG: Record<TarEntryType, string> = { file: '0', hardlink: '1', symlink: '2', dir: '5' };

function rawHeader(name: string, prefix: string, entry: TarEntry, typeflag: string, size: number): Buffer {
  const block = Buffer.alloc(BLOCK);
  field(block, 0, 100, name);
  octalField(block, 100, 8, entry.mode & 0o7777);
  octalField(block, 108, 8, 0);
  octalField(block, 116, 8, 0);
  octalField(block, 124, 12, size);
  octalField(block, 136, 12, Math.max(0, Math.floor(entry.mtime)));
  field(block, 156, 1, typeflag);
  if (entry.linkname) field(block, 157, 100, entry.linkname);
  field(block, 257, 6, 'ustar\0');
  field(block, 263, 2, '00');
  field(block, 265, 32, 'root');
  field(block, 297, 32, 'root');
  field(block, 345, 155, prefix);
  block.write(`${checksum(block).toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

/** Splits a name into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a `/`; undefined when it cannot. */
function splitName(name: string): [string, string] | undefined {
  if (Buffer.byteLength(name) <= 100) return ['', name];
  for (let i = name.lastIndexOf('/'); i > 0; i = name.lastIndexOf('/', i - 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest) return [prefix, rest];
  }
  return undefined;
}

function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length)
    length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/**
 * The header block(s) of one entry, `root` prefixed to its name (`./` as GNU tar writes `tar c .`). Names and link
 * targets that do not fit ustar's fields travel in a pax extended header before it.
 */
export function headerBlocks(entry: TarEntry, root = ''): Buffer {
  const name = entry.path ? `${root}${entry.path}${entry.type === 'dir' ? '/' : ''}` : root || './';
  const size = entry.type === 'file' ? entry.size : 0;
  const split = splitName(name);
  const longLink = entry.linkname !== undefined && Buffer.byteLength(entry.linkname) > 100;
  const flag = TYPE_FLAG[entry.type];
  if (split && !longLink) return rawHeader(split[1], split[0], entry, flag, size);
  const pax = Buffer.from(
    (split ? '' : paxRecord('path', name)) + (longLink ? paxRecord('linkpath', entry.linkname!) : ''),
    'utf8',
  );
  const shortName = split ? split[1] : name.slice(-99).replace(/^\/+/, '');
  const shortPrefix = split ? split[0] : '';
  const paxEntry: TarEntry = { path: '', type: 'file', mode: 0o644, mtime: entry.mtime, size: pax.length };
  const shortEntry = longLink ? { ...entry, linkname: entry.linkname!.slice(0, 100) } : entry;
  return Buffer.concat([
    rawHeader(`PaxHeaders/${shortName}`.slice(0, 100), '', paxEntry, 'x', pax.length),
    pax,
    padding(pax.length),
    rawHeader(shortName, shortPrefix, shortEntry, flag, size),
  ]);
}

/** What follows a member's data so the next header starts on a block boundary. */
export const dataPadding = padding;

/** The end of an archive: two zero blocks. */
export function endBlocks(): Buffer {
  return Buffer.alloc(2 * BLOCK);
}

/** A whole archive in memory: entries in order, each file followed by its data. */
export function writeTar(files: (TarEntry & { data?: Buffer })[], root = ''): Buffer {
  const parts: Buffer[] = [];
  for (const f of files) {
    const data = f.type === 'file' ? (f.data ?? Buffer.alloc(0)) : Buffer.alloc(0);
    parts.push(headerBlocks({ ...f, size: data.length }, root), data, padding(data.length));
  }
  parts.push(endBlocks());
  return Buffer.concat(parts);
}

// --- reading ---------------------------------------------------------------------------------------------------

function cString(block: Buffer, offset: number, length: number): string {
  const slice = block.subarray(offset, offset + length);
  const end = slice.indexOf(0);
  return slice.toString('utf8', 0, end === -1 ? length : end);
}

/** An octal number field, or GNU's base-256 form (high bit of the first byte set). */
function numberField(block: Buffer, offset: number, length: number): number {
  if (block[offset]! & 0x80) {
    let value = block[offset]! & 0x7f;
    for (let i = 1; i < length; i++) value = value * 256 + block[offset + i]!;
    return value;
  }
  const text = cString(block, offset, length).trim();
  if (!text) return 0;
  if (!/^[0-7]+$/.test(text)) throw new TarError(`invalid number field "${text}"`);
  return parseInt(text, 8);
}

function isZero(block: Buffer): boolean {
  for (const b of block) if (b !== 0) return false;
  return true;
}

function paxFields(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    const length = Number(data.toString('utf8', at, space));
    if (space === -1 || !Number.isSafeInteger(length) || length <= 0) throw new TarError('malformed pax header');
    const record = data.toString('utf8', space + 1, at + length - 1);
    const eq = record.indexOf('=');
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    at += length;
  }
  return out;
}

/** A member name as extraction uses it: no `./` or leading `/`, no trailing `/`; `..` refused as GNU tar does. */
export function normalisePath(name: string): string {
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new TarError(`${name}: Member name contains '..'`);
  return parts.join('/');
}

/**
 * The members of an archive of `total` bytes, read block by block through `read(offset, length)` (a Buffer's
 * subarray, or reads from a file), each with where its data starts. Later members of the same path replace
 * earlier ones, as extraction overwrites; the archive's own root (`./`) is not listed.
 */
export function indexTar(read: (offset: number, length: number) => Buffer, total: number): IndexedEntry[] {
  const found = new Map<string, IndexedEntry>();
  let offset = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax: Record<string, string> = {};
  let first = true;
  for (;;) {
    if (offset + BLOCK > total) {
      if (first) throw new TarError(NOT_TAR);
      if (offset === total) break; // no end-of-archive blocks: GNU tar accepts that
      throw new TarError('Unexpected EOF in archive');
    }
    const block = read(offset, BLOCK);
    if (isZero(block)) {
      if (first) throw new TarError(NOT_TAR);
      break;
    }
    let stored: number;
    try {
      stored = numberField(block, 148, 8);
    } catch {
      stored = -1;
    }
    // The `ustar` magic is what CDI's format readers recognise a tar by [src: CDI pkg/importer/format-readers.go].
    if (stored !== checksum(block) || (first && block.toString('latin1', 257, 262) !== 'ustar'))
      throw new TarError(first ? NOT_TAR : 'Skipping to next header: checksum mismatch');
    first = false;
    const typeflag = String.fromCharCode(block[156]!);
    const posix = block.toString('latin1', 257, 263) === 'ustar\0';
    const size = pax.size !== undefined ? Number(pax.size) : numberField(block, 124, 12);
    const dataAt = offset + BLOCK;
    const next = dataAt + size + ((BLOCK - (size % BLOCK)) % BLOCK);
    if (dataAt + size > total) throw new TarError('Unexpected EOF in archive');
    if (typeflag === 'L' || typeflag === 'K' || typeflag === 'x') {
      const data = read(dataAt, size);
      if (typeflag === 'L') longName = cString(data, 0, size);
      else if (typeflag === 'K') longLink = cString(data, 0, size);
      else pax = paxFields(data);
      offset = next;
      continue;
    }
    if (typeflag !== 'g') {
      const prefix = posix ? cString(block, 345, 155) : '';
      const rawName = pax.path ?? longName ?? (prefix ? `${prefix}/${cString(block, 0, 100)}` : cString(block, 0, 100));
      const linkname = pax.linkpath ?? longLink ?? cString(block, 157, 100);
      const type: TarEntryType | undefined =
        typeflag === '5'
          ? 'dir'
          : typeflag === '2'
            ? 'symlink'
            : typeflag === '1'
              ? 'hardlink'
              : typeflag === '0' || typeflag === '\0' || typeflag === '7'
                ? rawName.endsWith('/')
                  ? 'dir'
                  : 'file'
                : undefined;
      const path = normalisePath(rawName);
      // A device node cannot be made by an unprivileged tar: it reports it, and ends failed.
      if (typeflag === '3' || typeflag === '4') throw new TarError(`${rawName}: Cannot mknod: Operation not permitted`);
      if (type && path) {
        found.delete(path);
        found.set(path, {
          path,
          type,
          mode: numberField(block, 100, 8) & 0o7777,
          mtime: numberField(block, 136, 12),
          size: type === 'file' ? size : 0,
          offset: dataAt,
          ...(type === 'symlink' || type === 'hardlink' ? { linkname: normaliseLink(type, linkname) } : {}),
        });
      }
    }
    longName = undefined;
    longLink = undefined;
    pax = {};
    offset = next;
  }
  return [...found.values()];
}

function normaliseLink(type: TarEntryType, linkname: string): string {
  // A hard link names another member; a symlink's target is kept as written (resolved when it is served).
  return type === 'hardlink' ? normalisePath(linkname) : linkname;
}

/** The members of an archive held in memory, with their data. */
export function readTar(archive: Buffer): (TarEntry & { data: Buffer })[] {
  return indexTar((offset, length) => archive.subarray(offset, offset + length), archive.length).map((e) => ({
    ...e,
    data: Buffer.from(archive.subarray(e.offset, e.offset + e.size)),
  }));
}
