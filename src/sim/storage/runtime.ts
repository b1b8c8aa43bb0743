/**
 * The plumbing every storage controller shares: one store subscription dispatching by resource key, a deduplicated
 * work queue, and named one-shot timers on the SimClock.
 *
 * Store listeners run synchronously inside the write that triggered them, so a controller that wrote from the
 * listener would interleave its own events with the caller's. All reconciles therefore run from the queue, one
 * clock tick later, and always re-read the object: they are level-triggered and safe to repeat.
 */
import type { SimContext } from '../module.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, ResourceKey, StoreEvent } from '../store/types.js';

export type EventHandler = (event: StoreEvent) => void;

/** Read access that tolerates kinds the apiserver does not serve (they read as empty). */
export interface StoreView {
  get(key: ResourceKey, namespace: string | undefined, name: string): KObject | undefined;
  list(key: ResourceKey, namespace?: string): KObject[];
}

export function storeView(store: ObjectStore): StoreView {
  const serves = (key: ResourceKey) => store.allTypes().some((t) => `${t.group}/${t.plural}` === key);
  return {
    get: (key, namespace, name) => (serves(key) ? store.get(key, namespace, name) : undefined),
    list: (key, namespace) => (serves(key) ? store.list(key, namespace) : []),
  };
}

export class Runtime implements StoreView {
  readonly store: ObjectStore;
  private readonly handlers = new Map<ResourceKey, EventHandler[]>();
  private readonly pending = new Map<string, () => void>();
  private readonly timers = new Map<string, () => void>();
  private flushScheduled = false;
  private unsubscribe: (() => void) | undefined;
  private stopped = false;

  constructor(readonly ctx: SimContext) {
    this.store = ctx.store;
  }

  /** Whether the apiserver serves this kind (a controller for an unserved kind stays idle). */
  serves(key: ResourceKey): boolean {
    return this.store.allTypes().some((t) => `${t.group}/${t.plural}` === key);
  }

  on(key: ResourceKey, handler: EventHandler): void {
    const list = this.handlers.get(key) ?? [];
    list.push(handler);
    this.handlers.set(key, list);
  }

  start(): void {
    this.unsubscribe = this.store.subscribe((event) => {
      for (const handler of this.handlers.get(event.key) ?? []) handler(event);
    });
  }

  /** Objects of a kind, or none when the kind is not served. */
  list(key: ResourceKey, namespace?: string): KObject[] {
    return this.serves(key) ? this.store.list(key, namespace) : [];
  }

  get(key: ResourceKey, namespace: string | undefined, name: string): KObject | undefined {
    return this.serves(key) ? this.store.get(key, namespace, name) : undefined;
  }

  /** Run `work` on the next tick; a second enqueue with the same id before then is a no-op. */
  enqueue(id: string, work: () => void): void {
    if (this.stopped || this.pending.has(id)) return;
    this.pending.set(id, work);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    this.ctx.clock.after(0, () => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    const batch = [...this.pending.values()];
    this.pending.clear();
    for (const work of batch) {
      try {
        work();
      } catch (err) {
        // One broken object must not stall every other reconcile in the batch.
        console.error('[sim/storage] reconcile failed:', err);
      }
    }
  }

  /** A one-shot timer named `id` (in real-cluster ms); while one with that id is pending, later calls are ignored. */
  after(id: string, ms: number, work: () => void): void {
    if (this.stopped || this.timers.has(id)) return;
    const cancel = this.ctx.clock.after(ms, () => {
      this.timers.delete(id);
      work();
    });
    this.timers.set(id, cancel);
  }

  hasTimer(id: string): boolean {
    return this.timers.has(id);
  }

  cancel(id: string): void {
    this.timers.get(id)?.();
    this.timers.delete(id);
  }

  /** Cancel every timer whose id starts with `prefix` (e.g. all steps of a deleted object). */
  cancelAll(prefix: string): void {
    for (const id of [...this.timers.keys()]) if (id.startsWith(prefix)) this.cancel(id);
  }

  /** Random value in [min, max] real-cluster ms. */
  between(min: number, max: number): number {
    return this.ctx.clock.between(min, max);
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
    this.pending.clear();
  }
}

export function objId(kind: string, obj: KObject): string {
  return `${kind}:${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}
