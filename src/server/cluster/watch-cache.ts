/**
 * The ONE watch-driven cache: a list-then-watch informer per kind (VMs, VMIs, virt-launcher pods and container
 * pods, nodes, PVCs, DataVolumes, migrations), with Corral's own indexes on top (namespace/name, node, label, owning VM).
 *
 * Initial state (issue 17; docs/scale.md "Cold sync"): by watch-list where the apiserver serves it — one watch with
 * `sendInitialEvents=true&resourceVersionMatch=NotOlderThan` streams every object, then a bookmark annotated
 * `k8s.io/initial-events-end` carrying the version the same stream goes on from — otherwise (the apiserver answers
 * such a watch 400/422) by paginated lists, each page applied as it arrives, and a watch from the list's version.
 *
 * Recovery (issue 14; docs/server.md "Watch recovery"): each informer is one loop that lists only when it has no
 * resourceVersion (at start and after 410 Gone / an in-stream ERROR 410), otherwise watches from the last
 * resourceVersion it saw (events and bookmarks). A watch carries `timeoutSeconds`, so the apiserver ends it
 * cleanly every few minutes, and a client-side idle timer aborts a stream that stays silent past that; a watch
 * request that gets no response headers within `watchConnectTimeoutMs` is aborted too. Every attempt owns an
 * AbortController that is aborted when the attempt ends, whatever ended it, so a request that is given up on never
 * keeps its socket. Failures back off exponentially with jitter (1 s doubling to 30 s, each delay drawn from its
 * upper half); a clean end of a watch that delivered something reconnects at once. A heartbeat (`GET /version`)
 * tells a silent, hung apiserver from a quiet one; when it answers again after failing, every informer that is
 * waiting (backing off, or stuck in a request sent during the outage) is retried at once, so recovery does not
 * wait out a long back-off. The cache keeps serving the last known state throughout; `ready()` turns false while
 * the heartbeat or any watch has been down for longer than `unreachableAfterMs`.
 */
import type { CachedKind, ChangeEvent, ChangeType, ClusterCache, KObject } from '../domain/cluster-port';
import { CACHED_KINDS } from '../domain/cluster-port';
import { CorralError } from '../errors';
import {
  WatchGone,
  WatchListRefused,
  listInPages,
  watchOnce,
  type InformerIo,
  type InformerState,
  type InitialEvents,
} from './informer-reads';
import type { KubeHttp } from './kube-http';
import { KindIndex, keyOf, keysOf, type Bucket, type Key } from './kind-index';
import { Interner } from './intern';
import { project } from './projection';
import { RESOURCES, resourcePath } from './resources';

/**
 * Only virt-launcher pods and Corral's container (CT) pods matter to Corral; watching every pod of a big cluster
 * would waste memory. A label selector cannot say "or", so a kind with several selectors gets one informer each,
 * all filling the same index (each informer's relist only drops objects its own selector matches).
 */
const LABEL_SELECTORS: Partial<Record<CachedKind, `${string}=${string}`[]>> = {
  Pod: ['kubevirt.io=virt-launcher', 'corral.dev/ct=true'],
};
const INFORMER_COUNT = CACHED_KINDS.reduce((n, kind) => n + (LABEL_SELECTORS[kind]?.length ?? 1), 0);

/** Whether `o` carries the `key=value` label of an equality selector (always true without a selector). */
function selects(selector: string | undefined, o: KObject): boolean {
  if (!selector) return true;
  const cut = selector.indexOf('=');
  return o.metadata.labels?.[selector.slice(0, cut)] === selector.slice(cut + 1);
}

export interface WatchCacheOptions {
  /** Readiness turns false after the heartbeat or a watch has been down for this long (default 30 s). */
  unreachableAfterMs?: number;
  /** First retry delay after a failure (default 1 s); each further failure doubles it. */
  minBackoffMs?: number;
  /** Longest retry delay (default 30 s). */
  maxBackoffMs?: number;
  /** Interval of the apiserver heartbeat (default min(5 s, unreachableAfterMs / 3)); 1 s while it fails. */
  heartbeatMs?: number;
  /** `timeoutSeconds` asked of the apiserver for each watch (default 300; each watch draws 1–1.25× of it). */
  watchTimeoutSeconds?: number;
  /** A watch silent for this long after its server-side timeout should have ended it is aborted (default 30 s). */
  watchIdleSlackMs?: number;
  /** A watch request without response headers after this long is aborted (default 10 s). */
  watchConnectTimeoutMs?: number;
  /** Time-out of each list request (default 60 s). */
  listTimeoutMs?: number;
  /**
   * Initial lists and relists are read in pages of this many objects (`limit`/`continue`, default 500; 0 = one
   * request): each page is decoded and applied as it arrives, so a 50,000-VM list never sits in memory as one
   * body, and a slow page times out alone.
   */
  listPageSize?: number;
  /**
   * Read the initial state (and after a 410) by watch-list — one watch with `sendInitialEvents=true` that streams
   * every object, an `k8s.io/initial-events-end` bookmark, then the changes — where the apiserver serves it
   * (default true); an apiserver that refuses it (400/422) is read by paginated lists instead, from then on.
   */
  watchList?: boolean;
  log?: (line: string) => void;
  /** Random source for jitter (tests). */
  random?: () => number;
}

/** Per-kind state for /readyz reasons, logs and tests. */
export interface WatchStatus {
  kind: CachedKind;
  synced: boolean;
  streaming: boolean;
  downForMs: number;
  failures: number;
  lastError: string;
  /** Initial states read (watch-lists and paginated lists together), and how the last one arrived. */
  lists: number;
  initialSync: 'watch-list' | 'list' | '';
  watches: number;
}

export class WatchCache implements ClusterCache {
  private readonly indexes = new Map<CachedKind, KindIndex>(CACHED_KINDS.map((k) => [k, new KindIndex()]));
  private readonly informers: InformerState[] = [];
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  /** Shared copies of the repeated strings of every cached object (see projection.ts). */
  private readonly strings = new Interner();
  private stopped = false;
  private readonly unreachableAfterMs: number;
  private readonly minBackoffMs: number;
  private readonly maxBackoffMs: number;
  private readonly heartbeatMs: number;
  private readonly watchList: boolean;
  /** What the reads (informer-reads.ts) use: the apiserver, the limits, and this cache as their sink. */
  private readonly io: InformerIo;
  private readonly log: (line: string) => void;
  private readonly random: () => number;
  private heartbeat: ReturnType<typeof setTimeout> | undefined;
  private heartbeatAbort: AbortController | undefined;
  /** Set while the heartbeat fails: a hanging apiserver leaves watches silent rather than erroring. */
  private heartbeatFailingSince: number | undefined;

  constructor(
    private readonly http: KubeHttp,
    options: WatchCacheOptions = {},
  ) {
    this.unreachableAfterMs = options.unreachableAfterMs ?? 30_000;
    this.minBackoffMs = options.minBackoffMs ?? 1000;
    this.maxBackoffMs = Math.max(this.minBackoffMs, options.maxBackoffMs ?? 30_000);
    this.heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.min(5000, Math.floor(this.unreachableAfterMs / 3)));
    this.watchList = options.watchList ?? true;
    this.log = options.log ?? ((line) => console.warn(`[corral] ${line}`));
    this.random = options.random ?? Math.random;
    this.io = {
      http,
      limits: {
        watchTimeoutSeconds: Math.max(1, Math.round(options.watchTimeoutSeconds ?? 300)),
        watchIdleSlackMs: options.watchIdleSlackMs ?? 30_000,
        watchConnectTimeoutMs: options.watchConnectTimeoutMs ?? 10_000,
        listTimeoutMs: options.listTimeoutMs ?? 60_000,
        listPageSize: options.listPageSize ?? 500,
      },
      log: this.log,
      random: this.random,
      apply: (state, type, object) => this.apply(state, type, object),
      dropUnseen: (state, seen) => this.dropUnseen(state, seen),
    };
  }

  /** Starts every informer; resolves when each has either listed once or failed its first attempt. */
  async start(): Promise<void> {
    this.stopped = false;
    const firsts: Promise<void>[] = [];
    for (const [kind, selector] of CACHED_KINDS.flatMap((k) =>
      (LABEL_SELECTORS[k] ?? [undefined]).map((sel) => [k, sel] as const),
    )) {
      const r = RESOURCES[kind];
      const state: InformerState = {
        kind,
        path: resourcePath(r),
        selector: selector ? encodeURIComponent(selector) : '',
        rawSelector: selector,
        synced: false,
        resourceVersion: '',
        downSince: Date.now(),
        lastDataAt: 0,
        streaming: false,
        lastError: '',
        failures: 0,
        attempt: 0,
        abort: undefined,
        timer: undefined,
        absent: false,
        watchList: this.watchList,
        initialSync: '',
        stats: { lists: 0, watches: 0, failures: 0 },
      };
      this.informers.push(state);
      let first: () => void = () => {};
      firsts.push(new Promise<void>((resolve) => (first = resolve)));
      void this.run(state, first);
    }
    await Promise.all(firsts);
    this.scheduleBeat(this.heartbeatMs);
  }

  /** Resolves once every informer has listed (or rejects after `timeoutMs`). */
  async waitForSync(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.synced()) {
      if (Date.now() > deadline)
        throw new Error(`cache not synced after ${timeoutMs} ms: ${this.problems().join('; ')}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  synced(): boolean {
    return this.informers.length === INFORMER_COUNT && this.informers.every((i) => i.synced);
  }

  /** Synced, and neither the heartbeat nor any watch down for longer than the grace period. */
  ready(now = Date.now()): boolean {
    const ok = (since: number | undefined) => since === undefined || now - since < this.unreachableAfterMs;
    return this.synced() && ok(this.heartbeatFailingSince) && this.informers.every((i) => ok(i.downSince));
  }

  problems(now = Date.now()): string[] {
    const beat = this.heartbeatFailingSince === undefined ? [] : ['apiserver: heartbeat failing'];
    return beat.concat(
      this.informers
        .filter((i) => i.downSince !== undefined && (i.lastError || !i.synced))
        .map(
          (i) =>
            `${i.kind}: ${i.lastError || 'not listed yet'} (down ${Math.round((now - (i.downSince ?? now)) / 1000)} s)`,
        ),
    );
  }

  /** One line per watched kind. */
  status(now = Date.now()): WatchStatus[] {
    return this.informers.map((i) => ({
      kind: i.kind,
      synced: i.synced,
      streaming: i.streaming,
      downForMs: i.downSince === undefined ? 0 : now - i.downSince,
      failures: i.failures,
      lastError: i.lastError,
      lists: i.stats.lists,
      initialSync: i.initialSync,
      watches: i.stats.watches,
    }));
  }

  onChange(listener: (e: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearTimeout(this.heartbeat);
    this.heartbeatAbort?.abort();
    for (const i of this.informers) {
      if (i.timer) clearTimeout(i.timer);
      i.timer = undefined;
      i.attempt++;
      i.abort?.abort();
      i.abort = undefined;
    }
    return Promise.resolve();
  }

  get(kind: CachedKind, namespace: string | undefined, name: string): KObject | undefined {
    return this.index(kind).objects.get(namespace ? `${namespace}/${name}` : name);
  }

  list(kind: CachedKind, namespace?: string): readonly KObject[] {
    const idx = this.index(kind);
    if (namespace === undefined) return [...idx.objects.values()];
    return [...(idx.byNamespace.get(namespace)?.values() ?? [])];
  }

  onNode(kind: 'VirtualMachineInstance' | 'Pod', node: string): readonly KObject[] {
    return this.resolve(kind, this.index(kind).byNode.get(node));
  }

  ofVm(kind: CachedKind, namespace: string, vm: string): readonly KObject[] {
    return this.resolve(kind, this.index(kind).byVm.get(`${namespace}/${vm}`));
  }

  withLabel(kind: CachedKind, key: string, value?: string): readonly KObject[] {
    const values = this.index(kind).byLabel.get(key);
    if (!values) return [];
    if (value !== undefined) return this.resolve(kind, values.get(value));
    return [...values.values()].flatMap((keys) => this.resolve(kind, keys));
  }

  private resolve(kind: CachedKind, bucket: Bucket | undefined): KObject[] {
    if (bucket === undefined) return [];
    const objects = this.index(kind).objects;
    const out: KObject[] = [];
    for (const k of keysOf(bucket)) {
      const o = objects.get(k);
      if (o) out.push(o);
    }
    return out;
  }

  private index(kind: CachedKind): KindIndex {
    const idx = this.indexes.get(kind);
    if (!idx) throw new Error(`internal: ${kind} is not cached`);
    return idx;
  }

  // ---- heartbeat ----------------------------------------------------------------------------------------------

  private scheduleBeat(delayMs: number): void {
    if (this.stopped) return;
    this.heartbeat = setTimeout(() => void this.beat(), delayMs);
    this.heartbeat.unref?.();
  }

  private async beat(): Promise<void> {
    const failing = this.heartbeatFailingSince !== undefined;
    try {
      this.heartbeatAbort = new AbortController();
      await this.http.request({
        method: 'GET',
        path: '/version',
        what: 'heartbeat',
        signal: this.heartbeatAbort.signal,
        // While failing, a short time-out: a request sent into a hang must not delay noticing the recovery.
        timeoutMs: failing ? Math.min(2000, Math.max(500, this.heartbeatMs)) : Math.max(500, this.heartbeatMs),
      });
      if (this.stopped) return;
      const outageStart = this.heartbeatFailingSince;
      if (outageStart !== undefined) {
        this.log('the apiserver answers again; retrying the watches that are down');
        this.heartbeatFailingSince = undefined;
        this.kick(outageStart);
      }
    } catch (err) {
      if (this.stopped) return;
      if (!failing) this.log(`the apiserver does not answer: ${err instanceof Error ? err.message : String(err)}`);
      this.heartbeatFailingSince ??= Date.now();
    }
    this.scheduleBeat(this.heartbeatFailingSince === undefined ? this.heartbeatMs : Math.min(1000, this.heartbeatMs));
  }

  /**
   * The apiserver answers again: retry now every informer that is waiting out a back-off or stuck in a request
   * sent during the outage (a hung apiserver never answers those). Streams that delivered nothing since before
   * the outage are restarted from their resourceVersion too: over a real network partition they are dead.
   */
  private kick(outageStart: number): void {
    for (const state of this.informers) {
      if (state.absent) continue;
      const stuck = !state.streaming || state.lastDataAt < outageStart;
      if (!stuck && state.timer === undefined) continue;
      this.restart(state, Math.floor(this.random() * 250));
    }
  }

  // ---- informer loop ------------------------------------------------------------------------------------------

  /** Ends the current attempt (aborting its request) and starts another after `delayMs`. */
  private restart(state: InformerState, delayMs: number): void {
    state.attempt++;
    state.abort?.abort();
    state.abort = undefined;
    state.streaming = false;
    this.schedule(state, delayMs);
  }

  private schedule(state: InformerState, delayMs: number): void {
    if (state.timer) clearTimeout(state.timer);
    state.timer = undefined;
    if (this.stopped) return;
    const go = () => {
      state.timer = undefined;
      if (!this.stopped) void this.run(state);
    };
    if (delayMs <= 0) return void queueMicrotask(go);
    state.timer = setTimeout(go, delayMs);
    state.timer.unref?.();
  }

  private backoff(failures: number): number {
    const ceiling = Math.min(this.maxBackoffMs, this.minBackoffMs * 2 ** Math.max(0, failures - 1));
    return Math.round(ceiling / 2 + (this.random() * ceiling) / 2);
  }

  /**
   * One attempt: without a resourceVersion a watch-list (or, where refused, a paginated list and then a watch),
   * otherwise a watch from it; until the watch ends. Schedules the next attempt itself.
   */
  private async run(state: InformerState, firstDone?: () => void): Promise<void> {
    const attempt = ++state.attempt;
    state.abort?.abort();
    const ac = new AbortController();
    state.abort = ac;
    state.streaming = false;
    const current = () => state.attempt === attempt && !this.stopped;
    let listed = false;
    const started = Date.now();
    let initial: InitialEvents | undefined;
    try {
      if (!state.resourceVersion) {
        if (state.watchList) initial = { seen: new Set(), done: firstDone };
        else {
          await listInPages(this.io, state, ac.signal);
          listed = true;
          firstDone?.();
        }
      }
      if (!current()) return;
      const delivered = await watchOnce(this.io, state, ac, current, initial);
      // A watch-list ended before its initial events did: the next attempt starts it over.
      if (initial && !state.resourceVersion) firstDone?.();
      // A clean end (server-side timeout, or the apiserver dropped the stream): resume at once — unless the
      // stream ended without delivering anything, which a misbehaving proxy could repeat in a tight loop.
      if (!current()) return;
      this.wentDown(state);
      if (delivered || Date.now() - started >= 1000) {
        state.failures = 0;
        this.schedule(state, Math.floor(this.random() * 100));
      } else this.failed(state, new Error('the watch ended without delivering anything'));
    } catch (err) {
      if (err instanceof WatchListRefused && current()) {
        if (this.informers.every((i) => i.watchList))
          this.log(`the apiserver refuses watch-list (${err.message}); reading by paginated lists`);
        state.watchList = false;
        ac.abort();
        queueMicrotask(() => {
          if (!this.stopped && state.attempt === attempt) void this.run(state, firstDone);
        });
        return;
      }
      firstDone?.();
      if (!current()) return;
      this.wentDown(state);
      if (err instanceof WatchGone) {
        // 410: the resourceVersion is too old to resume from; list again (at once, unless we just listed).
        state.resourceVersion = '';
        if (!listed && !initial) {
          this.log(`watch on ${state.kind}: ${err.message}; listing again`);
          this.schedule(state, 0);
          return;
        }
      }
      if (err instanceof CorralError && err.code === 'NOT_FOUND' && (!state.synced || state.absent) && !listed) {
        this.absentKind(state);
        return;
      }
      this.failed(state, err);
    } finally {
      // Whatever ended the attempt, its request (and socket) goes with it.
      ac.abort();
      if (state.abort === ac) state.abort = undefined;
    }
  }

  private wentDown(state: InformerState): void {
    state.streaming = false;
    state.downSince ??= Date.now();
  }

  private failed(state: InformerState, err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    state.failures++;
    state.stats.failures++;
    const delay = this.backoff(state.failures);
    if (message !== state.lastError)
      this.log(`watch on ${state.kind} failed (${message}); retrying in ${(delay / 1000).toFixed(1)} s, backing off`);
    state.lastError = message;
    this.schedule(state, delay);
  }

  /** The kind's CRD is not installed (e.g. a cluster without CDI): an empty kind, not an outage. */
  private absentKind(state: InformerState): void {
    if (!state.absent)
      this.log(`${state.kind} is not served by this cluster (CRD not installed); treating it as empty`);
    state.absent = true;
    state.synced = true;
    state.downSince = undefined;
    state.lastError = '';
    state.failures = 0;
    this.schedule(state, this.maxBackoffMs * 2);
  }

  /** After a complete initial state: what this informer's selector covers but the state did not hold is gone. */
  private dropUnseen(state: InformerState, seen: Set<Key>): void {
    for (const [key, old] of [...this.index(state.kind).objects])
      if (!seen.has(key) && selects(state.rawSelector, old)) this.apply(state, 'DELETED', old);
  }

  /**
   * Puts or drops one object and tells the listeners, unless it is unchanged. What is kept (and told) is the
   * object's projection (projection.ts), not the object as received.
   */
  private apply(state: InformerState, type: ChangeType, received: KObject): void {
    const idx = this.index(state.kind);
    const old = idx.objects.get(keyOf(received));
    if (type === 'DELETED' && !old) return;
    const rv = received.metadata.resourceVersion;
    if (type !== 'DELETED' && old && rv !== undefined && old.metadata.resourceVersion === rv) return;
    const o = project(state.kind, received, this.strings);
    if (type === 'DELETED') idx.drop(o);
    else {
      idx.put(o);
      type = old ? 'MODIFIED' : 'ADDED';
    }
    const event: ChangeEvent = { kind: state.kind, type, object: o };
    for (const l of this.listeners) l(event);
  }
}
