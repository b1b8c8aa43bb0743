// Metric values in words a person reads: CPU in millicores or cores, memory in binary bytes, network and disk
// rates in binary bytes per second, and sample times. Axis labels use the short forms, tooltips the long ones.

const BYTE_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** Up to three significant digits, no trailing zeros ("1.5", "12.3", "512"). */
function digits(value: number): string {
  const abs = Math.abs(value);
  const shown = abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : value.toFixed(2);
  return shown.includes('.') ? shown.replace(/\.?0+$/, '') : shown;
}

/** Millicores as "250 m" / "1.5 cores" (long: "250 millicores"). */
export function formatCpu(millicores: number, long = false): string {
  if (millicores === 0) return '0';
  if (Math.abs(millicores) < 1000) {
    const m = digits(millicores < 10 ? millicores : Math.round(millicores));
    return long ? `${m} millicores` : `${m} m`;
  }
  const cores = digits(millicores / 1000);
  return `${cores} ${cores === '1' ? 'core' : 'cores'}`;
}

/** Bytes as "512 MiB", "1.5 GiB", "0 B". */
export function formatBytesShort(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${digits(value)} ${BYTE_UNITS[unit]}`;
}

/** Bytes per second as "12.5 KiB/s". */
export function formatRate(bytesPerSecond: number): string {
  return `${formatBytesShort(bytesPerSecond)}/s`;
}

export type MetricUnit = 'cpu' | 'bytes' | 'rate';

export function formatMetric(value: number, unit: MetricUnit, long = false): string {
  if (unit === 'cpu') return formatCpu(value, long);
  return unit === 'rate' ? formatRate(value) : formatBytesShort(value);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A sample's time for the tooltip: "14:05:30" today, "Tue 3, 14:05" on another day (viewer's zone). */
export function formatSampleTime(t: number, now: number = Date.now()): string {
  const d = new Date(t);
  const n = new Date(now);
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (d.toDateString() === n.toDateString()) return `${time}:${pad(d.getSeconds())}`;
  const day = d.toLocaleDateString('en-GB', { weekday: 'short', day: 'numeric', month: 'short' });
  return `${day}, ${time}`;
}

/** "12 s ago", "4 min ago", "2 h ago" — for the stale notice. */
export function formatAgo(t: number, now: number = Date.now()): string {
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s} s ago`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.round(m / 60);
  return h < 48 ? `${h} h ago` : `${Math.round(h / 24)} days ago`;
}
