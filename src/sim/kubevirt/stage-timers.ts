/**
 * One pending timer per (object, stage). Controllers reconcile on every store event, so the same step is asked
 * for many times before its delay has passed; only the first request schedules it.
 */
import type { SimClock } from '../clock.js';
import type { KObject } from '../store/types.js';

export class StageTimers {
  private readonly inFlight = new Set<string>();

  constructor(private readonly clock: SimClock) {}

  /** Run `fn` after `delayMs` simulated ms unless this object's `stage` is already waiting. */
  once(object: KObject, stage: string, delayMs: number, fn: () => void): void {
    const id = `${object.metadata.uid}/${stage}`;
    if (this.inFlight.has(id)) return;
    this.inFlight.add(id);
    this.clock.after(delayMs, () => {
      this.inFlight.delete(id);
      fn();
    });
  }

  pending(uid: string, stage: string): boolean {
    return this.inFlight.has(`${uid}/${stage}`);
  }
}
