// Cloud-Init tab helpers: how a setting reads in the table, what is pending for a row, and the edit forms' parsing.
import type { z } from 'zod';
import type { CloudInitOutput, CloudInitSetInput, IpConfigDto } from '@/server/schemas/vm-cloudinit';

export type CloudInitView = z.infer<typeof CloudInitOutput>;
export type IpConfig = z.infer<typeof IpConfigDto>;
export type PendingItem = CloudInitView['pending'][number];
/** A change the edit dialogs send (`cloudInit.set` without the VM's name). */
export type SetInput = Omit<z.input<typeof CloudInitSetInput>, 'namespace' | 'name' | 'context'>;

/** `ip=10.0.0.5/24,gw=10.0.0.1` as Proxmox prints an ipconfig; '' when nothing is set. */
export function ipConfigText(c: Omit<IpConfig, 'nic'> | undefined): string {
  if (!c) return '';
  return (['ip', 'gw', 'ip6', 'gw6'] as const)
    .filter((k) => c[k])
    .map((k) => `${k}=${c[k]}`)
    .join(',');
}

/** The pending change of a table row (the Proxmox key names the row), if any. */
export function pendingOf(view: CloudInitView, key: string): PendingItem | undefined {
  return view.pending.find((p) => p.key === key);
}

/** A Proxmox-form value for the table: `sshkeys` is URL-encoded there, one key per line. */
export function readable(key: string, value: string): string {
  if (key !== 'sshkeys') return value;
  try {
    return lines(decodeURIComponent(value)).map(keySummary).join(', ');
  } catch {
    return value;
  }
}

/** What the pending note says: the new value, or that the setting goes. */
export function pendingLabel(p: PendingItem, secret = false): string {
  if (p.delete) return 'removed';
  return secret ? 'changed' : readable(p.key, p.pending ?? '');
}

/** Lines of a textarea (keys, one per line), trimmed, blank lines dropped. */
export function lines(text: string): string[] {
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

/** Space/comma separated words (DNS servers, search domains). */
export function words(text: string): string[] {
  return text.split(/[\s,]+/).filter(Boolean);
}

/** A key shortened for the table: type, the start of the blob, the comment. */
export function keySummary(key: string): string {
  const [type = '', blob = '', ...comment] = key.split(/\s+/);
  return `${type} ${blob.slice(0, 12)}…${comment.length ? ` ${comment.join(' ')}` : ''}`;
}

/** A NIC's index as Proxmox numbers it: `net3` is 3, other names their position. */
export function nicIndex(name: string, position: number): number {
  const m = /^net(\d+)$/.exec(name);
  return m ? Number(m[1]) : position;
}
