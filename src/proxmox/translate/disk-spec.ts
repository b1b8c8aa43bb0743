/**
 * Disk and CD-ROM property strings (`scsi0`, `virtio1`, `sata2`, `ide2`), both directions.
 *
 * Requests: `local-lvm:32` (new 32 GiB disk), bpg's `file=local-lvm:8,size=8589934592,…`, `local-lvm:0,import-from=…`,
 * an existing volume `local-lvm:web-disk-1`, ISO media `local:iso/x.iso,media=cdrom`, `none,media=cdrom`, `cdrom`.
 * Answers: `<storage>:<volume>,<opts sorted>,size=<n>` — `format=raw` is always present so bpg never needs the
 * storage-content lookup, and `size=` is always present because Ansible's proxmox_disk reads it.
 */
import { parsePropertyString } from './property-string';
import { formatPveSize, GIB, parsePveSize } from './size';

export type DiskBus = 'scsi' | 'virtio' | 'sata' | 'ide';

/** PVE's per-bus slot limits. */
const BUS_SLOTS: Record<DiskBus, number> = { scsi: 31, virtio: 16, sata: 6, ide: 4 };

export interface DiskKey {
  key: string;
  bus: DiskBus;
  index: number;
}

export function parseDiskKey(key: string): DiskKey | undefined {
  const m = /^(scsi|virtio|sata|ide)(\d{1,2})$/.exec(key);
  if (!m) return undefined;
  const bus = m[1] as DiskBus;
  const index = Number(m[2]);
  if (index >= BUS_SLOTS[bus] || String(index) !== m[2]) return undefined;
  return { key, bus, index };
}

export function isDiskKey(key: string): boolean {
  return parseDiskKey(key) !== undefined;
}

export type DiskSource =
  /** A blank disk to allocate on the storage. */
  | { kind: 'new'; storage: string; sizeBytes: number }
  /** A disk filled from `import-from` (a URL or a storage volume). */
  | { kind: 'import'; storage: string; from: string; sizeBytes?: number }
  /** ISO media in a CD-ROM drive. */
  | { kind: 'iso'; storage: string; path: string }
  /** A CD-ROM drive with no media. */
  | { kind: 'empty-cdrom' }
  /** An existing volume on a storage. */
  | { kind: 'volume'; storage: string; volume: string }
  /** A cloud-init drive (`local-lvm:cloudinit`). */
  | { kind: 'cloudinit'; storage: string };

export interface DiskSpec {
  source: DiskSource;
  /** The remaining options (`iothread`, `discard`, `ssd`, …) as sent, minus the ones consumed above. */
  options: Record<string, string>;
}

export class DiskSpecError extends Error {}

/** Corral's disk bounds (issue 14's strict input): 1 GiB – 64 TiB. */
const MIN_DISK_GIB = 1;
const MAX_DISK_GIB = 64 * 1024;
const STORAGE_ID = /^[a-z][a-z0-9\-_.]*[a-z0-9]$/i;
/** Options consumed by the parser, never echoed back as-is. */
const CONSUMED = new Set(['file', 'media', 'size', 'import-from', 'format']);

function splitVolume(file: string): { storage: string; rest: string } {
  const colon = file.indexOf(':');
  if (colon <= 0) throw new DiskSpecError(`'${file}' is not of the form <storage>:<size|volume>`);
  const storage = file.slice(0, colon);
  if (!STORAGE_ID.test(storage)) throw new DiskSpecError(`invalid storage ID '${storage}'`);
  return { storage, rest: file.slice(colon + 1) };
}

export function parseDiskSpec(text: string): DiskSpec {
  const ps = parsePropertyString(text);
  const file = ps.props.get('file') ?? ps.head;
  if (!file) throw new DiskSpecError('missing disk file (expected e.g. local-lvm:32)');
  const options: Record<string, string> = {};
  for (const [k, v] of ps.props) if (!CONSUMED.has(k)) options[k] = v;
  const media = ps.props.get('media') ?? 'disk';
  if (media !== 'disk' && media !== 'cdrom') throw new DiskSpecError(`invalid media '${media}'`);
  const size = ps.props.get('size');
  if (size !== undefined && parsePveSize(size) === undefined) throw new DiskSpecError(`invalid size '${size}'`);
  const format = ps.props.get('format');
  if (format && !['raw', 'qcow2', 'vmdk'].includes(format)) throw new DiskSpecError(`invalid format '${format}'`);

  if (file === 'cdrom' || file === 'none') {
    if (file === 'none' && media !== 'cdrom') throw new DiskSpecError("'none' is only valid with media=cdrom");
    return { source: { kind: 'empty-cdrom' }, options };
  }
  const { storage, rest } = splitVolume(file);
  // bpg sends the cloud-init drive as `file=<storage>:cloudinit,media=cdrom`.
  if (rest === 'cloudinit') return { source: { kind: 'cloudinit', storage }, options };
  if (media === 'cdrom') {
    if (!rest) throw new DiskSpecError('missing ISO volume');
    return { source: { kind: 'iso', storage, path: rest }, options };
  }
  const importFrom = ps.props.get('import-from');
  if (/^\d+(\.\d+)?$/.test(rest)) {
    const gib = Number(rest);
    if (importFrom)
      return {
        source: { kind: 'import', storage, from: importFrom, ...(gib > 0 ? { sizeBytes: Math.round(gib * GIB) } : {}) },
        options,
      };
    if (!(gib >= MIN_DISK_GIB && gib <= MAX_DISK_GIB))
      throw new DiskSpecError(
        `disk size must be between ${MIN_DISK_GIB} and ${MAX_DISK_GIB} GiB (64 TiB), got '${rest}'`,
      );
    return { source: { kind: 'new', storage, sizeBytes: Math.round(gib * GIB) }, options };
  }
  if (importFrom) throw new DiskSpecError('import-from needs a new disk (<storage>:0)');
  if (!/^[A-Za-z0-9][A-Za-z0-9._\-/]*$/.test(rest)) throw new DiskSpecError(`invalid volume name '${rest}'`);
  return { source: { kind: 'volume', storage, volume: rest }, options };
}

export interface DiskView {
  storage: string;
  volume: string;
  sizeBytes?: number;
  cdrom?: boolean;
  options?: Record<string, string>;
}

/** A config line as PVE prints it: `local-lvm:web-disk,format=raw,iothread=1,size=32G`. */
export function formatDisk(view: DiskView): string {
  const head = `${view.storage}:${view.volume}`;
  const opts: Record<string, string> = { ...(view.options ?? {}) };
  if (view.cdrom) opts.media = 'cdrom';
  else opts.format ??= 'raw';
  const sorted = Object.keys(opts)
    .filter((k) => !['size', 'file'].includes(k))
    .sort()
    .map((k) => `${k}=${opts[k]}`);
  const size = view.sizeBytes !== undefined && view.sizeBytes > 0 ? [`size=${formatPveSize(view.sizeBytes)}`] : [];
  return [head, ...sorted, ...size].join(',');
}

/** `none,media=cdrom` — an empty drive. */
export const EMPTY_CDROM = 'none,media=cdrom';

/**
 * `PUT …/resize` sizes: `+2G` grows by, `34G` or bytes sets the new size. Shrinking is refused by PVE and by
 * Kubernetes alike.
 */
export function resolveResize(current: number, request: string): number {
  const grow = request.startsWith('+');
  const bytes = parsePveSize(grow ? request.slice(1) : request);
  if (bytes === undefined) throw new DiskSpecError(`invalid size '${request}'`);
  const target = grow ? current + bytes : bytes;
  if (target < current)
    throw new DiskSpecError(`shrinking disks is not supported (${formatPveSize(current)} → ${formatPveSize(target)})`);
  return target;
}
