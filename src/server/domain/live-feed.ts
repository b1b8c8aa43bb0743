/**
 * The `live.fleet` event stream: numbered deltas (VM rows, node rows, tasks, metrics rounds) kept in a bounded ring so a client
 * that reconnects with Last-Event-ID gets exactly what it missed; one that fell out of the ring gets a snapshot.
 */
import type { FleetEvent } from '../schemas/live';
import type { TaskJournal } from './tasks';
import type { FleetView } from './vm-rows';

export interface NumberedEvent {
  id: string;
  event: FleetEvent;
}

export class LiveFeed {
  private readonly ring: NumberedEvent[] = [];
  private seq = 0;
  private readonly listeners = new Set<(e: NumberedEvent) => void>();
  private readonly stops: (() => void)[];
  /** Ids are `<epoch>-<seq>`: a server restart changes the epoch, so old ids never match and force a snapshot. */
  private readonly epoch = Date.now().toString(36);

  constructor(
    fleet: FleetView,
    journal: TaskJournal,
    /** Polled every `readinessPollMs`; a change is published as a `ready` event (the UI's "cluster unreachable" banner). */
    isReady: () => boolean = () => true,
    private readonly capacity = 5000,
    readinessPollMs = 2000,
  ) {
    let ready = isReady();
    const timer = setInterval(() => {
      const now = isReady();
      if (now !== ready) this.push({ type: 'ready', ready: (ready = now) });
    }, readinessPollMs);
    timer.unref?.();
    this.stops = [
      fleet.subscribe((delta) => this.push(delta)),
      journal.subscribe((task) => this.push({ type: 'task', task })),
      () => clearInterval(timer),
    ];
  }

  /** Adds another source of events (the metrics store's `metrics` rounds); it is stopped with the feed. */
  addSource(subscribe: (push: (event: FleetEvent) => void) => () => void): void {
    this.stops.push(subscribe((event) => this.push(event)));
  }

  close(): void {
    for (const stop of this.stops) stop();
    this.listeners.clear();
  }

  /** The id the next snapshot is consistent with (the last delta already reflected in the fleet view). */
  currentId(): string {
    return `${this.epoch}-${this.seq}`;
  }

  /** Events after `lastEventId`, or undefined when that id is unknown or evicted (caller sends a snapshot). */
  since(lastEventId: string): NumberedEvent[] | undefined {
    const [epoch, raw] = lastEventId.split('-');
    const n = Number(raw);
    if (epoch !== this.epoch || !Number.isInteger(n) || n > this.seq) return undefined;
    const first = this.ring[0];
    if (n === this.seq) return [];
    if (!first || Number(first.id.split('-')[1]) > n + 1) return undefined;
    return this.ring.filter((e) => Number(e.id.split('-')[1]) > n);
  }

  subscribe(listener: (e: NumberedEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private push(event: FleetEvent): void {
    const numbered = { id: `${this.epoch}-${++this.seq}`, event };
    this.ring.push(numbered);
    if (this.ring.length > this.capacity) this.ring.splice(0, this.ring.length - this.capacity);
    for (const l of this.listeners) l(numbered);
  }
}
