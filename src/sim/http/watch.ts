/**
 * Watch streams (kube-sim-spec §7): newline-delimited JSON events flushed one by one, resume from a
 * resourceVersion through the store's event log, in-stream `ERROR 410 Expired` when the log no longer reaches
 * back, selector transitions as ADDED/DELETED, bookmarks, timeouts. Every open stream is tracked so the fault
 * injector can drop them all and close() can end them.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, StoreEvent } from '../store/types.js';
import { resourceKey } from '../store/types.js';
import type { KindSpec } from '../resources/kinds.js';
import type { Matcher } from './selectors.js';
import { TABLE_CONTENT_TYPE, table, wantsTable } from './table.js';

/** Slow consumers that let this much pile up are cut off, as the apiserver does with its watch channel. */
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

export interface WatchSettings {
  /** How often bookmarks go out when the client allows them. */
  bookmarkIntervalMs: number;
  /** Server-side lifetime of a watch without `timeoutSeconds`: a random value in this range (ms). */
  defaultTimeoutMs: [number, number];
  /**
   * Watch-list (`sendInitialEvents`) served, as with the WatchList feature gate on; false answers such a watch 422
   * like an apiserver without the gate (or older than 1.27). Read per request, so tests can flip it at runtime.
   */
  watchList: () => boolean;
}

export const DEFAULT_WATCH_SETTINGS: WatchSettings = {
  bookmarkIntervalMs: 30_000,
  defaultTimeoutMs: [5 * 60_000, 10 * 60_000],
  watchList: () => true,
};

/** Open watch streams; `closeAll` ends each one cleanly (the client re-watches from its last RV). */
export class WatchRegistry {
  private readonly open = new Set<() => void>();

  add(close: () => void): () => void {
    this.open.add(close);
    return () => this.open.delete(close);
  }

  get size(): number {
    return this.open.size;
  }

  closeAll(): number {
    const closers = [...this.open];
    this.open.clear();
    for (const c of closers) c();
    return closers.length;
  }
}

/** JSON text per stored object: every watcher of the same event reuses one serialisation. */
const jsonCache = new WeakMap<KObject, string>();
function objectJson(obj: KObject): string {
  let json = jsonCache.get(obj);
  if (json === undefined) {
    json = JSON.stringify(obj);
    jsonCache.set(obj, json);
  }
  return json;
}

export interface WatchRequest {
  store: ObjectStore;
  type: KindSpec;
  namespace: string | undefined;
  matcher: Matcher | undefined;
  query: URLSearchParams;
  req: IncomingMessage;
  res: ServerResponse;
  registry: WatchRegistry;
  settings: WatchSettings;
}

/** 422 as the apiserver's ListOptions validation words it. */
function invalidListOptions(field: string, detail: string): ApiError {
  return new ApiError(422, 'Invalid', `ListOptions.meta.k8s.io "" is invalid: ${field}: ${detail}`, {
    group: 'meta.k8s.io',
    kind: 'ListOptions',
    causes: [{ reason: 'FieldValueForbidden', message: detail, field }],
  });
}

/**
 * The checks the apiserver makes on a watch's list options (apimachinery's ValidateListOptions): watch-list needs
 * the gate, `resourceVersionMatch=NotOlderThan` and bookmarks; `resourceVersionMatch` alone is not for watches.
 */
function checkWatchList(query: URLSearchParams, settings: WatchSettings): boolean {
  const initial = query.get('sendInitialEvents');
  const match = query.get('resourceVersionMatch');
  if (initial === null) {
    if (match !== null)
      throw invalidListOptions(
        'resourceVersionMatch',
        'Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      );
    return false;
  }
  if (!settings.watchList())
    throw invalidListOptions(
      'sendInitialEvents',
      'Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled',
    );
  if (match !== 'NotOlderThan')
    throw invalidListOptions(
      'resourceVersionMatch',
      `Unsupported value: "${match ?? ''}": supported values: "NotOlderThan"`,
    );
  if (initial === 'true' && query.get('allowWatchBookmarks') !== 'true')
    throw invalidListOptions(
      'allowWatchBookmarks',
      'Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is true',
    );
  return initial === 'true';
}

function parseResourceVersion(text: string | null): number | undefined {
  if (text === null || text === '' || text === '0') return undefined;
  if (!/^\d+$/.test(text)) throw badRequest(`invalid resource version "${text}"`);
  return Number(text);
}

export function serveWatch(w: WatchRequest): void {
  const { store, type, namespace, matcher, query, res } = w;
  const key = resourceKey(type.group, type.plural);
  const since = parseResourceVersion(query.get('resourceVersion'));
  const timeoutSeconds = query.get('timeoutSeconds');
  if (timeoutSeconds !== null && !/^\d+$/.test(timeoutSeconds))
    throw badRequest(`invalid value for timeoutSeconds: "${timeoutSeconds}"`);
  const initialEvents = checkWatchList(query, w.settings);
  const asTable = wantsTable(w.req.headers.accept);
  const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;

  res.writeHead(200, {
    'Content-Type': asTable ? TABLE_CONTENT_TYPE : 'application/json',
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache',
  });
  res.flushHeaders();

  let closed = false;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe = () => {};
  let unregister = () => {};
  const close = () => {
    if (closed) return;
    closed = true;
    unsubscribe();
    unregister();
    for (const t of timers) clearTimeout(t);
    if (!res.writableEnded) res.end();
  };
  unregister = w.registry.add(close);
  w.req.on('close', close);
  res.on('error', close);

  // The initial state is written at once (50,000 VMs are ~40 MB): the slow-consumer limit counts what piles up
  // beyond it.
  let initialBytes = 0;
  const send = (eventType: string, obj: KObject) => {
    if (closed) return;
    const body = asTable ? JSON.stringify(table(type, [obj], obj.metadata.resourceVersion)) : objectJson(obj);
    res.write(`{"type":"${eventType}","object":${body}}\n`);
    if (res.writableLength > MAX_BUFFERED_BYTES + initialBytes) close();
  };
  const sendRaw = (line: unknown) => {
    if (!closed) res.write(`${JSON.stringify(line)}\n`);
  };

  const inScope = (obj: KObject) => namespace === undefined || obj.metadata.namespace === namespace;
  const matches = (obj: KObject | undefined) => !!obj && inScope(obj) && (!matcher || matcher(obj));
  const deliver = (ev: StoreEvent) => {
    const now = matches(ev.object);
    const before = matches(ev.previous);
    if (ev.type === 'DELETED') {
      if (now || before) send('DELETED', ev.object);
    } else if (ev.type === 'ADDED') {
      if (now) send('ADDED', ev.object);
    } else if (now) send(before ? 'MODIFIED' : 'ADDED', ev.object);
    else if (before) send('DELETED', ev.object);
  };

  // The store is synchronous: the backlog read and the subscription happen in the same tick, so no write can
  // fall between them.
  // Watch-list (NotOlderThan): the current state, which is never older than any resourceVersion given.
  if (since === undefined || initialEvents) {
    // The initial ADDEDs go out in writes of ~256 KiB, not one write (and one chunk) per object.
    let batch: string[] = [];
    let size = 0;
    const flush = () => {
      if (batch.length && !closed) res.write(batch.join(''));
      initialBytes += size;
      batch = [];
      size = 0;
    };
    for (const obj of store.list(key, namespace)) {
      if (matcher && !matcher(obj)) continue;
      const line = asTable
        ? `{"type":"ADDED","object":${JSON.stringify(table(type, [obj], obj.metadata.resourceVersion))}}\n`
        : `{"type":"ADDED","object":${objectJson(obj)}}\n`;
      batch.push(line);
      size += line.length;
      if (size >= 256 * 1024) flush();
    }
    flush();
    if (initialEvents) {
      sendRaw({
        type: 'BOOKMARK',
        object: {
          apiVersion,
          kind: type.kind,
          metadata: {
            resourceVersion: String(store.currentRevision()),
            annotations: { 'k8s.io/initial-events-end': 'true' },
          },
        },
      });
    }
  } else {
    const backlog = since > store.currentRevision() ? 'expired' : store.eventsSince(key, since);
    if (backlog === 'expired') {
      const oldest = store.oldestResumable(key);
      sendRaw({
        type: 'ERROR',
        object: new ApiError(410, 'Expired', `too old resource version: ${since} (${oldest})`).toStatus(),
      });
      close();
      return;
    }
    for (const ev of backlog) deliver(ev);
  }
  unsubscribe = store.subscribe((ev) => {
    if (ev.key === key) deliver(ev);
  });

  if (query.get('allowWatchBookmarks') === 'true') {
    const tick = () => {
      sendRaw({
        type: 'BOOKMARK',
        object: { apiVersion, kind: type.kind, metadata: { resourceVersion: String(store.currentRevision()) } },
      });
      timers.push(setTimeout(tick, w.settings.bookmarkIntervalMs).unref());
    };
    timers.push(setTimeout(tick, w.settings.bookmarkIntervalMs).unref());
  }
  const [min, max] = w.settings.defaultTimeoutMs;
  const lifetime =
    timeoutSeconds !== null && timeoutSeconds !== '0'
      ? Number(timeoutSeconds) * 1000
      : min + Math.random() * (max - min);
  timers.push(setTimeout(close, lifetime).unref());
}
