/**
 * The ONE watch-driven cache: a client-node ListWatch per kind (VMs, VMIs, virt-launcher pods, nodes, PVCs,
 * DataVolumes, migrations), with Corral's own indexes on top (namespace/name, node, label, owning VM).
 *
 * client-node informers STOP after any error other than 410/timeout (kube-sim-spec §7), so each informer is
 * restarted here with exponential backoff (1 s … 30 s). The cache keeps serving the last known state while a
 * watch is down; readiness turns false when an informer has been failing for longer than `unreachableAfterMs`.
 */
import {
  type KubernetesListObject,
  type KubernetesObject,
  ListWatch,
  Watch,
  type KubeConfig,
} from '@kubernetes/client-node';
import type { CachedKind, ChangeEvent, ChangeType, ClusterCache, KObject } from '../domain/cluster-port';
import { CACHED_KINDS } from '../domain/cluster-port';
import { CorralError } from '../errors';
import type { KubeHttp } from './kube-http';
import { RESOURCES, resourcePath } from './resources';

/** Only virt-launcher pods matter to Corral; watching every pod of a big cluster would waste memory. */
const LABEL_SELECTORS: Partial<Record<CachedKind, string>> = { Pod: 'kubevirt.io=virt-launcher' };

const VM_LABELS = ['corral.dev/vm', 'vm.kubevirt.io/name', 'kubevirt.io/domain'];

type Key = string; // "ns/name" or "name" for cluster-scoped kinds

class KindIndex {
  readonly objects = new Map<Key, KObject>();
  readonly byNamespace = new Map<string, Map<Key, KObject>>();
  readonly byNode = new Map<string, Set<Key>>();
  readonly byVm = new Map<string, Set<Key>>();
  readonly byLabel = new Map<string, Map<string, Set<Key>>>();

  put(o: KObject): void {
    const key = keyOf(o);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    this.objects.set(key, o);
    this.index(key, o);
  }

  drop(o: KObject): void {
    const key = keyOf(o);
    const old = this.objects.get(key);
    if (!old) return;
    this.unindex(key, old);
    this.objects.delete(key);
  }

  private index(key: Key, o: KObject): void {
    const ns = o.metadata.namespace ?? '';
    let nsMap = this.byNamespace.get(ns);
    if (!nsMap) this.byNamespace.set(ns, (nsMap = new Map()));
    nsMap.set(key, o);
    const node = nodeOf(o);
    if (node) addTo(this.byNode, node, key);
    for (const vm of vmsOf(o)) addTo(this.byVm, `${ns}/${vm}`, key);
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
      let values = this.byLabel.get(k);
      if (!values) this.byLabel.set(k, (values = new Map()));
      addTo(values, v, key);
    }
  }

  private unindex(key: Key, o: KObject): void {
    const ns = o.metadata.namespace ?? '';
    const nsMap = this.byNamespace.get(ns);
    nsMap?.delete(key);
    if (nsMap?.size === 0) this.byNamespace.delete(ns);
    const node = nodeOf(o);
    if (node) removeFrom(this.byNode, node, key);
    for (const vm of vmsOf(o)) removeFrom(this.byVm, `${ns}/${vm}`, key);
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
      const values = this.byLabel.get(k);
      if (values) {
        removeFrom(values, v, key);
        if (values.size === 0) this.byLabel.delete(k);
      }
    }
  }
}

function addTo<K>(m: Map<K, Set<Key>>, k: K, key: Key): void {
  let s = m.get(k);
  if (!s) m.set(k, (s = new Set()));
  s.add(key);
}
function removeFrom<K>(m: Map<K, Set<Key>>, k: K, key: Key): void {
  const s = m.get(k);
  s?.delete(key);
  if (s?.size === 0) m.delete(k);
}

function keyOf(o: KObject): Key {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata.name ?? '');
}

function nodeOf(o: KObject): string {
  const fromStatus = (o.status as { nodeName?: unknown } | undefined)?.nodeName;
  const fromSpec = (o.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof fromStatus === 'string' && fromStatus ? fromStatus : typeof fromSpec === 'string' ? fromSpec : '';
}

function vmsOf(o: KObject): string[] {
  const out = new Set<string>();
  for (const l of VM_LABELS) {
    const v = o.metadata.labels?.[l];
    if (v) out.add(v);
  }
  for (const r of o.metadata.ownerReferences ?? []) {
    if (r.kind === 'VirtualMachine' || r.kind === 'VirtualMachineInstance') out.add(r.name);
  }
  return [...out];
}

interface InformerState {
  kind: CachedKind;
  informer: ListWatch<KubernetesObject>;
  synced: boolean;
  failingSince: number | undefined;
  lastError: string;
  backoffMs: number;
  timer: ReturnType<typeof setTimeout> | undefined;
}

export interface WatchCacheOptions {
  /** Readiness turns false after an informer has failed for this long (default 30 s). */
  unreachableAfterMs?: number;
  maxBackoffMs?: number;
  /** Interval of the apiserver heartbeat (default min(5 s, unreachableAfterMs / 3)). */
  heartbeatMs?: number;
  log?: (line: string) => void;
}

export class WatchCache implements ClusterCache {
  private readonly indexes = new Map<CachedKind, KindIndex>(CACHED_KINDS.map((k) => [k, new KindIndex()]));
  private readonly informers: InformerState[] = [];
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  private stopped = false;
  private readonly unreachableAfterMs: number;
  private readonly maxBackoffMs: number;
  private readonly log: (line: string) => void;
  private readonly heartbeatMs: number;
  private heartbeat: ReturnType<typeof setInterval> | undefined;
  /** Set while the heartbeat fails: a hanging apiserver leaves watches silent rather than erroring. */
  private heartbeatFailingSince: number | undefined;

  constructor(
    private readonly kc: KubeConfig,
    private readonly http: KubeHttp,
    options: WatchCacheOptions = {},
  ) {
    this.unreachableAfterMs = options.unreachableAfterMs ?? 30_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.log = options.log ?? ((line) => console.warn(`[corral] ${line}`));
    this.heartbeatMs = options.heartbeatMs ?? Math.max(100, Math.min(5000, Math.floor(this.unreachableAfterMs / 3)));
  }

  /** Starts every informer; resolves when each has either listed once or failed its first attempt. */
  async start(): Promise<void> {
    const watch = new Watch(this.kc);
    await Promise.all(CACHED_KINDS.map((kind) => this.startInformer(kind, watch)));
    this.heartbeat = setInterval(() => void this.beat(), this.heartbeatMs);
    this.heartbeat.unref?.();
  }

  private async beat(): Promise<void> {
    try {
      await this.http.request({
        method: 'GET',
        path: '/version',
        what: 'heartbeat',
        timeoutMs: Math.max(500, this.heartbeatMs),
      });
      if (this.heartbeatFailingSince !== undefined) {
        this.log('the apiserver answers again; restarting watches');
        this.heartbeatFailingSince = undefined;
        // Watches opened while it hung may still be waiting for an answer that never comes (client-node only
        // gives up after 30 s of silence): restart them all from their last resourceVersion.
        for (const state of this.informers) {
          if (state.timer) clearTimeout(state.timer);
          state.timer = undefined;
          await state.informer.stop();
          if (!this.stopped) void this.run(state, true);
        }
      }
    } catch (err) {
      if (this.heartbeatFailingSince === undefined)
        this.log(`the apiserver does not answer: ${err instanceof Error ? err.message : String(err)}`);
      this.heartbeatFailingSince ??= Date.now();
    }
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
    return this.informers.length === CACHED_KINDS.length && this.informers.every((i) => i.synced);
  }

  /** Synced and no informer failing for longer than the grace period. */
  ready(now = Date.now()): boolean {
    const ok = (since: number | undefined) => since === undefined || now - since < this.unreachableAfterMs;
    return this.synced() && ok(this.heartbeatFailingSince) && this.informers.every((i) => ok(i.failingSince));
  }

  problems(): string[] {
    const beat = this.heartbeatFailingSince === undefined ? [] : ['apiserver: heartbeat failing'];
    return beat.concat(
      this.informers.filter((i) => i.lastError && i.failingSince !== undefined).map((i) => `${i.kind}: ${i.lastError}`),
    );
  }

  onChange(listener: (e: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.heartbeat) clearInterval(this.heartbeat);
    for (const i of this.informers) {
      if (i.timer) clearTimeout(i.timer);
      await i.informer.stop();
    }
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

  private resolve(kind: CachedKind, keys: Set<Key> | undefined): KObject[] {
    if (!keys) return [];
    const objects = this.index(kind).objects;
    const out: KObject[] = [];
    for (const k of keys) {
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

  private async startInformer(kind: CachedKind, watch: Watch): Promise<void> {
    const r = RESOURCES[kind];
    const selector = LABEL_SELECTORS[kind];
    const path = resourcePath(r);
    const listFn = async () => {
      const query = selector ? `?labelSelector=${encodeURIComponent(selector)}` : '';
      const list = await this.http.request<KubernetesListObject<KubernetesObject>>({
        method: 'GET',
        path: `${path}${query}`,
        what: `listing ${r.plural}`,
        timeoutMs: 60_000,
      });
      state.synced = true;
      return list;
    };
    const informer = new ListWatch<KubernetesObject>(path, watch, listFn, false, selector);
    const state: InformerState = {
      kind,
      informer,
      synced: false,
      failingSince: undefined,
      lastError: '',
      backoffMs: 0,
      timer: undefined,
    };
    this.informers.push(state);
    const emit = (type: ChangeType) => (obj: KubernetesObject) => {
      const o = obj as unknown as KObject;
      if (type === 'DELETED') this.index(kind).drop(o);
      else this.index(kind).put(o);
      this.healthy(state);
      const event: ChangeEvent = { kind, type, object: o };
      for (const l of this.listeners) l(event);
    };
    informer.on('add', emit('ADDED'));
    informer.on('update', emit('MODIFIED'));
    informer.on('delete', emit('DELETED'));
    informer.on('error', (err: unknown) => this.failed(state, err));
    await this.run(state);
  }

  private async run(state: InformerState, probe = false): Promise<void> {
    try {
      if (probe) {
        // A restart first proves the apiserver answers for this kind (a one-item list): the informer's own
        // 'connect' fires before its watch request is even sent, so it cannot tell recovery from another failure.
        await this.http.request({
          method: 'GET',
          path: `${resourcePath(RESOURCES[state.kind])}?limit=1`,
          what: `probing ${RESOURCES[state.kind].plural}`,
        });
        this.healthy(state);
      }
      await state.informer.start();
    } catch (err) {
      this.failed(state, err);
    }
  }

  private healthy(state: InformerState): void {
    if (state.failingSince !== undefined) this.log(`watch on ${state.kind} recovered`);
    state.failingSince = undefined;
    state.lastError = '';
    state.backoffMs = 0;
  }

  /** client-node stopped this informer: restart it after a growing delay, keeping the cached objects. */
  private failed(state: InformerState, err: unknown): void {
    if (this.stopped) return;
    if (err instanceof CorralError && err.code === 'NOT_FOUND') {
      // The kind's CRD is not installed (e.g. a cluster without CDI): that is an empty kind, not an outage.
      // Count it as synced and look again now and then, in case it gets installed.
      if (!state.synced)
        this.log(`${state.kind} is not served by this cluster (CRD not installed); treating it as empty`);
      state.synced = true;
      state.failingSince = undefined;
      state.lastError = '';
      state.backoffMs = this.maxBackoffMs;
      if (state.timer) clearTimeout(state.timer);
      state.timer = setTimeout(() => {
        state.timer = undefined;
        if (!this.stopped) void this.run(state, false);
      }, this.maxBackoffMs * 2);
      state.timer.unref?.();
      return;
    }
    const message = err instanceof Error ? err.message : String((err as { message?: unknown })?.message ?? err);
    state.failingSince ??= Date.now();
    if (message !== state.lastError) this.log(`watch on ${state.kind} failed (${message}); retrying`);
    state.lastError = message;
    state.backoffMs = Math.min(state.backoffMs ? state.backoffMs * 2 : 1000, this.maxBackoffMs);
    if (state.timer) clearTimeout(state.timer);
    state.timer = setTimeout(() => {
      state.timer = undefined;
      if (!this.stopped) void this.run(state, true);
    }, state.backoffMs);
    state.timer.unref?.();
  }
}
