// Pure helpers of the VM page's Events tab and guest-info block: merging a pushed event into the list, relative
// times, and filesystem usage. The shapes are the server's (import type only).
import type { GuestInfo, VmEvent, VmEventType } from '@/server/schemas/vm-observe';

/** The server's bound on the events list; a merged list keeps it too. */
export const EVENT_ROWS = 200;

const newestFirst = (a: VmEvent, b: VmEvent) => Date.parse(b.time) - Date.parse(a.time);

/**
 * The list with one pushed event put in: a repeat of an event already shown (same id, higher count) replaces it,
 * a new one is added; newest first, bounded. An event of another type than the filter is left out.
 */
export function mergeEvent(list: readonly VmEvent[], event: VmEvent, filter?: VmEventType): VmEvent[] {
  if (filter && event.type !== filter) return [...list];
  const rest = list.filter((e) => e.id !== event.id);
  return [event, ...rest].sort(newestFirst).slice(0, EVENT_ROWS);
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 days ago" (a time in the future reads "just now"). */
export function relativeTime(iso: string, now: number = Date.now()): string {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return '—';
  const s = Math.floor((now - t) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ago`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} days ago`;
}

/** The absolute time for a tooltip, in the viewer's locale. */
export function absoluteTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Used share of a filesystem, 0..100 (0 for an empty or unknown size). */
export function usagePercent(fs: Pick<GuestInfo['filesystems'][number], 'usedBytes' | 'totalBytes'>): number {
  if (!(fs.totalBytes > 0)) return 0;
  return Math.min(100, Math.max(0, (fs.usedBytes / fs.totalBytes) * 100));
}

/** Which colour a usage bar gets: a nearly full filesystem is worth noticing. */
export function usageLevel(percent: number): 'ok' | 'warn' | 'full' {
  return percent >= 90 ? 'full' : percent >= 75 ? 'warn' : 'ok';
}

/** `UTC+01:00` for an offset in seconds east of UTC. */
export function formatOffset(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const abs = Math.abs(Math.round(seconds / 60));
  return `UTC${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
