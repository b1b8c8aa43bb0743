/**
 * Sizes across the two vocabularies: Proxmox (`32G`, `+2G`, bytes, MiB for memory) and Kubernetes quantities
 * (`4Gi`, `4G`, `512Mi`). Proxmox's K/M/G/T are binary (KiB…TiB).
 */
const BINARY: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
const MIB = 1024 * 1024;
export const GIB = 1024 ** 3;

/** A Proxmox size (`32G`, `512M`, `1.5T`, `8589934592`, `32GiB`) in bytes; undefined when malformed. */
export function parsePveSize(text: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?$/i.exec(text.trim());
  if (!m) return undefined;
  const unit = BINARY[(m[2] ?? '').toLowerCase()];
  if (unit === undefined) return undefined;
  return Math.round(Number(m[1]) * unit);
}

/** Bytes as PVE prints them in disk strings: the largest binary unit that divides exactly (`32G`, `1536M`). */
export function formatPveSize(bytes: number): string {
  for (const [unit, factor] of [
    ['T', 1024 ** 4],
    ['G', 1024 ** 3],
    ['M', 1024 ** 2],
    ['K', 1024],
  ] as const) {
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

const QUANTITY: Record<string, number> = {
  '': 1,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  m: 1e-3,
};

/** A Kubernetes quantity (`4Gi`, `4G`, `1073741824`, `1e9`) in bytes, rounded; undefined when malformed. */
export function parseQuantity(q: string | number | undefined | null): number | undefined {
  if (q === undefined || q === null) return undefined;
  if (typeof q === 'number') return Number.isFinite(q) ? Math.round(q) : undefined;
  const m = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|k|K|M|G|T|P|m)?$/.exec(q.trim());
  if (!m) return undefined;
  const factor = QUANTITY[m[2] ?? ''];
  return factor === undefined ? undefined : Math.round(Number(m[1]) * factor);
}

/** Bytes as a Kubernetes quantity, exact: `4Gi`, `512Mi`, or plain bytes. */
export function formatQuantity(bytes: number): string {
  for (const [unit, factor] of [
    ['Ti', 1024 ** 4],
    ['Gi', 1024 ** 3],
    ['Mi', 1024 ** 2],
    ['Ki', 1024],
  ] as const) {
    if (bytes >= factor && bytes % factor === 0) return `${bytes / factor}${unit}`;
  }
  return String(bytes);
}

/** PVE's `memory` is MiB; Corral's is bytes. Rounded down to whole MiB (PVE only has whole MiB). */
export function bytesToMiB(bytes: number): number {
  return Math.floor(bytes / MIB);
}

export function mibToBytes(mib: number): number {
  return mib * MIB;
}
