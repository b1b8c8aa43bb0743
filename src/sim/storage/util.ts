/**
 * Small helpers shared by the storage controllers: quantities, status conditions, owner references and safe
 * accessors for the free-form JSON objects the store holds.
 */
import { nowTimestamp } from '../store/object-store.js';
import type { KObject, OwnerReference } from '../store/types.js';

const BINARY: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };
const DECIMAL: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18 };
const QUANTITY = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$/;

/** Bytes of a storage quantity (`10Gi`, `500M`, `1073741824`); undefined when it is not a valid quantity. */
export function storageBytes(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const match = QUANTITY.exec(value.trim());
  if (!match) return undefined;
  const unit = match[2] ?? '';
  return Math.round(Number(match[1]) * (BINARY[unit] ?? DECIMAL[unit] ?? 1));
}

/** Plain JSON object view of an unknown value (never undefined), so nested reads stay type-safe. */
export function rec(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

export function arr(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

export function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

export function spec(obj: KObject): Record<string, unknown> {
  return rec(obj.spec);
}

export function status(obj: KObject): Record<string, unknown> {
  return rec(obj.status);
}

/** The status object of a private copy, created when missing (for use inside `store.mutate`). */
export function statusOf(obj: KObject): Record<string, unknown> {
  if (obj.status === null || typeof obj.status !== 'object' || Array.isArray(obj.status)) obj.status = {};
  return obj.status as Record<string, unknown>;
}

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastProbeTime?: string | null;
  lastHeartbeatTime?: string;
}

/**
 * Set one condition in `status.conditions`, keeping lastTransitionTime when the status did not flip (what real
 * controllers do, and what clients use to tell "since when").
 */
export function setCondition(
  st: Record<string, unknown>,
  condition: Condition,
  extra: { heartbeat?: boolean; probe?: boolean } = {},
): void {
  const list = arr(st.conditions).map((c) => rec(c)) as unknown as Condition[];
  const now = nowTimestamp();
  const existing = list.find((c) => c.type === condition.type);
  const next: Condition = { ...condition };
  next.lastTransitionTime =
    existing && existing.status === condition.status ? (existing.lastTransitionTime ?? now) : now;
  // An unchanged condition keeps its heartbeat too, so a repeated reconcile writes nothing.
  const unchanged =
    existing &&
    existing.status === condition.status &&
    existing.reason === condition.reason &&
    existing.message === condition.message;
  if (extra.heartbeat) next.lastHeartbeatTime = unchanged ? (existing.lastHeartbeatTime ?? now) : now;
  if (extra.probe) next.lastProbeTime = null;
  st.conditions = existing ? list.map((c) => (c.type === condition.type ? next : c)) : [...list, next];
}

export function conditionStatus(obj: KObject, type: string): string | undefined {
  const found = arr(status(obj).conditions).find((c) => rec(c).type === type);
  return found ? str(rec(found).status) : undefined;
}

export function ownerRef(owner: KObject, controller = true): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller,
    blockOwnerDeletion: true,
  };
}

/** `45.20%` as CDI prints progress (`%.2f%%`), and exactly `100.0%` when done. */
export function formatProgress(fraction: number): string {
  if (fraction >= 1) return '100.0%';
  return `${(Math.max(0, fraction) * 100).toFixed(2)}%`;
}

/** `4Gi` when exact in Gi/Mi, else bytes — how a capacity reads back after expansion or restore. */
export function formatStorage(bytes: number): string {
  for (const [unit, size] of [
    ['Ti', 2 ** 40],
    ['Gi', 2 ** 30],
    ['Mi', 2 ** 20],
    ['Ki', 2 ** 10],
  ] as const) {
    if (bytes > 0 && bytes % size === 0) return `${bytes / size}${unit}`;
  }
  return String(bytes);
}

export { nowTimestamp };

/** An RFC 3339 timestamp `ms` simulated-real milliseconds from now (for TTLs and deadlines shown to clients). */
export function timestampIn(ms: number): string {
  return new Date(Date.now() + ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Go-style durations (`5m`, `2h`, `1h30m`, `90s`) in milliseconds; undefined when malformed. */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value !== 'string' || !value) return undefined;
  const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(value); m; m = re.exec(value)) {
    if (m.index !== consumed) return undefined;
    consumed += m[0].length;
    const n = Number(m[1]);
    total += m[2] === 'h' ? n * 3_600_000 : m[2] === 'm' ? n * 60_000 : m[2] === 's' ? n * 1000 : n;
  }
  return consumed === value.length ? total : undefined;
}
