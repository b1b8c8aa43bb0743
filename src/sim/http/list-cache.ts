/**
 * Encoded list bodies, reused until the listed type changes — the role the real apiserver's watch cache plays for
 * lists. The items part of a list (`{…},{…}`) is cached as a Buffer per (type, namespace, selectors); the head with
 * the current resourceVersion is written fresh each time, so a cached body is never stale in its RV.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { ResourceKey } from '../store/types.js';

const MAX_ENTRIES = 32;

interface CachedItems {
  /** The type's change counter when this was built. */
  version: number;
  items: Buffer;
}

export class ListCache {
  private readonly versions = new Map<ResourceKey, number>();
  private readonly entries = new Map<string, CachedItems>();
  private readonly unsubscribe: () => void;

  constructor(store: ObjectStore) {
    // Synchronous store: this runs inside every write, before any later list can be served.
    this.unsubscribe = store.subscribe((ev) => this.versions.set(ev.key, (this.versions.get(ev.key) ?? 0) + 1));
  }

  /** The items JSON for `cacheKey` of type `key`, built with `build` when missing or outdated. */
  items(key: ResourceKey, cacheKey: string, build: () => string): Buffer {
    const version = this.versions.get(key) ?? 0;
    const id = `${key}\u0000${cacheKey}`;
    const hit = this.entries.get(id);
    if (hit && hit.version === version) {
      // Refresh its position so the least recently used entry is the one evicted.
      this.entries.delete(id);
      this.entries.set(id, hit);
      return hit.items;
    }
    const items = Buffer.from(build());
    this.entries.delete(id);
    this.entries.set(id, { version, items });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return items;
  }

  close(): void {
    this.unsubscribe();
    this.entries.clear();
  }
}
