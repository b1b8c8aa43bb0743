/**
 * The raw disk image an export serves: small (4 MiB), deterministic for a given volume, and real enough for
 * tools to recognise — an MBR with one Linux partition at sector 2048 holding an ext2 superblock (magic 0xEF53,
 * UUID and label derived from the volume) and a readable note saying where the disk came from. Everything else
 * is zeros, so the gzip format is small.
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';

export const IMAGE_BYTES = 4 * 2 ** 20;
const SECTOR = 512;
const PARTITION_START_LBA = 2048;
const PARTITION_OFFSET = PARTITION_START_LBA * SECTOR;
const BLOCK = 1024;

export interface DiskIdentity {
  namespace: string;
  volume: string;
  /** Where the data came from (DISK_CONTENT_ANNOTATION), written into the note. */
  content: string;
}

export function buildRawImage(id: DiskIdentity): Buffer {
  const image = Buffer.alloc(IMAGE_BYTES);
  const digest = createHash('sha256').update(`${id.namespace}/${id.volume}\u0000${id.content}`).digest();
  writeMbr(image, digest);
  writeExt2Superblock(image, digest, id.volume);
  const note = [
    'Corral embedded cluster: exported disk image',
    `namespace: ${id.namespace}`,
    `volume: ${id.volume}`,
    `content: ${id.content}`,
    '',
  ].join('\n');
  image.write(note, PARTITION_OFFSET + 64 * BLOCK, 'utf8');
  return image;
}

function writeMbr(image: Buffer, digest: Buffer): void {
  digest.copy(image, 440, 0, 4); // disk signature
  const entry = 446;
  image[entry] = 0x00; // not bootable
  image.set([0x00, 0x21, 0x00], entry + 1); // CHS of the first sector (LBA 2048 in 255/63 geometry)
  image[entry + 4] = 0x83; // Linux
  image.set([0xfe, 0xff, 0xff], entry + 5); // CHS beyond 1024 cylinders
  image.writeUInt32LE(PARTITION_START_LBA, entry + 8);
  image.writeUInt32LE(IMAGE_BYTES / SECTOR - PARTITION_START_LBA, entry + 12);
  image[510] = 0x55;
  image[511] = 0xaa;
}

/** The fields `blkid`/`file` look at: counts, block size, magic, state, revision, UUID and volume label. */
function writeExt2Superblock(image: Buffer, digest: Buffer, label: string): void {
  const sb = PARTITION_OFFSET + 1024;
  const blocks = (IMAGE_BYTES - PARTITION_OFFSET) / BLOCK;
  image.writeUInt32LE(256, sb + 0); // s_inodes_count
  image.writeUInt32LE(blocks, sb + 4); // s_blocks_count
  image.writeUInt32LE(Math.floor(blocks / 20), sb + 8); // s_r_blocks_count
  image.writeUInt32LE(blocks - 80, sb + 12); // s_free_blocks_count
  image.writeUInt32LE(245, sb + 16); // s_free_inodes_count
  image.writeUInt32LE(1, sb + 20); // s_first_data_block (1 KiB blocks)
  image.writeUInt32LE(0, sb + 24); // s_log_block_size → 1024
  image.writeUInt32LE(0, sb + 28); // s_log_frag_size
  image.writeUInt32LE(8192, sb + 32); // s_blocks_per_group
  image.writeUInt32LE(8192, sb + 36); // s_frags_per_group
  image.writeUInt32LE(256, sb + 40); // s_inodes_per_group
  image.writeUInt16LE(0xffff, sb + 54); // s_max_mnt_count
  image.writeUInt16LE(0xef53, sb + 56); // s_magic
  image.writeUInt16LE(1, sb + 58); // s_state: clean
  image.writeUInt16LE(1, sb + 60); // s_errors: continue
  image.writeUInt32LE(1, sb + 76); // s_rev_level: dynamic
  image.writeUInt32LE(11, sb + 84); // s_first_ino
  image.writeUInt16LE(128, sb + 88); // s_inode_size
  digest.copy(image, sb + 104, 4, 20); // s_uuid
  image.write(label.slice(0, 16), sb + 120, 'utf8'); // s_volume_name
}

/** Built images, newest last; a handful of 4 MiB buffers at most. */
const cache = new Map<string, { raw: Buffer; gzip?: Buffer }>();
const CACHE_SIZE = 8;

export function diskImage(id: DiskIdentity, format: 'raw' | 'gzip'): Buffer {
  const key = JSON.stringify(id);
  let entry = cache.get(key);
  if (entry) cache.delete(key);
  entry ??= { raw: buildRawImage(id) };
  cache.set(key, entry);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  if (format === 'raw') return entry.raw;
  entry.gzip ??= gzipSync(entry.raw);
  return entry.gzip;
}

const FILLER_CHUNK = 1024 * 1024;
let fillerPattern: Buffer | undefined;

/**
 * 1 MiB like a used disk: per 64 KiB, 16 KiB of pseudo-random bytes (incompressible) and 48 KiB of log-like text.
 * Built once; each chunk is stamped with its index so no two chunks are identical.
 */
function filler(): Buffer {
  if (fillerPattern) return fillerPattern;
  const b = Buffer.alloc(FILLER_CHUNK);
  let seed = createHash('sha256').update('corral-sim-filler').digest();
  for (let seg = 0; seg < FILLER_CHUNK; seg += 65536) {
    for (let o = 0; o < 16384; o += 32) {
      seed = createHash('sha256').update(seed).digest();
      seed.copy(b, seg + o);
    }
    let text = '';
    for (let line = 0; text.length < 49152; line++)
      text += `2026-12-01T10:${String(line % 60).padStart(2, '0')}:00Z kernel: block ${seg + line} ok sda${line % 4}\n`;
    b.write(text.slice(0, 49152), seg + 16384, 'latin1');
  }
  return (fillerPattern = b);
}

/**
 * The raw image of `totalBytes` (≥ IMAGE_BYTES): the 4 MiB image, then filler, produced chunk by chunk as the
 * reader asks for it (never held whole).
 */
export function largeRawImageStream(id: DiskIdentity, totalBytes: number): Readable {
  const head = diskImage(id, 'raw');
  let offset = 0;
  return new Readable({
    highWaterMark: FILLER_CHUNK,
    read() {
      if (offset >= totalBytes) {
        this.push(null);
        return;
      }
      let chunk: Buffer;
      if (offset < head.length) chunk = head.subarray(offset, Math.min(head.length, totalBytes));
      else {
        chunk = Buffer.from(filler().subarray(0, Math.min(FILLER_CHUNK, totalBytes - offset)));
        chunk.writeUInt32LE(offset / FILLER_CHUNK, 0);
      }
      offset += chunk.length;
      this.push(chunk);
    },
  });
}
