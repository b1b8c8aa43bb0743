/**
 * The fleet as Prometheus series (the original's ADR-0011), for `GET /metrics` with `corral web --metrics`.
 *
 * A timer builds a snapshot from memory (the watch cache, the fleet rows, the metrics.k8s.io sample, the task
 * counters) and renders it once into bytes; a scrape sends those bytes and three small collection lines. So a
 * scrape costs the same at 10 VMs as at 10,000 and two Prometheis cost nothing extra. The price is staleness, so
 * the staleness is a series: corral_collection_age_seconds is computed at scrape time from the snapshot's moment,
 * and grows when the collector stops or every attempt fails (the last good snapshot keeps being served, marked
 * corral_collection_success 0).
 *
 * With several replicas (docs/deploy.md, "Scraping several replicas") a Prometheus scraping every pod must not
 * count the fleet twice: only the leader serves the fleet families (instances, usage, pools, backends), every
 * replica serves the series that describe itself — the collection lines, corral_replica_leader and the tasks it
 * ran itself (corral_tasks_total, labelled `replica`), so a sum over pods counts each task once.
 */
import type { Task } from '../schemas/tasks';
import type { VmRow } from '../schemas/vms';
import type { ResourceUsage } from './cluster-port';
import type { DomainDeps } from './deps';
import { ANNOTATION_SOURCE } from './labels';
import { ExpositionWriter, labelText } from './prometheus-text';
import { vmUsage } from './usage';

/** The only backend this Corral serves; the label exists so series join with a multi-backend Corral's. */
export const BACKEND = 'kubevirt';
export const DEFAULT_COLLECTION_INTERVAL_MS = 15_000;

const HELP = {
  age: 'Seconds since the snapshot these series are rendered from was taken; grows when collection stops',
  duration: 'Seconds the last successful collection took to build its snapshot',
  success: '1 when the last collection succeeded; 0 when it failed, has not run, or collection is off (no --metrics)',
};

/** What `/metrics` answers without --metrics: 200 and "not collecting" as a value (a 503 would record nothing). */
export function collectionOffText(): string {
  return new ExpositionWriter().family('corral_collection_success', 'gauge', HELP.success).sample('', 0).text();
}

interface Snapshot {
  /** Epoch ms the collection started: the moment its data describes. */
  takenAt: number;
  durationSeconds: number;
  /** Every series after the collection families, rendered once. */
  body: Buffer;
  /** Rendered while this replica led: the fleet families are in `body` (served only while it still leads). */
  leader: boolean;
}

export interface PrometheusOptions {
  intervalMs?: number;
  /** Clock (tests). */
  now?: () => number;
  log?: (line: string) => void;
  /** Pool membership (services.pools): without it every instance is ungrouped, pool="". */
  pools?: PoolLookup;
  /** This process as one of several replicas; without it the collector is the only one (always the leader). */
  replica?: ReplicaView;
}

/** What the collector needs of replicas.ts: who this replica is and whether it leads now. */
export interface ReplicaView {
  identity: string;
  isLeader(): boolean;
}

/** What the collector needs of pools: a VM's pool path ('' for none) and every pool's path. */
export interface PoolLookup {
  /** `context`: the cluster the instance is on (pools span every cluster Corral serves). */
  poolOf(namespace: string, name: string, context?: string): string;
  paths(): string[];
}

/** `{"bootc": image}` in the source annotation is how vm-create records a bootc-built VM. */
function isBootc(annotations: Record<string, string> | undefined): boolean {
  const source = annotations?.[ANNOTATION_SOURCE];
  if (!source?.includes('bootc')) return false;
  try {
    const parsed: unknown = JSON.parse(source);
    return typeof parsed === 'object' && parsed !== null && 'bootc' in parsed;
  } catch {
    return false;
  }
}

const EMPTY = Buffer.alloc(0);

/** VMs walked between two yields to the event loop (a few ms of work each). */
const YIELD_EVERY = 500;

const NO_POOLS: PoolLookup = { poolOf: () => '', paths: () => [] };

/** A VM's base label set and its pre-rendered info/running/ready lines. */
interface VmLines {
  /** The pool the lines were rendered with (a row keeps its identity when only its pool changes). */
  pool: string;
  labels: string;
  info: string;
  running: string;
  ready: string;
}

const flag = (b: boolean) => (b ? 'true' : 'false');
const one = (b: boolean) => (b ? 1 : 0);

export class PrometheusCollector {
  readonly intervalMs: number;
  private readonly now: () => number;
  private readonly log: (line: string) => void;
  private snapshot: Snapshot | undefined;
  private lastOk = false;
  private timer: ReturnType<typeof setInterval> | undefined;
  private inFlight: Promise<boolean> | undefined;
  /** Finished tasks by action and outcome since this process started: a true counter, never decreasing. */
  private readonly finished = new Map<string, { action: string; status: string; count: number }>();
  private readonly unsubscribe: () => void;
  private readonly lines = new WeakMap<VmRow, VmLines>();
  private readonly pools: PoolLookup;
  private readonly replica: ReplicaView | undefined;

  constructor(
    private readonly deps: DomainDeps,
    options: PrometheusOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? DEFAULT_COLLECTION_INTERVAL_MS;
    this.now = options.now ?? Date.now;
    this.log = options.log ?? ((line) => console.warn(`[corral] ${line}`));
    this.pools = options.pools ?? NO_POOLS;
    this.replica = options.replica;
    // The journal publishes the final state of a task this process ran exactly once (later updates of a finished
    // task are ignored). Tasks of other replicas (adopted from the shared journal) are theirs to count: a sum over
    // every replica's /metrics then counts each task once. Every served cluster keeps its own journal; the counter
    // is the process's, over all of them.
    const stops = this.clusters().map((d) =>
      d.journal.subscribeLocal((task: Task) => {
        if (task.status === 'running') return;
        const key = `${task.action}\u0000${task.status}`;
        const entry = this.finished.get(key);
        if (entry) entry.count++;
        else this.finished.set(key, { action: task.action, status: task.status, count: 1 });
      }),
    );
    this.unsubscribe = () => stops.forEach((stop) => stop());
  }

  /** Collects now, then every interval. Idempotent. */
  start(): void {
    if (this.timer) return;
    void this.collectNow();
    this.timer = setInterval(() => void this.collectNow(), this.intervalMs);
    this.timer.unref();
  }

  /** True between start() and stop(). */
  get running(): boolean {
    return this.timer !== undefined;
  }

  /** Stops the timer; the last snapshot stays served and its age keeps growing. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  close(): void {
    this.stop();
    this.unsubscribe();
  }

  /**
   * One collection (or the one already running: a slow build is never started twice). A failure keeps the
   * previous snapshot (ageing) and reports success 0; it never rejects.
   */
  collectNow(): Promise<boolean> {
    this.inFlight ??= this.collect().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  /** A collection that starts after this call even when one is running (whose result may predate a change). */
  async recollect(): Promise<boolean> {
    await this.inFlight;
    return this.collectNow();
  }

  private async collect(): Promise<boolean> {
    const started = this.now();
    const t0 = performance.now();
    try {
      const leader = this.leads();
      const body = Buffer.from((leader ? await this.renderFleet() : '') + this.renderOwn(), 'utf8');
      // Microseconds are plenty, and a rounded number reads better than 0.0005637679999999819.
      const durationSeconds = Math.round((performance.now() - t0) * 1000) / 1e6;
      this.snapshot = { takenAt: started, durationSeconds, body, leader };
      this.lastOk = true;
    } catch (err) {
      if (this.lastOk) this.log(`metrics collection failed: ${err instanceof Error ? err.message : String(err)}`);
      this.lastOk = false;
    }
    return this.lastOk;
  }

  /**
   * The exposition: the snapshot's bytes (`fleet`, the same Buffer until the next collection, so a transport may
   * cache what it derives from it) and the collection lines computed now, which go last.
   */
  render(now = this.now()): { fleet: Buffer; collection: string } {
    const w = new ExpositionWriter();
    const snap = this.snapshot;
    w.family('corral_collection_age_seconds', 'gauge', HELP.age);
    if (snap) w.sample('', Math.max(0, now - snap.takenAt) / 1000);
    w.family('corral_collection_duration_seconds', 'gauge', HELP.duration);
    if (snap) w.sample('', snap.durationSeconds);
    w.family('corral_collection_success', 'gauge', HELP.success).sample('', one(this.lastOk));
    // A snapshot taken while leading is not served once another replica leads (it serves the fleet now); the next
    // collection renders this replica's own series alone. Until then this replica serves only its collection lines.
    const fleet = snap && snap.leader && !this.leads() ? EMPTY : (snap?.body ?? EMPTY);
    return { fleet, collection: w.text() };
  }

  /** Whether this replica serves the fleet families now. */
  private leads(): boolean {
    return this.replica?.isLeader() ?? true;
  }

  /** The series of this replica itself: served by every replica. */
  private renderOwn(): string {
    const w = new ExpositionWriter();
    const own: [string, string][] = this.replica ? [['replica', this.replica.identity]] : [];
    if (this.replica) {
      w.family('corral_replica_leader', 'gauge', '1 on the replica that leads (and serves the fleet series), else 0');
      w.sample(labelText(own), one(this.leads()));
    }
    w.family(
      'corral_tasks_total',
      'counter',
      'Tasks this replica ran and finished since it started, by action and outcome',
    );
    for (const t of [...this.finished.values()].sort((a, b) =>
      a.action === b.action ? a.status.localeCompare(b.status) : a.action.localeCompare(b.action),
    ))
      w.sample(labelText([['action', t.action], ['status', t.status], ...own]), t.count);
    return w.text();
  }

  /**
   * A VM's label set and its three fixed lines. The fleet view replaces a row object whenever the VM, its VMI or
   * its pod changes, so the row's identity is the cache key: at 10,000 VMs a collection re-renders only the VMs
   * that changed since the last one. (bootc comes from the source annotation written at creation; a VM created
   * again under the same name has a new uid, which is in its row, so it gets a new row and new lines.)
   */
  private linesOf(r: VmRow, d: DomainDeps): VmLines {
    const context = d.cluster.info.context;
    const pool = this.pools.poolOf(r.namespace, r.name, context);
    let l = this.lines.get(r);
    if (l && l.pool === pool) return l;
    const pairs: [string, string][] = [
      ['name', r.name],
      ['backend', BACKEND],
      ['context', context],
      ['namespace', r.namespace],
      ['pool', pool],
    ];
    const labels = labelText(pairs);
    const vm = d.cluster.cache.get('VirtualMachine', r.namespace, r.name);
    const info = labelText([
      ...pairs,
      ['node', r.node],
      ['template', flag(r.template)],
      ['bootc', flag(isBootc(vm?.metadata.annotations))],
    ]);
    l = {
      pool,
      labels,
      info: `corral_instance_info${info} 1\n`,
      running: `corral_instance_running${labels} ${one(r.running)}\n`,
      ready: `corral_instance_ready${labels} ${one(r.ready)}\n`,
    };
    this.lines.set(r, l);
    return l;
  }

  /** Every cluster this Corral serves (registry.ts), the default first; one when it serves one. */
  private clusters(): DomainDeps[] {
    return this.deps.peers?.all() ?? [this.deps];
  }

  private async renderFleet(): Promise<string> {
    const clusters = this.clusters();
    const contextLabels = (d: DomainDeps) =>
      labelText([
        ['context', d.cluster.info.context],
        ['backend', BACKEND],
      ]);
    const w = new ExpositionWriter();

    // An unreachable cluster is reported as down, never as empty: its last-known instances stay listed below.
    w.family('corral_backend_up', 'gauge', '1 when the cluster cache is synced and the cluster reachable');
    for (const d of clusters) w.sample(contextLabels(d), one(d.cluster.isReady()));
    w.family('corral_backend_error', 'gauge', '1 when a watch or the heartbeat of this cluster is failing now');
    for (const d of clusters) w.sample(contextLabels(d), one((d.cluster.readinessProblems?.() ?? []).length > 0));

    const rows: VmRow[] = [];
    const lines: VmLines[] = [];
    // Usage, as metrics-server measured the launcher's compute container; no reading → no series, never a fake 0.
    const measured: { labels: string; usage: ResourceUsage }[] = [];
    const states: { context: string; ready: number; running: number; stopped: number }[] = [];
    for (const d of clusters) {
      const own = d.fleet.vmRows();
      const state = { context: d.cluster.info.context, ready: 0, running: 0, stopped: 0 };
      states.push(state);
      for (let i = 0; i < own.length; i++) {
        // The server keeps answering while a big fleet is collected: the walk yields every few hundred VMs.
        if (i > 0 && i % YIELD_EVERY === 0) await new Promise((resolve) => setImmediate(resolve));
        const r = own[i]!;
        const l = this.linesOf(r, d);
        rows.push(r);
        lines.push(l);
        const usage = r.running ? vmUsage(d, r.namespace, r.name) : undefined;
        if (usage) measured.push({ labels: l.labels, usage });
        // One state per instance, so the three rows sum to the fleet.
        if (r.ready) state.ready++;
        else if (r.running) state.running++;
        else state.stopped++;
      }
    }
    w.family('corral_instance_info', 'gauge', 'Static facts about an instance; the value is always 1');
    for (const l of lines) w.line(l.info);
    w.family('corral_instance_running', 'gauge', '1 when an instance of the VM exists and has not finished');
    for (const l of lines) w.line(l.running);
    w.family('corral_instance_ready', 'gauge', '1 when the VM is running and KubeVirt reports it ready');
    for (const l of lines) w.line(l.ready);

    w.family('corral_instance_cpu_cores', 'gauge', 'CPU cores the instance uses (metrics.k8s.io); absent unmeasured');
    for (const m of measured) w.sample(m.labels, m.usage.cpuCores);
    w.family('corral_instance_memory_bytes', 'gauge', 'Memory the instance uses in bytes (metrics.k8s.io)');
    for (const m of measured) w.sample(m.labels, m.usage.memoryBytes);

    w.family('corral_instances', 'gauge', 'Instances by state: ready, running (not ready), stopped');
    for (const s of states)
      for (const [state, n] of [
        ['ready', s.ready],
        ['running', s.running],
        ['stopped', s.stopped],
      ] as const)
        w.sample(
          labelText([
            ['backend', BACKEND],
            ['context', s.context],
            ['state', state],
          ]),
          n,
        );
    // Every pool, empty ones too (they exist in their own right), and pool="" for the ungrouped instances; a
    // pool counts its own members, so the rows sum to the fleet like sum by (pool) (corral_instance_running).
    const perPool = new Map<string, { instances: number; running: number }>([['', { instances: 0, running: 0 }]]);
    for (const path of this.pools.paths()) perPool.set(path, { instances: 0, running: 0 });
    for (let i = 0; i < rows.length; i++) {
      const pool = lines[i]!.pool;
      let n = perPool.get(pool);
      if (!n) perPool.set(pool, (n = { instances: 0, running: 0 }));
      n.instances++;
      n.running += one(rows[i]!.running);
    }
    const pools = [...perPool.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    w.family(
      'corral_pool_instances',
      'gauge',
      'Instances in a pool (its own members); pool="" is everything ungrouped',
    );
    for (const [pool, n] of pools) w.sample(labelText([['pool', pool]]), n.instances);
    w.family('corral_pool_running', 'gauge', 'Running instances in a pool (its own members)');
    for (const [pool, n] of pools) w.sample(labelText([['pool', pool]]), n.running);
    // No doctor exists in this Corral: the family is declared and has no rows until a real source of checks does.
    w.family('corral_check', 'gauge', '1 when a health check passes (no checks are run yet)');
    return w.text();
  }
}
