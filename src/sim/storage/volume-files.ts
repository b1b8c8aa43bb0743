/**
 * What a volume holds, as KubeVirt's export server sees it. A claim is either *kubevirt content* (a disk image:
 * exported as `raw` and `gzip`) or a plain filesystem (exported as `dir` and `tar.gz`), decided as KubeVirt's
 * export controller decides it [src: KubeVirt pkg/storage/export/export/export.go isKubevirtContentType]. A
 * filesystem claim's files are those an archive upload unpacked into it (CDI, contentType archive), kept as the
 * uploaded tar next to the claim; a filesystem claim that never received data holds a small tree derived from its
 * uid and name (a CT's root: hostname, a note, a log, a few KiB of seeded bytes), the same on every read.
 */
import { createHash } from 'node:crypto';
import { closeSync, createReadStream, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { posix } from 'node:path';
import { Readable } from 'node:stream';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, ObjectMeta } from '../store/types.js';
import { CDI_ANN, DISK_CONTENT_ANNOTATION, S, UPLOAD_FILE_ANNOTATION } from './keys.js';
import { indexTar, type IndexedEntry, type TarEntry } from './tar.js';
import { rec, spec, str } from './util.js';

const DATAVOLUME_API = 'cdi.kubevirt.io/v1beta1';

/** What the content type is decided by: a claim, or the claim KubeVirt would restore from a snapshot's backup. */
export interface ClaimLike {
  metadata: Pick<ObjectMeta, 'namespace' | 'annotations' | 'ownerReferences'>;
  spec?: unknown;
}

/**
 * Block claims always; else the claim's `cdi.kubevirt.io/storage.contentType` when present (`kubevirt` or empty
 * is a disk image, anything else is not); else the contentType (unset = kubevirt) of the DataVolume that controls
 * it. A claim with neither is a plain filesystem.
 */
export function isKubevirtContent(store: ObjectStore, claim: ClaimLike): boolean {
  if (rec(claim.spec).volumeMode === 'Block') return true;
  const annotation = claim.metadata.annotations?.[CDI_ANN.contentType];
  if (annotation !== undefined) return annotation === 'kubevirt' || annotation === '';
  const owner = claim.metadata.ownerReferences?.find((r) => r.controller);
  if (!owner || owner.kind !== 'DataVolume' || owner.apiVersion !== DATAVOLUME_API) return false;
  if (!store.allTypes().some((t) => t.plural === 'datavolumes')) return false;
  const dv = store.get(S.dataVolumes, claim.metadata.namespace, owner.name);
  const contentType = str(spec(dv ?? ({} as KObject)).contentType);
  return dv !== undefined && (contentType === undefined || contentType === '' || contentType === 'kubevirt');
}

/** One file, directory or link of a filesystem volume, its data read on demand. */
export interface VolumeFile extends TarEntry {
  open(): Readable;
}

/** The files of a filesystem claim, parents before children. */
export function volumeFiles(claim: KObject): VolumeFile[] {
  const uploaded = claim.metadata.annotations?.[UPLOAD_FILE_ANNOTATION];
  if (uploaded && existsSync(uploaded)) return archiveFiles(uploaded);
  return seededFiles(claim);
}

/** The files of the tar at `archive` (throws TarError when it is not a tar). */
export function archiveFiles(archive: string): VolumeFile[] {
  const fd = openSync(archive, 'r');
  let entries;
  try {
    const total = fstatSync(fd).size;
    entries = indexTar((offset, length) => {
      const block = Buffer.alloc(length);
      readSync(fd, block, 0, length, offset);
      return block;
    }, total);
  } finally {
    closeSync(fd);
  }
  const byPath = new Map(entries.map((e) => [e.path, e]));
  return withParents(entries).map((e) => {
    // A hard link holds its target's data.
    const data = e.type === 'hardlink' ? byPath.get(e.linkname ?? '') : e;
    const size = data?.type === 'file' ? data.size : 0;
    const type = e.type === 'hardlink' ? (data?.type === 'file' ? 'file' : 'dir') : e.type;
    return {
      ...e,
      type,
      size,
      open: () =>
        size > 0 ? createReadStream(archive, { start: data!.offset, end: data!.offset + size - 1 }) : Readable.from([]),
    };
  });
}

/** Directories an archive names only through their members, as extraction creates them, before their first child. */
function withParents(entries: IndexedEntry[]): IndexedEntry[] {
  const seen = new Set(entries.map((e) => e.path));
  const out: IndexedEntry[] = [];
  for (const e of entries) {
    const missing: string[] = [];
    for (let dir = posix.dirname(e.path); dir !== '.' && !seen.has(dir); dir = posix.dirname(dir)) missing.unshift(dir);
    for (const dir of missing) {
      seen.add(dir);
      out.push({ path: dir, type: 'dir', mode: 0o755, mtime: e.mtime, size: 0, offset: 0 });
    }
    out.push(e);
  }
  return out;
}

/** Seconds of 2026-12-01T00:00:00Z: every seeded file's mtime, so the tree is the same on every read. */
const SEEDED_MTIME = 1_796_083_200;

function seededFiles(claim: KObject): VolumeFile[] {
  const ns = claim.metadata.namespace ?? '';
  const name = claim.metadata.name;
  const uid = claim.metadata.uid ?? '';
  const content = claim.metadata.annotations?.[DISK_CONTENT_ANNOTATION] ?? `pvc:${ns}/${name}`;
  const host = claim.metadata.labels?.['corral.dev/ct-name'] ?? name;
  let seed = createHash('sha256').update(`${ns}/${name}\u0000${uid}`).digest();
  const bytes = Buffer.alloc(4096);
  for (let at = 0; at < bytes.length; at += seed.length) {
    seed = createHash('sha256').update(seed).digest();
    seed.copy(bytes, at);
  }
  const log = Array.from(
    { length: 12 },
    (_, i) =>
      `2026-12-01T00:00:${String(i).padStart(2, '0')}Z ${host} init[1]: step ${i + 1} of 12 ok (${uid.slice(0, 8)})`,
  ).join('\n');
  const text = (s: string) => Buffer.from(`${s}\n`, 'utf8');
  const tree: [string, number, Buffer | undefined][] = [
    ['etc', 0o755, undefined],
    ['etc/hostname', 0o644, text(host)],
    ['etc/motd', 0o644, text(`Corral embedded cluster: volume ${ns}/${name}\ncontent: ${content}\nuid: ${uid}`)],
    ['root', 0o700, undefined],
    ['root/seed.bin', 0o600, bytes],
    ['var', 0o755, undefined],
    ['var/log', 0o755, undefined],
    ['var/log/boot.log', 0o644, text(log)],
  ];
  return tree.map(([path, mode, data]) => ({
    path,
    type: data ? 'file' : 'dir',
    mode,
    mtime: SEEDED_MTIME,
    size: data?.length ?? 0,
    open: () => Readable.from(data ? [data] : []),
  }));
}

/**
 * Resolves a request path inside the volume (following symlinks that stay inside it, as the export server's
 * `symlinkSafeDir` does); undefined when nothing is there or a link leads outside.
 */
export function lookup(files: VolumeFile[], path: string): VolumeFile | { root: true } | undefined {
  const byPath = new Map(files.map((f) => [f.path, f]));
  let current = posix.normalize(`/${path}`).slice(1).replace(/\/$/, '');
  for (let hops = 0; hops < 16; hops++) {
    if (current === '' || current === '.') return { root: true };
    const found = byPath.get(current);
    if (!found || found.type !== 'symlink') return found;
    const target = posix.normalize(
      found.linkname!.startsWith('/') ? found.linkname! : posix.join(posix.dirname(current), found.linkname!),
    );
    if (target.startsWith('..')) return undefined;
    current = target.replace(/^\/+/, '').replace(/\/$/, '');
  }
  return undefined;
}

/** The direct children of directory `dir` ('' for the root). */
export function children(files: VolumeFile[], dir: string): VolumeFile[] {
  return files
    .filter((f) => posix.dirname(f.path) === (dir === '' ? '.' : dir))
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}
