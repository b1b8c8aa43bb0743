/**
 * Several clusters at once: one `CorralServices` (watch cache, fleet view, journal, live feed, ...) per served kube
 * context, keyed by the context's name, in configured order; the first is the default every request without a
 * `context` acts on, so single-cluster clients see no difference. Built in the composition root (start.ts).
 *
 * Procedures find the registry from the services they were given (`registryOf`), so the tRPC context, the REST
 * handler and every test that builds services directly keep their shape: lone services form a registry of one.
 */
import { CorralError } from '../errors';
import type { ClusterStatus } from '../schemas/contexts';
import type { FleetEvent } from '../schemas/live';
import type { Task } from '../schemas/tasks';
import { ClustersFeed, type FleetFeed } from './live-clusters';
import type { DomainDeps } from './deps';
import type { Identity } from './identity';
import type { CorralServices } from './services';
import { firstByName, type FirstPage } from './vm-first-page';

const registries = new WeakMap<CorralServices, ClusterRegistry>();

export class ClusterRegistry {
  private readonly byContext = new Map<string, CorralServices>();
  private merged: ClustersFeed | undefined;
  private joined: { lists: Buffer[]; body: Buffer } | undefined;
  private firstJoined: { pages: FirstPage[]; page: FirstPage } | undefined;

  constructor(private readonly entries: readonly CorralServices[]) {
    if (entries.length === 0) throw new Error('a cluster registry needs at least one cluster');
    for (const s of entries) {
      const context = s.cluster.info.context;
      if (this.byContext.has(context)) throw new CorralError('BAD_REQUEST', `context ${context} is configured twice`);
      this.byContext.set(context, s);
      registries.set(s, this);
    }
    if (entries.length > 1) {
      const peers = {
        get: (context: string): DomainDeps | undefined => this.byContext.get(context)?.deps,
        all: (): DomainDeps[] => this.entries.map((e) => e.deps),
      };
      for (const s of entries) s.deps.peers = peers;
    }
  }

  get default(): CorralServices {
    return this.entries[0]!;
  }

  get size(): number {
    return this.entries.length;
  }

  contexts(): string[] {
    return this.entries.map((s) => s.cluster.info.context);
  }

  all(): readonly CorralServices[] {
    return this.entries;
  }

  /** The services of `context` (the default when absent); an unknown context is a 404 naming it and the known ones. */
  get(context?: string): CorralServices {
    if (context === undefined) return this.default;
    const found = this.byContext.get(context);
    if (!found)
      throw new CorralError(
        'NOT_FOUND',
        `context ${context} is not served by this Corral (contexts: ${this.contexts().join(', ')})`,
      );
    return found;
  }

  /** Rows of one cluster when `context` is given, else of every cluster in configured order. */
  rows<T>(context: string | undefined, read: (services: CorralServices) => T[]): T[] {
    if (context !== undefined) return read(this.get(context));
    if (this.entries.length === 1) return read(this.default);
    return this.entries.flatMap(read);
  }

  /** Tasks newest first: one cluster's, or every cluster's merged (each journal is its own cluster's). */
  tasks(limit = 100, context?: string): Task[] {
    if (context !== undefined || this.entries.length === 1) return this.get(context).tasks.list(limit);
    return this.entries
      .flatMap((s) => s.tasks.list(limit))
      .sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0))
      .slice(0, limit);
  }

  /** One task by id: in `context`'s journal, or without a context in whichever cluster's journal holds it. */
  task(id: string, context?: string): Task {
    return this.holding(id, context).tasks.get(id); // a task no journal holds: its NOT_FOUND message
  }

  /** Cancels a running task (tasks.ts `TaskJournal.cancel`), looked up as `task` looks it up. */
  cancelTask(id: string, by: Identity, context?: string): Task {
    const services = this.holding(id, context);
    services.tasks.get(id); // the NOT_FOUND of a task no journal holds
    return services.journal.cancel(id, by);
  }

  /** The services of `context`, or without one those whose journal holds task `id` (the default when none). */
  private holding(id: string, context?: string): CorralServices {
    if (context !== undefined || this.entries.length === 1) return this.get(context);
    return this.entries.find((s) => s.journal.get(id) !== undefined) ?? this.default;
  }

  /**
   * `GET /api/vms` for every cluster: each fleet view keeps its list as ready JSON, so the union is a join of those
   * buffers (no parse, no re-serialisation).
   */
  vmListJson(): Buffer {
    if (this.entries.length === 1) return this.default.vms.listJson();
    const lists = this.entries.map((s) => s.vms.listJson());
    // Each fleet view hands out the same Buffer until its fleet changes: so can the union.
    if (this.joined && lists.every((b, i) => b === this.joined!.lists[i])) return this.joined.body;
    const parts: Buffer[] = [];
    for (const json of lists) {
      if (json.length <= 2) continue; // "[]"
      if (parts.length > 0) parts.push(COMMA);
      parts.push(json.subarray(1, json.length - 1));
    }
    const body = Buffer.concat([OPEN, ...parts, CLOSE]);
    this.joined = { lists, body };
    return body;
  }

  /**
   * `GET /api/vms?limit=` for every cluster: the first page of the union is the first page of the clusters' first
   * pages (each already in name order, the default cluster first, as the merged list keeps them). Each cluster's
   * page is cached per fleet version, and so is the union while none of them changes.
   */
  vmFirstPage(limit: number): FirstPage {
    if (this.entries.length === 1) return this.default.vms.firstPage(limit);
    const pages = this.entries.map((s) => s.vms.firstPage(limit));
    if (this.firstJoined && pages.every((p, i) => p === this.firstJoined!.pages[i])) return this.firstJoined.page;
    const page: FirstPage = {
      rows: firstByName(
        pages.flatMap((p) => p.rows),
        limit,
      ),
      total: pages.reduce((n, p) => n + p.total, 0),
      templates: pages.reduce((n, p) => n + p.templates, 0),
      running: pages.reduce((n, p) => n + p.running, 0),
    };
    this.firstJoined = { pages, page };
    return page;
  }

  status(): ClusterStatus[] {
    return this.entries.map((s, i) => {
      const ready = s.cluster.isReady();
      return {
        context: s.cluster.info.context,
        name: s.cluster.info.name,
        server: s.cluster.info.server,
        demo: s.cluster.info.demo,
        default: i === 0,
        ready,
        problems: ready ? [] : (s.cluster.readinessProblems?.() ?? ['the cluster does not answer']),
      };
    });
  }

  /** One snapshot over every cluster (the live feed's first event); `ready` is the default cluster's. */
  snapshot(): FleetEvent {
    if (this.entries.length === 1) return this.default.snapshot();
    const shots = this.entries.map((s) => s.snapshot());
    const first = shots[0]!;
    if (first.type !== 'snapshot') return first;
    const merged = {
      ...first,
      vms: [...first.vms],
      cts: [...first.cts],
      nodes: [...first.nodes],
      tasks: [...first.tasks],
    };
    for (const shot of shots.slice(1)) {
      if (shot.type !== 'snapshot') continue;
      merged.vms.push(...shot.vms);
      merged.cts.push(...shot.cts);
      merged.nodes.push(...shot.nodes);
      merged.tasks.push(...shot.tasks);
    }
    merged.tasks.sort((a, b) => (a.startedAt < b.startedAt ? 1 : a.startedAt > b.startedAt ? -1 : 0));
    return { ...merged, clusters: this.status() };
  }

  /** The live feed: the one cluster's own, or one stream over every cluster's (live-clusters.ts). */
  feed(): FleetFeed {
    if (this.entries.length === 1) return this.default.live;
    this.merged ??= new ClustersFeed(this);
    return this.merged;
  }

  close(): void {
    this.merged?.close();
    for (const s of this.entries) registries.delete(s);
  }
}

const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');
const COMMA = Buffer.from(',');

/** The registry `services` belong to; services created on their own are a registry of one. */
export function registryOf(services: CorralServices): ClusterRegistry {
  return registries.get(services) ?? new ClusterRegistry([services]);
}
