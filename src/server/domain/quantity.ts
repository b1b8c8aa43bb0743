/**
 * Sizes as users type them. Proxmox users write `4G` meaning GiB, and the original Corral treated it that way, so a
 * decimal suffix (K/M/G/T/P, also `k`) is normalised to its binary counterpart before it reaches the cluster.
 */
const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50 };
// n and u: metrics-server reports CPU in nanocores (`12345678n`) and occasionally microcores.
const DECIMAL: Record<string, number> = { k: 1e3, K: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, m: 1e-3, u: 1e-6, n: 1e-9 };
const TO_BINARY: Record<string, string> = { k: 'Ki', K: 'Ki', M: 'Mi', G: 'Gi', T: 'Ti', P: 'Pi' };

const SIZE = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|k|K|M|G|T|P)$/;

/** `4G` → `4Gi`, `4Gi` → `4Gi`. Throws on anything else (schemas validate first). */
export function normalizeSize(size: string): string {
  const m = SIZE.exec(size.trim());
  if (!m) throw new Error(`not a size: ${size}`);
  const [, num, unit] = m as unknown as [string, string, string];
  return `${num}${TO_BINARY[unit] ?? unit}`;
}

/** Bytes of a Kubernetes quantity (`4Gi`, `4G`, `4294967296`, `1500m`); NaN when unparsable. */
export function quantityToNumber(q: string | number | undefined): number {
  if (q === undefined) return NaN;
  if (typeof q === 'number') return q;
  const m = /^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)([A-Za-z]*)$/.exec(q.trim());
  if (!m) return NaN;
  const [, num, unit] = m as unknown as [string, string, string];
  const factor = unit === '' ? 1 : (BINARY[unit] ?? DECIMAL[unit]);
  return factor === undefined ? NaN : Number(num) * factor;
}

/** Allocatable CPU of a node (`16`, `15500m`) as a number of cores. */
export function cpuToCores(q: string | number | undefined): number {
  const n = quantityToNumber(q);
  return Number.isFinite(n) ? Math.round(n * 1000) / 1000 : 0;
}
