/**
 * `live.fleet`: one SSE subscription carrying the whole fleet. On connect a snapshot (or, with a known
 * lastEventId, exactly the missed deltas), then every delta as it happens; each event is `tracked()` so the
 * browser's EventSource resumes with Last-Event-ID. With `coalesce: true` bursts arrive as at most 10 `batch`
 * frames a second (domain/live-coalesce.ts), and a resume gets what it missed as one batch. With `from` (the position
 * a REST list was read at) it opens without a snapshot: a `state` event, then what changed since (domain/live-resume.ts).
 * Event shapes: docs/server.md.
 */
import { tracked } from '@trpc/server';
import { coalesceFrame, LIVE_FRAME_MS } from '../domain/live-coalesce';
import type { NumberedEvent } from '../domain/live-feed';
import { openingOf, stateOf } from '../domain/live-resume';
import { registryOf } from '../domain/registry';
import { LiveFleetInput } from '../schemas/live';
import { publicProcedure, router } from '../trpc';

export const liveRouter = router({
  fleet: publicProcedure.input(LiveFleetInput).subscription(async function* ({ ctx, input, signal }) {
    // With several clusters one stream carries them all (domain/live-clusters.ts).
    const clusters = registryOf(ctx.services);
    const live = clusters.feed();
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
      const opening = openingOf(live, input);
      const frames = input?.coalesce === true;
      // Resuming from a list's position: the snapshot's small part under that position, the rows come from the list.
      if (opening?.state && input?.from) yield tracked(input.from, stateOf(clusters.snapshot()));
      const missed = opening?.missed;
      if (missed && frames) {
        const frame = coalesceFrame(missed);
        if (frame) yield tracked(frame.id, frame.event);
      } else if (missed) for (const e of missed) yield tracked(e.id, e.event);
      else yield tracked(live.currentId(), clusters.snapshot());
      let lastFrame = 0;
      while (!signal?.aborted) {
        if (frames && queue.length > 0) {
          // A burst becomes one frame per LIVE_FRAME_MS; the first change after a quiet spell goes out at once.
          const wait = lastFrame + LIVE_FRAME_MS - Date.now();
          if (wait > 0) await Promise.race([new Promise((r) => setTimeout(r, wait)), aborted]);
          const frame = coalesceFrame(queue.splice(0));
          lastFrame = Date.now();
          if (frame) yield tracked(frame.id, frame.event);
        }
        while (!frames && queue.length > 0) {
          const e = queue.shift();
          if (e) yield tracked(e.id, e.event);
        }
        if (queue.length > 0) continue; // more arrived while this frame was sent
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        wake = undefined;
      }
    } finally {
      unsubscribe();
    }
  }),
});
