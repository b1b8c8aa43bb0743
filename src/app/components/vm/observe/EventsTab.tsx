'use client';
// The VM page's Events tab: the Kubernetes events of the VM and what belongs to it (VMI, launcher pods, PVCs,
// DataVolumes), newest first, filterable by type. Live: while the tab is open, observe.eventsLive (a watch on the
// namespace's events on the server) pushes every new or repeated event into the list — no polling; its `resync`
// (sent once the watch runs, and after a reconnect) reads the list again so nothing in between is missed.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useSubscription } from '@trpc/tanstack-react-query';
import { useEffect, useState } from 'react';
import type { VmEvent, VmEventType } from '@/server/schemas/vm-observe';
import { useTRPC } from '../../../lib/trpc';
import { absoluteTime, EVENT_ROWS, mergeEvent, relativeTime } from '../../../lib/vm-observe';
import type { VmTabProps } from '../tabs';
import './observe.css';
import { vmRef } from '../../../lib/cluster-links';

const FILTERS: { value: VmEventType | undefined; label: string }[] = [
  { value: undefined, label: 'All' },
  { value: 'Normal', label: 'Normal' },
  { value: 'Warning', label: 'Warning' },
];

/** Re-renders every `ms` so relative times move on. */
function useNow(ms: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

export function EventsTab({ vm }: VmTabProps) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const [filter, setFilter] = useState<VmEventType | undefined>(undefined);
  const ref = { ...vmRef(vm) };
  const input = filter ? { ...ref, type: filter } : ref;
  const events = useQuery(trpc.observe.events.queryOptions(input));
  const live = useSubscription(
    trpc.observe.eventsLive.subscriptionOptions(ref, {
      onData: (message) => {
        const key = trpc.observe.events.queryKey(input);
        if (message.kind === 'resync') void queryClient.invalidateQueries({ queryKey: key });
        else
          queryClient.setQueryData(key, (list: VmEvent[] | undefined) => mergeEvent(list ?? [], message.event, filter));
      },
    }),
  );
  const now = useNow(15_000);
  const rows = events.data ?? [];

  return (
    <section className="panel" aria-labelledby="events-title">
      <div className="panel-head events-head">
        <h2 id="events-title">Events</h2>
        <span
          className={`badge ${live.status === 'pending' ? 'ev-live' : 'ev-reconnecting'}`}
          data-testid="events-live"
          title={
            live.status === 'pending'
              ? 'New events appear as they happen'
              : 'Not receiving new events right now; reconnecting'
          }
        >
          {live.status === 'pending' ? 'live' : 'reconnecting'}
        </span>
        <span className="header-spacer" />
        <div className="segmented events-filter" role="group" aria-label="Event type">
          {FILTERS.map((f) => (
            <button key={f.label} type="button" aria-pressed={filter === f.value} onClick={() => setFilter(f.value)}>
              {f.label}
            </button>
          ))}
        </div>
      </div>
      {events.error ? (
        <p className="field-error events-note" role="alert">
          Cannot read the events: {events.error.message}
        </p>
      ) : events.isPending ? (
        <p className="page-sub events-note">Loading…</p>
      ) : rows.length === 0 ? (
        <p className="page-sub events-note" data-testid="events-empty">
          {filter ? `No ${filter} events` : 'No events'} for this VM. Kubernetes keeps events for about an hour.
        </p>
      ) : (
        <div className="table-scroll">
          <table className="data-table events-table" data-testid="events-table">
            <thead>
              <tr>
                <th>Type</th>
                <th>Reason</th>
                <th>Message</th>
                <th>Object</th>
                <th className="num">Count</th>
                <th>Last seen</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={e.id} data-testid="event-row" data-reason={e.reason}>
                  <td className="ev-type">
                    <span className={`badge ${e.type === 'Warning' ? 'ev-warning' : 'ev-normal'}`}>{e.type}</span>
                  </td>
                  <td className="ev-reason">{e.reason}</td>
                  <td className="ev-message">{e.message}</td>
                  <td className="ev-object">
                    <span className="page-sub">{e.object.kind}</span> <span className="mono">{e.object.name}</span>
                  </td>
                  <td className="num ev-count" title={`Seen ${e.count} time${e.count === 1 ? '' : 's'}`}>
                    {e.count > 1 ? `×${e.count}` : '1'}
                  </td>
                  <td className="ev-time">
                    <time
                      dateTime={e.time}
                      title={
                        e.firstTime
                          ? `${absoluteTime(e.time)} (first ${absoluteTime(e.firstTime)})`
                          : absoluteTime(e.time)
                      }
                    >
                      {relativeTime(e.time, now)}
                    </time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {rows.length >= EVENT_ROWS && <p className="page-sub events-note">The newest {EVENT_ROWS} events.</p>}
        </div>
      )}
    </section>
  );
}
