/**
 * One informer's reads, apart from the cache that keeps what they deliver (watch-cache.ts): the initial state by
 * paginated list, and one watch — or watch-list — applied event by event until it ends. Each hands what it reads to
 * `InformerIo.apply` and leaves scheduling, back-off and recovery to the cache's informer loop.
 */
import type { CachedKind, ChangeType, KObject } from '../domain/cluster-port';
import { CorralError } from '../errors';
import type { KubeHttp } from './kube-http';
import { fromKubeResponse } from './errors';
import { keyOf, type Key } from './kind-index';
import { LineSplitter } from './ndjson';
import { RESOURCES } from './resources';

export interface InformerState {
  kind: CachedKind;
  /** Collection path and label selector (query-encoded, '' for none). */
  path: string;
  selector: string;
  /** The selector as written (`key=value`), undefined for none. */
  rawSelector: string | undefined;
  synced: boolean;
  /** The resourceVersion to resume from; '' means the next attempt lists first. */
  resourceVersion: string;
  /** Epoch ms since when this kind has had no open watch (undefined while one is open or never needed). */
  downSince: number | undefined;
  /** Epoch ms of the last byte received on the current watch. */
  lastDataAt: number;
  /** The current watch has its response headers (it is streaming). */
  streaming: boolean;
  lastError: string;
  /** Consecutive failed attempts (drives the back-off). */
  failures: number;
  /** Bumped per attempt: callbacks of an older attempt are ignored. */
  attempt: number;
  /** Aborts the current attempt's request (list or watch). */
  abort: AbortController | undefined;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The cluster does not serve this kind (CRD not installed): empty, looked at again now and then. */
  absent: boolean;
  /** Initial state by watch-list; false once the apiserver refused it (then paginated lists). */
  watchList: boolean;
  /** How the last complete initial state arrived. */
  initialSync: 'watch-list' | 'list' | '';
  /** Counters for diagnostics and tests. */
  stats: { lists: number; watches: number; failures: number };
}

/** Time-outs and sizes of the reads (WatchCacheOptions, resolved). */
export interface ReadLimits {
  watchTimeoutSeconds: number;
  watchIdleSlackMs: number;
  watchConnectTimeoutMs: number;
  listTimeoutMs: number;
  listPageSize: number;
}

/** What a read needs from the cache: the apiserver, its limits, and where read objects go. */
export interface InformerIo {
  readonly http: KubeHttp;
  readonly limits: ReadLimits;
  log(line: string): void;
  random(): number;
  /** Puts or drops one object in the cache (and tells its listeners). */
  apply(state: InformerState, type: ChangeType, object: KObject): void;
  /** After a complete initial state: drops what this informer covers but the state did not hold. */
  dropUnseen(state: InformerState, seen: Set<Key>): void;
}

export /** The apiserver refused a watch-list (400/422: no WatchList gate, or older than 1.27): list in pages instead. */
class WatchListRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WatchListRefused';
  }
}

export /** The initial events of a watch-list in progress: what they covered, and whom to tell once they end. */
interface InitialEvents {
  seen: Set<Key>;
  done: (() => void) | undefined;
}

/** The bookmark annotation that ends a watch-list's initial events. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

export /** Why a watch attempt ended without an error: the apiserver closed the stream (timeoutSeconds, or dropped). */
class WatchGone extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WatchGone';
  }
}

/** Reads the whole collection in pages (`limit`/`continue`), applying each page as it arrives; then drops what is gone. */
export async function listInPages(io: InformerIo, state: InformerState, signal: AbortSignal): Promise<void> {
  const r = RESOURCES[state.kind];
  state.stats.lists++;
  const seen = new Set<Key>();
  let resourceVersion = '';
  let token = '';
  do {
    const query = [
      ...(state.selector ? [`labelSelector=${state.selector}`] : []),
      ...(io.limits.listPageSize > 0 ? [`limit=${io.limits.listPageSize}`] : []),
      ...(token ? [`continue=${encodeURIComponent(token)}`] : []),
    ].join('&');
    const page = await io.http.request<{
      metadata?: { resourceVersion?: string; continue?: string };
      items?: KObject[];
    }>({
      method: 'GET',
      path: `${state.path}${query ? `?${query}` : ''}`,
      what: `listing ${r.plural}`,
      timeoutMs: io.limits.listTimeoutMs,
      signal,
    });
    if (signal.aborted) return;
    if (state.absent) io.log(`${state.kind} is served by the cluster now`);
    state.absent = false;
    // Every page carries the first page's resourceVersion: the watch resumes from there.
    resourceVersion ||= page?.metadata?.resourceVersion ?? '';
    for (const item of page?.items ?? []) {
      seen.add(keyOf(item));
      io.apply(state, 'ADDED', item);
    }
    token = page?.metadata?.continue ?? '';
  } while (token);
  io.dropUnseen(state, seen);
  state.resourceVersion = resourceVersion;
  state.synced = true;
  state.initialSync = 'list';
}

/**
 * Opens one watch from `state.resourceVersion` — or, with `initial`, a watch-list that first streams the whole
 * state — and applies its events until it ends. Resolves whether it delivered anything when the server ends it
 * cleanly; throws WatchGone on 410, WatchListRefused when a watch-list is refused, a CorralError otherwise.
 */
export async function watchOnce(
  io: InformerIo,
  state: InformerState,
  ac: AbortController,
  current: () => boolean,
  initial?: InitialEvents,
): Promise<boolean> {
  const r = RESOURCES[state.kind];
  const timeoutSeconds = Math.round(io.limits.watchTimeoutSeconds * (1 + io.random() / 4));
  const query = [
    'watch=true',
    ...(initial
      ? ['sendInitialEvents=true', 'resourceVersionMatch=NotOlderThan']
      : [`resourceVersion=${encodeURIComponent(state.resourceVersion)}`]),
    'allowWatchBookmarks=true',
    `timeoutSeconds=${timeoutSeconds}`,
    ...(state.selector ? [`labelSelector=${state.selector}`] : []),
  ].join('&');
  const what = initial ? `watch-listing ${r.plural}` : `watching ${r.plural}`;
  let reason = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = (ms: number, why: string) => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      reason = why;
      ac.abort();
    }, ms);
    timer.unref?.();
  };
  state.stats.watches++;
  if (initial) state.stats.lists++;
  // A watch-list is a read of the whole collection: an apiserver may hold it as long as a list.
  const connectMs = initial
    ? Math.max(io.limits.watchConnectTimeoutMs, io.limits.listTimeoutMs)
    : io.limits.watchConnectTimeoutMs;
  arm(connectMs, `no answer to the watch request within ${connectMs} ms`);
  try {
    let res;
    try {
      res = await io.http.stream(`${state.path}?${query}`, ac.signal, what);
    } catch (err) {
      throw reason ? new CorralError('TIMEOUT', reason) : err;
    }
    if (res.status !== 200) {
      const text = res.body ? await new Response(res.body).text().catch(() => '') : '';
      if (res.status === 410) throw new WatchGone(`resourceVersion ${state.resourceVersion} expired (410)`);
      if (initial && (res.status === 400 || res.status === 422))
        throw new WatchListRefused(fromKubeResponse(res.status, text, what).message);
      throw fromKubeResponse(res.status, text, what);
    }
    if (!res.body) throw new CorralError('BAD_GATEWAY', `${what}: empty response`);
    // Connected: the kind is live again.
    if (state.absent) io.log(`${state.kind} is served by the cluster now`);
    state.absent = false;
    if (state.lastError && state.downSince !== undefined)
      io.log(`watch on ${state.kind} recovered after ${((Date.now() - state.downSince) / 1000).toFixed(1)} s`);
    state.streaming = true;
    state.downSince = undefined;
    state.lastError = '';
    state.lastDataAt = Date.now();
    const idleMs = timeoutSeconds * 1000 + io.limits.watchIdleSlackMs;
    const idleReason = `the watch was silent for ${Math.round(idleMs / 1000)} s`;
    // One timer for the stream's silence, checked against the last byte's time when it fires: re-arming it per
    // chunk cost a timer per event during a watch-list's initial events.
    const idleCheck = () => {
      const quiet = Date.now() - state.lastDataAt;
      if (quiet >= idleMs) {
        reason = idleReason;
        ac.abort();
        return;
      }
      timer = setTimeout(idleCheck, idleMs - quiet);
      timer.unref?.();
    };
    if (timer) clearTimeout(timer);
    timer = setTimeout(idleCheck, idleMs);
    timer.unref?.();
    const reader = res.body.getReader();
    const lines = new LineSplitter();
    let delivered = false;
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (!current()) return delivered;
        state.lastDataAt = Date.now();
        for (const line of lines.push(value)) if (applyLine(io, state, line, initial)) delivered = true;
        if (initial && state.resourceVersion) initial = undefined; // the initial events have ended
      }
    } catch (err) {
      if (reason) throw new CorralError('TIMEOUT', reason);
      if (!current()) return delivered;
      throw err instanceof CorralError || err instanceof WatchGone
        ? err
        : new CorralError(
            'UNAVAILABLE',
            `the ${r.plural} watch broke off (${err instanceof Error ? err.message : String(err)})`,
          );
    } finally {
      reader.cancel().catch(() => undefined);
    }
    return delivered;
  } finally {
    if (timer) clearTimeout(timer);
  }
}

/**
 * Applies one watch line; true when it was an event (not garbage). Throws WatchGone for ERROR 410. During a
 * watch-list's initial events (`initial`) the resourceVersion stays unset until the bookmark that ends them, so
 * a stream that breaks before it makes the next attempt start over.
 */
function applyLine(io: InformerIo, state: InformerState, line: string, initial?: InitialEvents): boolean {
  let parsed: { type?: string; object?: KObject & { code?: number; message?: string } };
  try {
    parsed = JSON.parse(line) as typeof parsed;
  } catch {
    return false;
  }
  const { type, object } = parsed;
  if (!object) return false;
  if (type === 'ERROR') {
    if (object.code === 410) throw new WatchGone(object.message ?? 'resourceVersion expired (410)');
    throw new CorralError(
      'BAD_GATEWAY',
      `the ${RESOURCES[state.kind].plural} watch failed: ${object.message ?? 'ERROR event'}`,
    );
  }
  const rv = object.metadata?.resourceVersion;
  if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') {
    if (initial && type !== 'DELETED') initial.seen.add(keyOf(object));
    io.apply(state, type, object);
  } else if (type !== 'BOOKMARK') return false;
  if (!initial) {
    if (rv) state.resourceVersion = rv;
  } else if (type === 'BOOKMARK' && object.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true' && rv) {
    io.dropUnseen(state, initial.seen);
    state.resourceVersion = rv;
    state.synced = true;
    state.initialSync = 'watch-list';
    initial.done?.();
  }
  state.failures = 0; // the stream works: a later failure starts its back-off from the beginning
  return true;
}
