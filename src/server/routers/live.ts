/**
 * `live.fleet`: one SSE subscription carrying the whole fleet. On connect a snapshot (or, with a known
 * lastEventId, exactly the missed deltas), then every delta as it happens; each event is `tracked()` so the
 * browser's EventSource resumes with Last-Event-ID. Event shapes: docs/server.md.
 */
import { tracked } from '@trpc/server';
import type { NumberedEvent } from '../domain/live-feed';
import { LiveFleetInput } from '../schemas/live';
import { publicProcedure, router } from '../trpc';

export const liveRouter = router({
  fleet: publicProcedure.input(LiveFleetInput).subscription(async function* ({ ctx, input, signal }) {
    const live = ctx.services.live;
    const queue: NumberedEvent[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = live.subscribe((e) => {
      queue.push(e);
      wake?.();
    });
    const aborted = new Promise<void>((resolve) => {
      if (signal?.aborted) resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      const missed = input?.lastEventId ? live.since(input.lastEventId) : undefined;
      if (missed) for (const e of missed) yield tracked(e.id, e.event);
      else yield tracked(live.currentId(), ctx.services.snapshot());
      while (!signal?.aborted) {
        while (queue.length > 0) {
          const e = queue.shift();
          if (e) yield tracked(e.id, e.event);
        }
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        wake = undefined;
      }
    } finally {
      unsubscribe();
    }
  }),
});
