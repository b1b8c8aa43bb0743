// The browser's copy of the fleet, fed only by the live subscription (snapshot on connect, then changes).
// Rows live in Maps mutated in place and a version counter tells React what changed: at 5,000 VMs copying an
// immutable Map per change would cost more than rendering. Notifications are coalesced to one per frame.

export interface Keyed {
  name: string;
  namespace?: string;
}

export function vmKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export type Listener = () => void;

export class KeyedCollection<T extends Keyed> {
  readonly byKey = new Map<string, T>();
  private cachedList: T[] | null = null;

  static keyOf(row: Keyed): string {
    return row.namespace === undefined ? row.name : vmKey(row.namespace, row.name);
  }

  replaceAll(rows: readonly T[]): void {
    this.byKey.clear();
    for (const row of rows) this.byKey.set(KeyedCollection.keyOf(row), row);
    this.cachedList = null;
  }

  upsert(row: T): void {
    this.byKey.set(KeyedCollection.keyOf(row), row);
    this.cachedList = null;
  }

  remove(key: string): void {
    if (this.byKey.delete(key)) this.cachedList = null;
  }

  get(key: string): T | undefined {
    return this.byKey.get(key);
  }

  /** Stable array until the next change, so `useMemo` dependants do not recompute needlessly. */
  list(): T[] {
    this.cachedList ??= [...this.byKey.values()];
    return this.cachedList;
  }

  get size(): number {
    return this.byKey.size;
  }
}

/** Coalesces many synchronous changes into one notification on the next frame (or microtask off-DOM). */
export class ChangeNotifier {
  private listeners = new Set<Listener>();
  private scheduled = false;
  version = 0;

  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  changed(): void {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    const flush = () => {
      this.scheduled = false;
      for (const l of this.listeners) l();
    };
    if (typeof requestAnimationFrame === 'function' && typeof document !== 'undefined' && !document.hidden)
      requestAnimationFrame(flush);
    else queueMicrotask(flush);
  }
}
