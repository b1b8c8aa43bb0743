/**
 * The embedded cluster's etcd: every object of every kind, one global resourceVersion counter, and an event log
 * per resource type so watches can resume from a resourceVersion. Pure in-memory, synchronous, no HTTP.
 *
 * Returned objects are shared and must be treated as read-only; writers go through create/replace/mutate, which
 * work on copies. Each entry caches its JSON so large lists serialise without re-stringifying every object.
 */
import { randomUUID } from 'node:crypto';
import { alreadyExists, ApiError, conflict, invalid, notFound, STALE_OBJECT } from './errors.js';
import type { KObject, NewObject, ResourceKey, ResourceType, StoreEvent } from './types.js';
import { resourceKey } from './types.js';

const EVENT_LOG_SIZE = 2000;
const GENERATE_NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface Entry {
  object: KObject;
  json: string | undefined;
}

export interface EventLog {
  events: StoreEvent[];
  /** Lowest resourceVersion a watch may resume from without 410 Expired. */
  oldestResumable: number;
}

export type StoreListener = (event: StoreEvent) => void;

export interface WriteOptions {
  dryRun?: boolean;
}

export interface ReplaceOptions extends WriteOptions {
  /** When set, the stored resourceVersion must equal it (optimistic concurrency) or 409 Conflict. */
  expectedResourceVersion?: string;
}

export function nowTimestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < 5; i++) s += GENERATE_NAME_ALPHABET[Math.floor(Math.random() * GENERATE_NAME_ALPHABET.length)];
  return s;
}

/** Everything outside metadata (and outside status when status is a subresource) — what `generation` tracks. */
function specFingerprint(obj: KObject, hasStatus: boolean): string {
  const { metadata: _m, status, ...rest } = obj;
  return JSON.stringify(hasStatus ? rest : { ...rest, status });
}

export class ObjectStore {
  private readonly types = new Map<ResourceKey, ResourceType>();
  private readonly byGroupKind = new Map<string, ResourceType>();
  private readonly objects = new Map<ResourceKey, Map<string, Entry>>();
  private readonly logs = new Map<ResourceKey, EventLog>();
  private readonly listeners = new Set<StoreListener>();
  /** Per type, the `namespace/name` keys in order; dropped whenever an object is added or removed. */
  private readonly sortedIds = new Map<ResourceKey, string[]>();
  /** Seeded from the wall clock so clients that survive a restart never hold a resourceVersion from the future. */
  private revision = Date.now() * 1000;

  register(type: ResourceType): void {
    const key = resourceKey(type.group, type.plural);
    this.types.set(key, type);
    this.byGroupKind.set(`${type.group}/${type.kind}`, type);
    if (!this.objects.has(key)) this.objects.set(key, new Map());
    if (!this.logs.has(key)) this.logs.set(key, { events: [], oldestResumable: this.revision });
  }

  allTypes(): ResourceType[] {
    return [...this.types.values()];
  }

  type(key: ResourceKey): ResourceType {
    const t = this.types.get(key);
    if (!t) throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${key})`);
    return t;
  }

  typeOf(group: string, kind: string): ResourceType | undefined {
    return this.byGroupKind.get(`${group}/${kind}`);
  }

  currentRevision(): number {
    return this.revision;
  }

  get(key: ResourceKey, namespace: string | undefined, name: string): KObject | undefined {
    return this.table(key).get(objectKey(namespace, name))?.object;
  }

  mustGet(key: ResourceKey, namespace: string | undefined, name: string): KObject {
    const obj = this.get(key, namespace, name);
    if (!obj) {
      const t = this.type(key);
      throw notFound(t.group, t.plural, name);
    }
    return obj;
  }

  /** Objects of a type, optionally in one namespace, in name order as a real apiserver returns them. */
  list(key: ResourceKey, namespace?: string): KObject[] {
    return this.entries(key, namespace).map((e) => e.object);
  }

  /** The same objects with their cached JSON text, for serialising big lists cheaply. */
  listJson(key: ResourceKey, namespace?: string): { object: KObject; json: string }[] {
    return this.entries(key, namespace).map((e) => {
      e.json ??= JSON.stringify(e.object);
      return { object: e.object, json: e.json };
    });
  }

  private entries(key: ResourceKey, namespace?: string): Entry[] {
    const table = this.table(key);
    // Name order is cached per type and only recomputed when an object is added or removed, so listing 10,000
    // objects after a status update does not sort again.
    let ids = this.sortedIds.get(key);
    if (!ids) {
      ids = [...table.keys()].sort();
      this.sortedIds.set(key, ids);
    }
    const out: Entry[] = [];
    for (const id of ids) {
      const entry = table.get(id)!;
      if (namespace === undefined || entry.object.metadata.namespace === namespace) out.push(entry);
    }
    return out;
  }

  create(key: ResourceKey, input: NewObject, options: WriteOptions = {}): KObject {
    const type = this.type(key);
    const obj = structuredClone(input) as KObject;
    const meta = obj.metadata;
    if (meta.resourceVersion) {
      throw new ApiError(500, 'InternalError', 'resourceVersion should not be set on objects to be created');
    }
    if (!meta.name) {
      if (!meta.generateName) {
        throw invalid(type.kind, type.group, '', [
          {
            field: 'metadata.name',
            message: 'Required value: name or generateName is required',
            reason: 'FieldValueRequired',
          },
        ]);
      }
      do meta.name = meta.generateName + randomSuffix();
      while (this.get(key, meta.namespace, meta.name));
    }
    this.validateName(type, meta.name);
    if (type.namespaced && !meta.namespace)
      throw new ApiError(400, 'BadRequest', 'the namespace of the object is required');
    if (!type.namespaced) delete meta.namespace;
    if (this.get(key, meta.namespace, meta.name)) throw alreadyExists(type.group, type.plural, meta.name);

    meta.uid = randomUUID();
    meta.creationTimestamp = nowTimestamp();
    meta.generation = 1;
    delete meta.deletionTimestamp;
    if (type.defaultFinalizers?.length) {
      meta.finalizers = [...new Set([...(meta.finalizers ?? []), ...type.defaultFinalizers])];
    }
    if (options.dryRun) {
      meta.resourceVersion = String(this.revision);
      return obj;
    }
    return this.write(key, obj, 'ADDED');
  }

  /** Full replacement (PUT semantics). Identity fields are kept from the stored object. */
  replace(key: ResourceKey, input: KObject, options: ReplaceOptions = {}): KObject {
    const type = this.type(key);
    const current = this.mustGet(key, input.metadata.namespace, input.metadata.name);
    if (
      options.expectedResourceVersion !== undefined &&
      options.expectedResourceVersion !== current.metadata.resourceVersion
    ) {
      throw conflict(type.group, type.plural, current.metadata.name, STALE_OBJECT);
    }
    const obj = structuredClone(input);
    obj.apiVersion = current.apiVersion;
    obj.kind = current.kind;
    obj.metadata.uid = current.metadata.uid;
    obj.metadata.creationTimestamp = current.metadata.creationTimestamp;
    obj.metadata.name = current.metadata.name;
    if (type.namespaced) obj.metadata.namespace = current.metadata.namespace;
    else delete obj.metadata.namespace;
    if (current.metadata.deletionTimestamp) {
      obj.metadata.deletionTimestamp = current.metadata.deletionTimestamp;
      obj.metadata.deletionGracePeriodSeconds = current.metadata.deletionGracePeriodSeconds;
      const before = new Set(current.metadata.finalizers ?? []);
      const added = (obj.metadata.finalizers ?? []).filter((f) => !before.has(f));
      if (added.length) {
        throw invalid(type.kind, type.group, obj.metadata.name, [
          {
            field: 'metadata.finalizers',
            message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
            reason: 'FieldValueForbidden',
          },
        ]);
      }
    } else {
      delete obj.metadata.deletionTimestamp;
    }
    const generation = current.metadata.generation ?? 1;
    obj.metadata.generation =
      specFingerprint(obj, type.hasStatus) === specFingerprint(current, type.hasStatus) ? generation : generation + 1;

    if (obj.metadata.deletionTimestamp && !obj.metadata.finalizers?.length) {
      if (options.dryRun) return obj;
      return this.remove(key, obj);
    }
    if (options.dryRun) {
      obj.metadata.resourceVersion = current.metadata.resourceVersion;
      return obj;
    }
    return this.write(key, obj, 'MODIFIED');
  }

  /**
   * Read-modify-write for controllers: `change` edits a private copy. Returns the stored result, or undefined when
   * the object does not exist. Returning `false` from `change` skips the write (nothing changed).
   */
  mutate(
    key: ResourceKey,
    namespace: string | undefined,
    name: string,
    change: (obj: KObject) => void | false,
  ): KObject | undefined {
    const current = this.get(key, namespace, name);
    if (!current) return undefined;
    const copy = structuredClone(current);
    if (change(copy) === false) return current;
    copy.metadata.resourceVersion = current.metadata.resourceVersion;
    return this.replace(key, copy);
  }

  /**
   * DELETE semantics for one object: without finalizers it goes now; with finalizers it gets a deletionTimestamp
   * and goes when the last finalizer is removed. Propagation (foreground/orphan) adds the matching finalizer;
   * the garbage collector does the rest. Returns the object as it was last seen.
   */
  delete(
    key: ResourceKey,
    namespace: string | undefined,
    name: string,
    options: WriteOptions & {
      propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
      preconditions?: { uid?: string; resourceVersion?: string };
      /** Finalizers the deleter adds itself (the apiserver's namespace deletion adds `kubernetes`). */
      extraFinalizers?: string[];
    } = {},
  ): { object: KObject; gone: boolean } {
    const type = this.type(key);
    const current = this.mustGet(key, namespace, name);
    const pre = options.preconditions;
    if (pre?.uid && pre.uid !== current.metadata.uid) {
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${current.metadata.uid}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== current.metadata.resourceVersion) {
      throw conflict(
        type.group,
        type.plural,
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${current.metadata.resourceVersion}`,
      );
    }
    const extraFinalizer =
      options.propagationPolicy === 'Foreground'
        ? 'foregroundDeletion'
        : options.propagationPolicy === 'Orphan'
          ? 'orphan'
          : undefined;
    const finalizers = [...(current.metadata.finalizers ?? [])];
    if (!current.metadata.deletionTimestamp) {
      for (const f of [...(extraFinalizer ? [extraFinalizer] : []), ...(options.extraFinalizers ?? [])]) {
        if (!finalizers.includes(f)) finalizers.push(f);
      }
    }

    if (finalizers.length === 0) {
      if (options.dryRun) return { object: current, gone: true };
      return { object: this.remove(key, current), gone: true };
    }
    if (current.metadata.deletionTimestamp) return { object: current, gone: false };
    const copy = structuredClone(current);
    copy.metadata.finalizers = finalizers;
    copy.metadata.deletionTimestamp = nowTimestamp();
    copy.metadata.deletionGracePeriodSeconds = 0;
    if (options.dryRun) return { object: copy, gone: false };
    return { object: this.write(key, copy, 'MODIFIED'), gone: false };
  }

  /** Drop one finalizer (what a controller does when its cleanup is done); removes the object if it was the last. */
  removeFinalizer(
    key: ResourceKey,
    namespace: string | undefined,
    name: string,
    finalizer: string,
  ): KObject | undefined {
    return this.mutate(key, namespace, name, (obj) => {
      const list = obj.metadata.finalizers ?? [];
      if (!list.includes(finalizer)) return false;
      obj.metadata.finalizers = list.filter((f) => f !== finalizer);
    });
  }

  subscribe(listener: StoreListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events of one type with rv > since, or 'expired' when `since` is older than the retained log. */
  eventsSince(key: ResourceKey, since: number): StoreEvent[] | 'expired' {
    const log = this.logs.get(key);
    if (!log) return [];
    if (since < log.oldestResumable) return 'expired';
    const out: StoreEvent[] = [];
    for (let i = log.events.length - 1; i >= 0; i--) {
      const ev = log.events[i]!;
      if (ev.rv <= since) break;
      out.push(ev);
    }
    return out.reverse();
  }

  oldestResumable(key: ResourceKey): number {
    return this.logs.get(key)?.oldestResumable ?? this.revision;
  }

  /** Forget the event log (tests use it to force 410 Expired on resume). */
  compact(key?: ResourceKey): void {
    for (const [k, log] of this.logs) {
      if (key && k !== key) continue;
      log.events = [];
      log.oldestResumable = this.revision;
    }
  }

  private table(key: ResourceKey): Map<string, Entry> {
    const table = this.objects.get(key);
    if (!table) throw new ApiError(404, 'NotFound', `the server could not find the requested resource (${key})`);
    return table;
  }

  private validateName(type: ResourceType, name: string): void {
    const needsLabel = type.kind === 'Namespace' || type.kind === 'Service';
    const ok = needsLabel ? DNS_LABEL.test(name) && name.length <= 63 : DNS_SUBDOMAIN.test(name) && name.length <= 253;
    if (!ok) {
      const rule = needsLabel
        ? "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
      throw invalid(type.kind, type.group, name, [
        { field: 'metadata.name', message: `Invalid value: "${name}": ${rule}` },
      ]);
    }
  }

  private write(key: ResourceKey, obj: KObject, eventType: 'ADDED' | 'MODIFIED'): KObject {
    const rv = ++this.revision;
    obj.metadata.resourceVersion = String(rv);
    const table = this.table(key);
    const id = objectKey(obj.metadata.namespace, obj.metadata.name);
    const previous = table.get(id)?.object;
    if (!previous) this.sortedIds.delete(key);
    table.set(id, { object: obj, json: undefined });
    this.emit(
      previous ? { type: eventType, key, object: obj, rv, previous } : { type: eventType, key, object: obj, rv },
    );
    return obj;
  }

  private remove(key: ResourceKey, last: KObject): KObject {
    const rv = ++this.revision;
    const obj =
      last.metadata.resourceVersion === String(rv)
        ? last
        : { ...last, metadata: { ...last.metadata, resourceVersion: String(rv) } };
    const table = this.table(key);
    const id = objectKey(obj.metadata.namespace, obj.metadata.name);
    const previous = table.get(id)?.object ?? last;
    table.delete(id);
    this.sortedIds.delete(key);
    this.emit({ type: 'DELETED', key, object: obj, rv, previous });
    return obj;
  }

  private emit(event: StoreEvent): void {
    const log = this.logs.get(event.key)!;
    log.events.push(event);
    if (log.events.length > EVENT_LOG_SIZE) {
      const dropped = log.events.splice(0, log.events.length - EVENT_LOG_SIZE);
      log.oldestResumable = dropped[dropped.length - 1]!.rv;
    }
    for (const listener of this.listeners) {
      try {
        listener(event);
      } catch (err) {
        // A failing controller must not break the write that triggered it.
        console.error('[sim] store listener failed:', err);
      }
    }
  }
}
