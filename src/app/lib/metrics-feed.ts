// The `metrics` events of the one `live.fleet` stream (fleet and per-node sums after each sampling round), kept
// apart from the FleetState so a sample every 15 s re-renders the charts that listen, not every table and tree.
import type { MetricsTick } from '@/server/schemas/metrics';

export class MetricsFeed {
  /** The newest tick since the page opened (null before the first sampling round after that). */
  latest: MetricsTick | null = null;
  private readonly listeners = new Set<(tick: MetricsTick) => void>();

  push(tick: MetricsTick): void {
    this.latest = tick;
    for (const l of this.listeners) l(tick);
  }

  subscribe(listener: (tick: MetricsTick) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
