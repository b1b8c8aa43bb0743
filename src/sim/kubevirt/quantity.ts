/**
 * Kubernetes resource quantities, just enough for scheduling and metrics: CPU in millicores, memory in bytes.
 * Bad input throws so a malformed request surfaces as a clear error instead of silently scheduling as zero.
 */

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = {
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
};
const QUANTITY = /^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?)$/;

/** The numeric value of a quantity in base units (cores, bytes). */
export function parseQuantity(value: string | number): number {
  if (typeof value === 'number') return value;
  const match = QUANTITY.exec(value.trim());
  if (!match)
    throw new Error(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': "${value}"`,
    );
  const [, number, exponent, suffix] = match;
  const base = Number(number);
  if (exponent) return base * 10 ** Number(exponent.slice(1));
  const unit = suffix ?? '';
  return base * (BINARY[unit] ?? DECIMAL[unit] ?? 1);
}

export function cpuMillis(value: string | number | undefined): number {
  return value === undefined ? 0 : Math.round(parseQuantity(value) * 1000);
}

export function memoryBytes(value: string | number | undefined): number {
  return value === undefined ? 0 : Math.round(parseQuantity(value));
}

/** `4Gi`-style when exact, else `Ki` (what kubelet reports). */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
  ] as const) {
    if (bytes > 0 && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return `${Math.round(bytes / 1024)}Ki`;
}

/** metrics-server style: CPU in nanocores. */
export function formatNanoCores(cores: number): string {
  return `${Math.max(0, Math.round(cores * 1e9))}n`;
}

/** metrics-server style: memory in Ki. */
export function formatKi(bytes: number): string {
  return `${Math.max(0, Math.round(bytes / 1024))}Ki`;
}
