// Applies the `live.fleet` events (docs/server.md) to the browser's copy of the fleet. A snapshot replaces
// everything — that is how a reconnect resyncs — and each later event changes one row.
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
  /** False until the first snapshot arrives. */
  synced = false;
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
   * A first picture of the fleet from the plain-JSON REST lists, shown while the stream's snapshot (the same data
   * through superjson, several times slower to produce at thousands of VMs) is on its way. Ignored once a
   * snapshot has arrived, so it can never overwrite newer data.
   */
  prefill(vms: VmRow[], nodes: NodeRow[], cts: CtRow[] = []): boolean {
    if (this.synced) return false;
    // The REST lists put the default cluster's rows first; one context among them means one cluster (plain keys).
    const contexts = new Set([...vms, ...nodes].map((r) => r.context));
    this.defaultContext = contexts.size > 1 ? (vms[0]?.context ?? nodes[0]?.context ?? '') : '';
    this.vms.replaceAll(vms);
    this.nodes.replaceAll(nodes);
    this.cts.replaceAll(cts);
    this.synced = true;
    this.notifier.changed();
    return true;
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
