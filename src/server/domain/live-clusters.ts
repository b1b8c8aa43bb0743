/**
 * One `live.fleet` stream over several clusters: every cluster keeps its own LiveFeed (live-feed.ts), and this one
 * re-numbers their events into a single ring so Last-Event-ID resumption works as with one cluster. Rows carry
 * their `context`; deletions and readiness changes get it added here. Metrics rounds are per-cluster sums keyed by
 * node name, so only the default cluster's are forwarded (the Datacenter charts show that cluster).
 */
import type { FleetEvent } from '../schemas/live';
import type { NumberedEvent } from './live-feed';
import type { ClusterRegistry } from './registry';

/** What the `live.fleet` procedure reads: LiveFeed and ClustersFeed both are one. */
export interface FleetFeed {
  currentId(): string;
  since(lastEventId: string): NumberedEvent[] | undefined;
  subscribe(listener: (e: NumberedEvent) => void): () => void;
}

export class ClustersFeed implements FleetFeed {
  private readonly ring: NumberedEvent[] = [];
  private seq = 0;
  private readonly listeners = new Set<(e: NumberedEvent) => void>();
  private readonly stops: (() => void)[] = [];
  /** `m<epoch>-<seq>`: never equal to a single cluster feed's id, and a restart changes the epoch. */
  private readonly epoch = `m${Date.now().toString(36)}`;

  constructor(
    private readonly registry: ClusterRegistry,
    private readonly capacity = 5000,
  ) {
    registry.all().forEach((services, i) => {
      const context = services.cluster.info.context;
      this.stops.push(services.live.subscribe(({ event }) => this.forward(event, context, i === 0)));
    });
  }

  close(): void {
    for (const stop of this.stops) stop();
    this.listeners.clear();
  }

  currentId(): string {
    return `${this.epoch}-${this.seq}`;
  }

  since(lastEventId: string): NumberedEvent[] | undefined {
    const cut = lastEventId.lastIndexOf('-');
    const n = Number(lastEventId.slice(cut + 1));
    if (lastEventId.slice(0, cut) !== this.epoch || !Number.isInteger(n) || n > this.seq) return undefined;
    if (n === this.seq) return [];
    const first = this.ring[0];
    if (!first || this.seqOf(first) > n + 1) return undefined;
    return this.ring.filter((e) => this.seqOf(e) > n);
  }

  subscribe(listener: (e: NumberedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private seqOf(e: NumberedEvent): number {
    return Number(e.id.slice(e.id.lastIndexOf('-') + 1));
  }

  private forward(event: FleetEvent, context: string, isDefault: boolean): void {
    switch (event.type) {
      case 'vm':
      case 'ct':
      case 'node':
        this.push(event.op === 'delete' ? { ...event, context } : event);
        return;
      case 'ready':
        this.push({ type: 'ready', ready: event.ready, context, clusters: this.registry.status() });
        return;
      case 'metrics':
        if (isDefault) this.push(event);
        return;
      default:
        this.push(event);
    }
  }

  private push(event: FleetEvent): void {
    const numbered = { id: `${this.epoch}-${++this.seq}`, event };
    this.ring.push(numbered);
    if (this.ring.length > this.capacity) this.ring.splice(0, this.ring.length - this.capacity);
    for (const l of this.listeners) l(numbered);
  }
}
