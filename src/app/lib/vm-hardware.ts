// Pure rules for the Hardware and Options tabs: a server Control as a button state, which pending change belongs to
// which row, the boot order editor's moves, and the scale dialog's wording (live or at a restart).
import type { ActionState } from './status';

/** `{allowed, reason}` as the server's hardware view gives it for every control. */
export interface Control {
  allowed: boolean;
  reason: string;
}

export interface PendingChange {
  field: string;
  current: string;
  pending: string;
}

export function controlState(c: Control | undefined): ActionState {
  if (!c) return { enabled: false, reason: 'loading…' };
  return c.allowed ? { enabled: true, reason: '' } : { enabled: false, reason: c.reason || 'not possible now' };
}

/** The pending change of one field (`cpu`, `memory`, `firmware`, `bootOrder`, `disk <name>`, `nic <name>`). */
export function pendingFor(pending: readonly PendingChange[], field: string): PendingChange | undefined {
  return pending.find((p) => p.field === field);
}

/** Pending device changes whose device is not listed (e.g. a NIC removed from the spec but still in the guest). */
export function orphanPending(
  pending: readonly PendingChange[],
  kind: 'disk' | 'nic',
  listed: readonly string[],
): PendingChange[] {
  const names = new Set(listed);
  return pending.filter((p) => p.field.startsWith(`${kind} `) && !names.has(p.field.slice(kind.length + 1)));
}

/** One line for a pending change: "4 → 6 at the next restart". */
export function pendingText(p: PendingChange): string {
  if (p.pending === 'added') return 'added: appears in the guest at the next restart';
  if (p.pending === 'removed') return 'removed: leaves the guest at the next restart';
  return `${p.current || '—'} → ${p.pending || '—'} at the next restart`;
}

/** Moves the item at `index` by `delta` places (clamped); a new array. */
export function move<T>(items: readonly T[], index: number, delta: number): T[] {
  const to = Math.min(items.length - 1, Math.max(0, index + delta));
  const out = [...items];
  if (index < 0 || index >= items.length || to === index) return out;
  const [item] = out.splice(index, 1);
  out.splice(to, 0, item as T);
  return out;
}

/**
 * The boot order editor's starting list: the devices that have a boot order first (in it), then the others in
 * their listed order. `enabled` are the ones in the order.
 */
export function bootList(order: readonly string[], devices: readonly string[]): { name: string; enabled: boolean }[] {
  const known = new Set(devices);
  const first = order.filter((n) => known.has(n));
  const rest = devices.filter((n) => !first.includes(n));
  return [...first.map((name) => ({ name, enabled: true })), ...rest.map((name) => ({ name, enabled: false }))];
}

export function sameOrder(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** What the scale dialog says will happen: live hot-plug, or a restart (or the next start of a stopped VM). */
export function scaleMode(running: boolean, liveScale: Control | undefined): { live: boolean; text: string } {
  if (!running) return { live: false, text: 'The VM is stopped: the new size applies at its next start.' };
  if (liveScale?.allowed) return { live: true, text: 'Applied live (hot-plug) while the VM runs.' };
  const why = liveScale?.reason ? ` (${liveScale.reason})` : '';
  return { live: false, text: `Needs a restart: the VM is stopped, changed and started again${why}.` };
}

/** Run strategy as the Options tab shows it. */
export const RUN_STRATEGY_TEXT: Record<string, string> = {
  Always: 'Always — start on boot, restart when it stops',
  RerunOnFailure: 'RerunOnFailure — start on boot, restart after a failure',
  Once: 'Once — run once, never restart',
  Manual: 'Manual — started and stopped by hand',
  Halted: 'Halted — stopped; start on boot once started (KubeVirt starts it as Always)',
};

/** Run strategies that make KubeVirt start a stopped VM at once (the server refuses them for a stopped VM). */
const STARTING = new Set(['Always', 'RerunOnFailure', 'Once']);

/** Why a run strategy cannot be chosen in the VM's state (a power action, not an option), or null. */
export function runStrategyProblem(strategy: string, current: string, running: boolean): string | null {
  if (strategy === current) return null;
  if (!running && STARTING.has(strategy)) return 'would start the VM now: start it first';
  if (running && strategy === 'Halted') return 'would stop the VM now: stop it instead';
  return null;
}
