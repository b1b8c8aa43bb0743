// The browser's copy of the fleet, fed only by the live subscription (snapshot on connect, then changes).
// Rows live in Maps mutated in place and a version counter tells React what changed: at 5,000 VMs copying an
// immutable Map per change would cost more than rendering. Notifications are coalesced to one per frame.

export interface Keyed {
  name: string;
  namespace?: string;
  /** The kube context (cluster) of the row; rows of the default cluster keep their plain keys. */
  context?: string;
}

export function vmKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

export type Listener = () => void;

/**
 * A row's key: `namespace/name` (or `name`) on the default cluster, so every page that looks a row up by its path
 * finds it; rows of the other clusters Corral serves are prefixed with their context (`lab//tailvm/web`), since
 * the same namespace/name (and node names) often exist in several clusters.
 */
export function rowKey(row: Keyed, defaultContext: string): string {
  const plain = row.namespace === undefined ? row.name : vmKey(row.namespace, row.name);
  // '' = one cluster (the snapshot lists no clusters): every key is plain.
  return defaultContext && row.context && row.context !== defaultContext ? `${row.context}//${plain}` : plain;
}

export class KeyedCollection<T extends Keyed> {
  readonly byKey = new Map<string, T>();
  private cachedList: T[] | null = null;

  constructor(private readonly keyFn: (row: Keyed) => string = KeyedCollection.keyOf) {}

  static keyOf(row: Keyed): string {
    return row.namespace === undefined ? row.name : vmKey(row.namespace, row.name);
  }

  replaceAll(rows: readonly T[]): void {
    this.byKey.clear();
    for (const row of rows) this.byKey.set(this.keyFn(row), row);
    this.cachedList = null;
  }

  upsert(row: T): void {
    this.byKey.set(this.keyFn(row), row);
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
