/** Small typed accessors over free-form KObjects, and the condition bookkeeping every controller shares. */
import { nowTimestamp } from '../store/object-store.js';
import type { KObject, OwnerReference } from '../store/types.js';

export type Json = Record<string, unknown>;

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  lastProbeTime: string | null;
  lastTransitionTime: string | null;
}

/** `obj.a.b.c` as a record, creating the path in a mutable copy. */
export function ensure(obj: Json, ...path: string[]): Json {
  let cur = obj;
  for (const key of path) {
    const next = cur[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) cur[key] = {};
    cur = cur[key] as Json;
  }
  return cur;
}

/** Read a nested value without creating anything. */
export function dig(obj: unknown, ...path: (string | number)[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

export function digRecord(obj: unknown, ...path: (string | number)[]): Json | undefined {
  const v = dig(obj, ...path);
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined;
}

export function digArray(obj: unknown, ...path: (string | number)[]): Json[] {
  const v = dig(obj, ...path);
  return Array.isArray(v) ? (v.filter((x) => x !== null && typeof x === 'object') as Json[]) : [];
}

export function digString(obj: unknown, ...path: (string | number)[]): string | undefined {
  const v = dig(obj, ...path);
  return typeof v === 'string' ? v : undefined;
}

export function status(obj: KObject): Json {
  return ensure(obj as Json, 'status');
}

export function conditions(obj: KObject | undefined): Condition[] {
  return digArray(obj, 'status', 'conditions') as unknown as Condition[];
}

export function findCondition(obj: KObject | undefined, type: string): Condition | undefined {
  return conditions(obj).find((c) => c.type === type);
}

export function isConditionTrue(obj: KObject | undefined, type: string): boolean {
  return findCondition(obj, type)?.status === 'True';
}

/**
 * Set a condition keeping `lastTransitionTime` when the status did not flip (as Kubernetes controllers do),
 * so a reconcile that changes nothing writes nothing.
 */
export function setCondition(
  obj: KObject,
  next: {
    type: string;
    status: Condition['status'];
    reason?: string;
    message?: string;
    probe?: boolean;
    transition?: boolean;
  },
): void {
  const st = status(obj);
  const list = (Array.isArray(st.conditions) ? st.conditions : []) as Condition[];
  const existing = list.find((c) => c.type === next.type);
  const now = nowTimestamp();
  const keepTransition = existing && existing.status === next.status;
  const condition: Condition = {
    type: next.type,
    status: next.status,
    lastProbeTime: next.probe ? (existing?.lastProbeTime ?? now) : null,
    lastTransitionTime: next.transition === false ? null : keepTransition ? existing.lastTransitionTime : now,
    ...(next.reason ? { reason: next.reason } : {}),
    ...(next.message ? { message: next.message } : {}),
  };
  st.conditions = existing ? list.map((c) => (c.type === next.type ? condition : c)) : [...list, condition];
}

export function removeCondition(obj: KObject, type: string): void {
  const st = status(obj);
  if (!Array.isArray(st.conditions)) return;
  st.conditions = (st.conditions as Condition[]).filter((c) => c.type !== type);
}

export function ownerRef(owner: KObject, opts: { controller?: boolean } = {}): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: opts.controller ?? true,
    blockOwnerDeletion: true,
  };
}

export function isControlledBy(obj: KObject, owner: KObject): boolean {
  return (obj.metadata.ownerReferences ?? []).some((r) => r.uid === owner.metadata.uid && r.controller);
}

export function labels(obj: KObject | undefined): Record<string, string> {
  return obj?.metadata.labels ?? {};
}

export function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A stable 32-bit hash (FNV-1a): per-object randomness that is the same on every run. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** Deterministic PRNG (mulberry32) for fleets and metrics, so the same seed gives the same cluster. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A MAC in QEMU's locally administered 52:54:00 range derived from a name. */
export function macFor(name: string): string {
  const h = hash32(name);
  const bytes = [(h >>> 16) & 0xff, (h >>> 8) & 0xff, h & 0xff];
  return ['52', '54', '00', ...bytes.map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

export function randomSuffix(length = 5): string {
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  let s = '';
  for (let i = 0; i < length; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
  return s;
}

/** Whether the apiserver serves a kind (storage kinds come from another module and may be absent in unit tests). */
export function serves(store: { type(key: string): unknown }, key: string): boolean {
  try {
    store.type(key);
    return true;
  } catch {
    return false;
  }
}
