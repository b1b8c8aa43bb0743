// Kubernetes-style sizes as the server accepts them (`4G`, `4Gi`, `512Mi`), parsed for validation,
// sorting and display. Decimal suffixes are powers of 1000, binary ones powers of 1024, as in Kubernetes.

const FACTORS: Record<string, number> = {
  '': 1,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
};

const QUANTITY = /^(\d+(?:\.\d+)?)\s*(k|K|M|G|T|P|Ki|Mi|Gi|Ti|Pi)?$/;

/** Bytes for a size string, or null when it is not a size. */
export function parseQuantity(text: string): number | null {
  const m = QUANTITY.exec(text.trim());
  if (!m?.[1]) return null;
  return Number(m[1]) * (FACTORS[m[2] ?? ''] ?? 1);
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** "4 GiB" style, one decimal when it is not whole. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  const shown = Number.isInteger(value) ? String(value) : value.toFixed(1);
  return `${shown} ${UNITS[unit]}`;
}

/** Displays a quantity string the way the table shows memory; unparseable input passes through. */
export function formatQuantity(text: string): string {
  if (text === '') return '';
  const bytes = parseQuantity(text);
  return bytes === null ? text : formatBytes(bytes);
}

/** Milliseconds as "850 ms", "12.3 s", "4 min 05 s", "2 h 03 min". */
export function formatDuration(ms: number): string {
  if (ms < 0 || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}
