/**
 * Coalescing the live feed under bursts. A 1,000-VM bulk start makes several thousand row changes within seconds;
 * a subscriber that asks for frames (`live.fleet` with `coalesce: true`, as the UI does) gets them as at most one
 * frame per `LIVE_FRAME_MS`: a `batch` event holding, per row, only its newest change, in the order of those
 * changes, numbered with the id of the last event it covers — so a reconnect with that id resumes exactly after
 * it. The first change after a quiet spell goes out at once; only what follows within the frame interval waits.
 */
import type { FleetEvent } from '../schemas/live';
import type { NumberedEvent } from './live-feed';

/** At most this many frames a second per subscriber: 10 (a frame every 100 ms) keeps change → screen quick. */
export const LIVE_FRAME_MS = 100;

/** The row (or other thing) an event is about; a later event with the same key makes the earlier one moot. */
function keyOf(event: FleetEvent): string | undefined {
  const ctx = (o: unknown) => ((o as { context?: string } | undefined)?.context ?? '') + '|';
  switch (event.type) {
    case 'vm':
      return event.op === 'upsert'
        ? `vm:${ctx(event.vm)}${event.vm.namespace}/${event.vm.name}`
        : `vm:${ctx(event)}${event.namespace}/${event.name}`;
    case 'ct':
      return event.op === 'upsert'
        ? `ct:${ctx(event.ct)}${event.ct.namespace}/${event.ct.name}`
        : `ct:${ctx(event)}${event.namespace}/${event.name}`;
    case 'node':
      return event.op === 'upsert' ? `node:${ctx(event.node)}${event.node.name}` : `node:${ctx(event)}${event.name}`;
    case 'task':
      return `task:${event.task.id}`;
    case 'ready':
      return `ready:${ctx(event)}`;
    default:
      return undefined; // snapshots, metrics rounds, batches: kept as they are
  }
}

/** The newest change per key, in the order of those newest changes; events without a key are all kept. */
export function coalesceEvents(events: readonly FleetEvent[]): FleetEvent[] {
  const newest = new Map<string, number>();
  events.forEach((e, i) => {
    const key = keyOf(e);
    if (key !== undefined) newest.set(key, i);
  });
  return events.filter((e, i) => {
    const key = keyOf(e);
    return key === undefined || newest.get(key) === i;
  });
}

/** One frame for `events` (oldest first): the event itself when there is one, else a `batch` under the last id. */
export function coalesceFrame(events: readonly NumberedEvent[]): NumberedEvent | undefined {
  const last = events[events.length - 1];
  if (!last) return undefined;
  if (events.length === 1) return last;
  const merged = coalesceEvents(events.flatMap((e) => (e.event.type === 'batch' ? e.event.events : [e.event])));
  return { id: last.id, event: merged.length === 1 ? (merged[0] as FleetEvent) : { type: 'batch', events: merged } };
}
