/**
 * The metrics store: after every sampling round of the cluster layer (metrics.k8s.io plus the kubelets' network and
 * disk counters, see src/server/cluster/metrics-sampler.ts) it records one point per running VM into that VM's
 * rings (src/server/domain/metrics-ring.ts) and publishes a small fleet/node summary. Every read is served from
 * memory; nothing here calls the cluster.
 *
 * - A VM is keyed `namespace/name` (its VMI and launcher pod carry the same name) and measured through its
 *   launcher pod's `compute` container (usage.ts). A VM re-created under the same name starts a fresh history.
 * - "Runs now" means "measured in the newest round"; fleet and node histories are sums over those VMs (api.md), a
 *   node's being the VMs that run on it now. Series of deleted VMs are dropped at the next round.
 * - A failed round (metrics-server away) records nothing and marks the store stale; the history stays as it was.
 */
import type {
  HistoryPoint,
  HistoryWindow,
  MetricsFollowEvent,
  MetricsTick,
  TopRow,
  VmMetrics,
} from '../schemas/metrics';
import type { DomainDeps } from './deps';
import {
  decode,
  pointOf,
  type Reading,
  SERIES,
  SERIES_COUNT,
  SeriesBlock,
  TickClock,
  WINDOW_SPECS,
} from './metrics-ring';
import { launcherPod } from './usage';
import { asDict, asString } from './vm-facts';

const COMPUTE_CONTAINER = 'compute';

/** One VM's reading in a round, as the store records it. */
export interface VmReading {
  namespace: string;
  name: string;
  /** The VM's (or a standalone VMI's) uid: a new uid under the same name starts a fresh history. */
  uid: string;
  node: string;
  reading: Reading;
}

interface VmSeries {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  /** The round that last measured this VM (-1: never). */
  lastTick: number;
  block: SeriesBlock;
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;

export class MetricsStore {
  private readonly clock = new TickClock();
  private readonly vms = new Map<string, VmSeries>();
  private stale = false;
  private readonly sums = new Map<string, HistoryPoint[]>();
  private readonly listeners = new Set<(tick: MetricsTick) => void>();
  private readonly recordListeners = new Set<(t: number, readings: readonly VmReading[]) => void>();
  private readonly stopSampling: () => void;
  private last: MetricsTick | undefined;

  constructor(private readonly deps: DomainDeps) {
    this.stopSampling = deps.cluster.metrics?.onSample?.((ok) => (ok ? this.sample() : this.markStale())) ?? (() => {});
  }

  close(): void {
    this.stopSampling();
    this.listeners.clear();
  }

  /** True after metrics-server stopped answering; cleared by the next good round. */
  isStale(): boolean {
    return this.stale;
  }

  /** Rounds recorded so far. */
  rounds(): number {
    return this.clock.count();
  }

  /** VMs holding a history (running or stopped, not deleted). */
  size(): number {
    return this.vms.size;
  }

  /** Reads the cluster layer's newest sample into one round: every VMI whose launcher pod was measured. */
  sample(): void {
    const metrics = this.deps.cluster.metrics;
    if (!metrics) return;
    const cache = this.deps.cluster.cache;
    const readings: VmReading[] = [];
    for (const vmi of cache.list('VirtualMachineInstance')) {
      const namespace = vmi.metadata.namespace ?? '';
      const name = vmi.metadata.name ?? '';
      const pod = launcherPod(this.deps, vmi);
      const podName = pod?.metadata.name;
      if (!podName) continue;
      const usage = metrics.pod(namespace, podName, COMPUTE_CONTAINER);
      if (!usage) continue;
      const io = metrics.podIo?.(namespace, podName);
      readings.push({
        namespace,
        name,
        uid: (cache.get('VirtualMachine', namespace, name) ?? vmi).metadata.uid ?? '',
        node: asString(asDict(vmi.status).nodeName) ?? '',
        reading: { cpu: usage.cpuCores * 1000, mem: usage.memoryBytes, ...io },
      });
    }
    this.record(metrics.sampledAt() || Date.now(), readings);
  }

  /** Records one round at time `t`, drops the series of VMs that no longer exist, and tells the listeners. */
  record(t: number, readings: readonly VmReading[]): void {
    const at = this.clock.advance(t);
    for (const r of readings) {
      const k = key(r.namespace, r.name);
      let series = this.vms.get(k);
      if (!series || series.uid !== r.uid) {
        series = {
          namespace: r.namespace,
          name: r.name,
          uid: r.uid,
          node: r.node,
          lastTick: -1,
          block: new SeriesBlock(),
        };
        this.vms.set(k, series);
      }
      series.block.write(at, r.reading);
      series.lastTick = at.tick;
      series.node = r.node;
    }
    const cache = this.deps.cluster.cache;
    for (const series of this.vms.values()) {
      if (series.lastTick === at.tick) continue;
      const owner =
        cache.get('VirtualMachine', series.namespace, series.name) ??
        cache.get('VirtualMachineInstance', series.namespace, series.name);
      if (!owner || (owner.metadata.uid ?? '') !== series.uid) this.vms.delete(key(series.namespace, series.name));
      else series.block.write(at, undefined);
    }
    this.stale = false;
    this.sums.clear();
    for (const l of this.recordListeners) l(t, readings);
    this.publish(this.summary(t));
  }

  /**
   * Called with each recorded round's raw readings before the summary goes out: for readers that fold every round
   * into their own state (the Proxmox I/O counters, io-counters.ts) without a per-VM lookup in the rings.
   */
  onRecord(listener: (t: number, readings: readonly VmReading[]) => void): () => void {
    this.recordListeners.add(listener);
    return () => this.recordListeners.delete(listener);
  }

  /** metrics-server stopped answering: keep everything, say so once. */
  markStale(): void {
    if (this.stale) return;
    // Also before any round: a cluster that never had metrics-server reads as stale with no sample time, which the
    // UI words as "metrics-server is not installed or not answering" rather than "no samples yet".
    this.stale = true;
    if (this.last) this.publish({ ...this.last, stale: true });
  }

  /** The newest reading of a VM; nulls when it was not measured in the newest round (stopped, no metrics-server). */
  vmNow(namespace: string, name: string): VmMetrics {
    const series = this.vms.get(key(namespace, name));
    const running = series && series.lastTick === this.newestTick();
    const slot = this.clock.newestSlot();
    const value = (s: number) => {
      if (!running) return null;
      const v = decode(series.block.code('hour', slot, s));
      return Number.isNaN(v) ? null : v;
    };
    return {
      t: running ? (this.clock.newestTime() ?? null) : null,
      cpu: value(0),
      mem: value(1),
      netin: value(2),
      netout: value(3),
      diskread: value(4),
      diskwrite: value(5),
      stale: this.stale,
    };
  }

  /** A VM's retained points, oldest first; empty when it has none. */
  vmHistory(namespace: string, name: string, window: HistoryWindow): HistoryPoint[] {
    const series = this.vms.get(key(namespace, name));
    if (!series) return [];
    const out: HistoryPoint[] = [];
    const open = this.clock.openSlot(window);
    for (const { slot, t } of this.clock.slots(window)) {
      const point = pointOf(t, (s) => series.block.value(window, slot, s, open));
      if (point) out.push(point as HistoryPoint);
    }
    return out;
  }

  /** The sum over the VMs that run now (on `node` when given), oldest first. Computed once per round and window. */
  sumHistory(window: HistoryWindow, node?: string): HistoryPoint[] {
    const cacheKey = `${window}/${node ?? ''}`;
    const cached = this.sums.get(cacheKey);
    if (cached) return cached;
    const size = WINDOW_SPECS[window].slots * SERIES_COUNT;
    const sums = new Float64Array(size);
    const present = new Uint8Array(size);
    const open = this.clock.openSlot(window);
    for (const series of this.running(node)) series.block.addInto(window, sums, present, open);
    const out: HistoryPoint[] = [];
    for (const { slot, t } of this.clock.slots(window)) {
      const base = slot * SERIES_COUNT;
      const point = pointOf(t, (s) => (present[base + s] ? sums[base + s]! : Number.NaN));
      if (point) out.push(point as HistoryPoint);
    }
    this.sums.set(cacheKey, out);
    return out;
  }

  /** The newest reading of every VM that runs now (on `node`), busiest first by `by`. */
  top(by: 'cpu' | 'mem', node?: string, limit?: number): TopRow[] {
    const slot = this.clock.newestSlot();
    const s = by === 'cpu' ? 0 : 1;
    const rows: (TopRow & { key: number })[] = [];
    for (const series of this.running(node)) {
      const cpu = decode(series.block.code('hour', slot, 0));
      if (Number.isNaN(cpu)) continue;
      const mem = decode(series.block.code('hour', slot, 1));
      const sortKey = decode(series.block.code('hour', slot, s));
      rows.push({
        namespace: series.namespace,
        name: series.name,
        node: series.node,
        cpu,
        ...(Number.isNaN(mem) ? {} : { mem }),
        key: Number.isNaN(sortKey) ? -1 : sortKey,
      });
    }
    rows.sort((a, b) => b.key - a.key || a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name));
    return rows.slice(0, limit ?? rows.length).map(({ key: _key, ...row }) => row);
  }

  /** Called with the fleet/node summary after each round (and once when the store turns stale). */
  subscribe(listener: (tick: MetricsTick) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called with one VM's new point after each round: what an open VM page's chart appends. */
  follow(namespace: string, name: string, listener: (e: MetricsFollowEvent) => void): () => void {
    return this.subscribe((tick) => {
      const series = this.vms.get(key(namespace, name));
      const slot = this.clock.newestSlot();
      const point =
        series && series.lastTick === this.newestTick() && !tick.stale
          ? pointOf(tick.t, (s) => decode(series.block.code('hour', slot, s)))
          : undefined;
      listener({ t: tick.t, stale: tick.stale, ...(point ? { point: point as HistoryPoint } : {}) });
    });
  }

  private newestTick(): number {
    return this.clock.count() - 1;
  }

  private *running(node?: string): Iterable<VmSeries> {
    const newest = this.newestTick();
    for (const series of this.vms.values())
      if (series.lastTick === newest && (node === undefined || series.node === node)) yield series;
  }

  /** Fleet and per-node sums of the newest round (zeros when nothing runs). */
  private summary(t: number): MetricsTick {
    const slot = this.clock.newestSlot();
    const fleet = new Float64Array(SERIES_COUNT);
    const fleetSeen = new Uint8Array(SERIES_COUNT);
    const nodes = new Map<string, { sums: Float64Array; seen: Uint8Array }>();
    const newest = this.newestTick();
    const base = slot * SERIES_COUNT; // the hour window starts the block
    for (const series of this.vms.values()) {
      if (series.lastTick !== newest) continue;
      let n = nodes.get(series.node);
      if (!n)
        nodes.set(series.node, (n = { sums: new Float64Array(SERIES_COUNT), seen: new Uint8Array(SERIES_COUNT) }));
      const values = series.block.values;
      for (let s = 0; s < SERIES_COUNT; s++) {
        const v = decode(values[base + s]!);
        if (v !== v) continue; // not measured
        fleet[s]! += v;
        fleetSeen[s] = 1;
        n.sums[s]! += v;
        n.seen[s] = 1;
      }
    }
    const point = (sums: Float64Array, seen: Uint8Array): HistoryPoint => {
      const p: Record<string, number> = { t, cpu: sums[0]! };
      for (let s = 1; s < SERIES_COUNT; s++) if (seen[s]) p[SERIES[s]!] = sums[s]!;
      return p as HistoryPoint;
    };
    return {
      type: 'metrics',
      t,
      stale: false,
      fleet: fleetSeen[0] ? point(fleet, fleetSeen) : { t, cpu: 0, mem: 0 },
      nodes: [...nodes]
        .filter(([name]) => name !== '')
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, n]) => ({ name, point: point(n.sums, n.seen) })),
    };
  }

  private publish(tick: MetricsTick): void {
    if (!tick.stale) this.last = tick;
    for (const l of this.listeners) l(tick);
  }
}
