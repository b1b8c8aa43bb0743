/**
 * Controller work queue. Store listeners run synchronously inside the write that triggered them; writing from
 * there would deliver nested watch events out of order. So listeners only enqueue keys, and the queue drains on
 * the next macrotask, coalescing repeated events for the same object into one reconcile of its latest state.
 */
export class WorkQueue<T> {
  private readonly pending = new Map<string, T>();
  private scheduled = false;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly reconcile: (item: T) => void,
  ) {}

  add(id: string, item: T): void {
    if (this.stopped) return;
    this.pending.set(id, item);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => this.drain());
  }

  stop(): void {
    this.stopped = true;
    this.pending.clear();
  }

  private drain(): void {
    this.scheduled = false;
    // Bounded batches keep a 10,000-object seed from starving the HTTP server's event loop.
    let budget = 500;
    for (const [id, item] of this.pending) {
      if (this.stopped || budget-- <= 0) break;
      this.pending.delete(id);
      try {
        this.reconcile(item);
      } catch (err) {
        console.error(`[sim] ${this.name} reconcile of ${id} failed:`, err);
      }
    }
    if (this.pending.size && !this.stopped && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }
}
