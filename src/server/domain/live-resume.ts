/**
 * Resuming `live.fleet` from a list's position (docs/scale.md "One copy of the fleet per cold load"). The REST lists
 * the UI loads first (`GET /api/vms`, `/api/nodes`, `/api/cts`) carry the feed's position, read before the rows
 * (`Corral-Live-Position`): every row in the answer is at least as new as that position. A subscriber passing it as
 * `from` gets, instead of a second copy of the fleet, the snapshot's small part (`state`: tasks, readiness, the
 * clusters) and every change after the position, which brings rows read at or after it up to date — replayed in
 * order, each row ends at its newest change. An unknown or evicted position gets the snapshot, as before.
 */
import type { FleetEvent } from '../schemas/live';
import type { FleetFeed } from './live-clusters';
import type { NumberedEvent } from './live-feed';

/** The header the fleet lists carry their position in. */
export const LIVE_POSITION_HEADER = 'Corral-Live-Position';

/** The REST paths (under /api) whose GET answers carry the position. */
export const POSITIONED_LISTS = new Set(['/vms', '/vms/', '/nodes', '/nodes/', '/cts', '/cts/']);

/** The snapshot without its rows: what a subscriber resuming from a list still needs. */
export function stateOf(snapshot: FleetEvent): FleetEvent {
  if (snapshot.type !== 'snapshot') return snapshot;
  const { vms: _vms, cts: _cts, nodes: _nodes, ...rest } = snapshot;
  return { ...rest, type: 'state' };
}

/**
 * How a subscription opens: after `lastEventId` (a reconnect: what was missed), else after `from` (a list's
 * position: the state, then what changed since), else — or when the id is unknown or evicted — with a snapshot.
 */
export function openingOf(
  feed: FleetFeed,
  input: { lastEventId?: string | null; from?: string } | undefined,
): { missed: NumberedEvent[]; state: boolean } | undefined {
  if (input?.lastEventId) {
    const missed = feed.since(input.lastEventId);
    return missed && { missed, state: false };
  }
  if (input?.from) {
    const missed = feed.since(input.from);
    return missed && { missed, state: true };
  }
  return undefined;
}
