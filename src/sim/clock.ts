/**
 * Simulated time for controllers. Delays are written in "real cluster" milliseconds and divided by the speed
 * factor, so the demo looks like a real cluster (speed 1) while tests run the same state machines fast.
 */
export class SimClock {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private readonly origin = Date.now();

  constructor(readonly speed: number = 1) {
    if (!(speed > 0)) throw new Error(`speed must be > 0, got ${speed}`);
  }

  /**
   * Simulated wall-clock time: equal to real time when the cluster starts, then running `speed` times faster. Only
   * calendar-driven controllers (CronJob) read it, so a nightly schedule comes round in seconds in tests; object
   * timestamps stay real time.
   */
  now(): Date {
    const real = Date.now();
    return new Date(this.origin + (real - this.origin) * this.speed);
  }

  /** Run `fn` after `ms` simulated milliseconds. */
  after(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const timer = setTimeout(
      () => {
        this.timers.delete(timer);
        if (this.stopped) return;
        try {
          fn();
        } catch (err) {
          console.error('[sim] controller step failed:', err);
        }
      },
      Math.max(0, Math.round(ms / this.speed)),
    );
    timer.unref?.();
    this.timers.add(timer);
    return () => {
      clearTimeout(timer);
      this.timers.delete(timer);
    };
  }

  /** Run `fn` every `ms` simulated milliseconds until the returned function is called or the clock stops. */
  every(ms: number, fn: () => void): () => void {
    if (this.stopped) return () => {};
    const timer = setInterval(
      () => {
        if (this.stopped) return;
        try {
          fn();
        } catch (err) {
          console.error('[sim] periodic controller step failed:', err);
        }
      },
      Math.max(1, Math.round(ms / this.speed)),
    );
    timer.unref?.();
    this.timers.add(timer);
    return () => {
      clearInterval(timer);
      this.timers.delete(timer);
    };
  }

  /** A value in [min, max] simulated ms, for timings the spec gives as ranges. */
  between(minMs: number, maxMs: number): number {
    return minMs + Math.random() * (maxMs - minMs);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }
}
