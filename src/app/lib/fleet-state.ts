// Applies the `live.fleet` events (docs/server.md) to the browser's copy of the fleet. A snapshot replaces
// everything — that is how a reconnect resyncs — and each later event changes one row. On a cold load the rows come
// from the REST lists instead (a first page, then every row) and the stream resumes from the lists' position: its
// `state` event carries the rest of what a snapshot holds (tasks, readiness, the clusters).
import { ChangeNotifier, KeyedCollection, rowKey, type Keyed } from './fleet-store';
import type { ClusterStatus, CtRow, FleetEvent, NodeRow, TaskRow, VmRow } from './model';

/** Newest first; the journal is bounded server-side, and this mirrors that bound. */
const MAX_TASKS = 500;

export class FleetState {
  /** The cluster requests without a context act on; its rows keep plain keys (fleet-store.ts rowKey). */
  defaultContext = '';
  private readonly key = (row: Keyed) => rowKey(row, this.defaultContext);
  readonly vms = new KeyedCollection<VmRow>(this.key);
  /** Containers (CTs), keyed `namespace/name` like VMs. */
  readonly cts = new KeyedCollection<CtRow>(this.key);
  readonly nodes = new KeyedCollection<NodeRow>(this.key);
  /** With several clusters: each one's health, the default first (empty when Corral serves one). */
  clusters: ClusterStatus[] = [];
  private tasksById = new Map<string, TaskRow>();
  private taskList: TaskRow[] | null = null;
  readonly notifier = new ChangeNotifier();
  /** False until the first rows arrive (the first page, the REST lists or a snapshot). */
  synced = false;
  /** True while only the first page of VMs is held (prefillFirst), until the whole list or a snapshot replaces it. */
  partial = false;
  /**
   * While partial: the whole list's counts as the Datacenter counts them (VMs that are not templates, and how many of
   * them run), as the first page's server said them (so the page says 50,000, not 200); undefined when it did not.
   */
  partialCounts: { total: number; running: number } | undefined = undefined;
  /** True once the stream has spoken (a snapshot or a `state`): from then on the REST lists would be older. */
  streamed = false;
  /** The server's view of the cluster: false while its caches are stale or the cluster does not answer. */
  clusterReady = true;
  demo = false;
  cluster = '';

  apply(event: FleetEvent): void {
    switch (event.type) {
      case 'snapshot':
        this.clusters = event.clusters ?? [];
        this.defaultContext = this.clusters[0]?.context ?? '';
        this.vms.replaceAll(event.vms);
        this.cts.replaceAll(event.cts);
        this.nodes.replaceAll(event.nodes);
        this.tasksById = new Map(event.tasks.map((t) => [t.id, t]));
        this.taskList = null;
        this.demo = event.demo;
        this.cluster = event.cluster;
        this.clusterReady = event.ready;
        this.synced = true;
        this.partial = false;
        this.partialCounts = undefined;
        this.streamed = true;
        break;
      case 'state':
        this.applyState(event);
        break;
      case 'vm':
        if (event.op === 'upsert') this.vms.upsert(event.vm);
        else this.vms.remove(this.key(event));
        break;
      case 'ct':
        if (event.op === 'upsert') this.cts.upsert(event.ct);
        else this.cts.remove(this.key(event));
        break;
      case 'node':
        if (event.op === 'upsert') this.nodes.upsert(event.node);
        else this.nodes.remove(this.key(event));
        break;
      case 'task':
        this.tasksById.set(event.task.id, event.task);
        this.taskList = null;
        break;
      case 'ready':
        // With several clusters the banner is about the default one; the tree marks any other that is stale.
        if (event.clusters) this.clusters = event.clusters;
        if (!event.context || event.context === this.defaultContext) this.clusterReady = event.ready;
        break;
    }
    this.notifier.changed();
  }

  /**
   * The fleet from the plain-JSON REST lists: the stream then resumes from their position (only a `state` and the
   * changes since), or — without one — sends a snapshot. Ignored once the stream has spoken, so it can never
   * overwrite newer data.
   */
  prefill(vms: VmRow[], nodes: NodeRow[], cts: CtRow[] = []): boolean {
    if (this.streamed) return false;
    this.setRows(vms, nodes, cts);
    this.partial = false;
    this.notifier.changed();
    return true;
  }

  /**
   * The first screen: the first page of VMs in the table's order (`GET /api/vms?limit=`) with every node and CT,
   * shown while the whole list is on its way. Ignored once any rows are held.
   */
  prefillFirst(vms: VmRow[], nodes: NodeRow[], cts: CtRow[], counts?: { total: number; running: number }): boolean {
    if (this.synced) return false;
    this.setRows(vms, nodes, cts);
    this.partial = true;
    this.partialCounts = counts ? { total: counts.total, running: counts.running } : undefined;
    this.notifier.changed();
    return true;
  }

  private setRows(vms: VmRow[], nodes: NodeRow[], cts: CtRow[]): void {
    // The REST lists put the default cluster's rows first; one context among them means one cluster (plain keys).
    const contexts = new Set<string | undefined>();
    for (const r of nodes) contexts.add(r.context);
    for (const r of vms) contexts.add(r.context);
    this.defaultContext = contexts.size > 1 ? (vms[0]?.context ?? nodes[0]?.context ?? '') : '';
    this.vms.replaceAll(vms);
    this.nodes.replaceAll(nodes);
    this.cts.replaceAll(cts);
    this.synced = true;
    this.partialCounts = undefined;
  }

  /** The snapshot's part besides the rows; the rows are re-keyed if the clusters name another default. */
  private applyState(event: Extract<FleetEvent, { type: 'state' }>): void {
    this.clusters = event.clusters ?? [];
    const defaultContext = this.clusters[0]?.context ?? '';
    if (defaultContext !== this.defaultContext) {
      this.defaultContext = defaultContext;
      for (const rows of [this.vms, this.cts, this.nodes] as KeyedCollection<Keyed>[]) rows.replaceAll(rows.list());
    }
    this.tasksById = new Map(event.tasks.map((t) => [t.id, t]));
    this.taskList = null;
    this.demo = event.demo;
    this.cluster = event.cluster;
    this.clusterReady = event.ready;
    this.synced = true;
    this.streamed = true;
  }

  tasks(): TaskRow[] {
    if (!this.taskList) {
      const sorted = [...this.tasksById.values()].sort((a, b) =>
        a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0,
      );
      if (sorted.length > MAX_TASKS) {
        for (const t of sorted.slice(MAX_TASKS)) this.tasksById.delete(t.id);
        sorted.length = MAX_TASKS;
      }
      this.taskList = sorted;
    }
    return this.taskList;
  }

  task(id: string): TaskRow | undefined {
    return this.tasksById.get(id);
  }
}
