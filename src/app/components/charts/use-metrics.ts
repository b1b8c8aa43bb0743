'use client';
// Chart data: the retained history from one query, then kept current by pushed samples — a VM's from its
// `metrics.follow` subscription, the fleet's and a node's from the `metrics` events of the one `live.fleet` stream.
// The hour window appends each sample; day and week refetch once a new 5/30-minute average can exist. No polling.
import { useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { HistoryPoint, HistoryWindow, MetricsFollowEvent, MetricsTick } from '@/server/schemas/metrics';
import { useLive } from '../../lib/live';
import { mergePoint, type MetricsStatus } from '../../lib/metrics-live';
import { useTRPC, useTRPCClient } from '../../lib/trpc';
import { inContext } from '../../lib/cluster-links';

export interface HistoryState {
  points: HistoryPoint[];
  loading: boolean;
  error: string | null;
  status: MetricsStatus;
}

/** tracked() events arrive as {id, data}; plain ones as the event itself. */
function unwrap<T>(value: unknown): T {
  if (value && typeof value === 'object' && 'data' in value && 'id' in value && !('t' in value)) {
    return (value as { data: T }).data;
  }
  return value as T;
}

/** Applies one pushed sample to the cached history of the window on screen. */
function usePushInto(key: QueryKey, window: HistoryWindow) {
  const queryClient = useQueryClient();
  const current = useRef({ key, window });
  current.current = { key, window };
  return useRef((point: HistoryPoint) => {
    const { key: k, window: w } = current.current;
    const held = queryClient.getQueryData<HistoryPoint[]>(k);
    if (!held) return; // the first answer is on its way and will hold this sample
    const merge = mergePoint(held, point, w);
    if (merge.kind === 'append') queryClient.setQueryData(k, merge.points);
    else if (merge.kind === 'refetch') void queryClient.invalidateQueries({ queryKey: k, exact: true });
  }).current;
}

const EMPTY: HistoryPoint[] = [];

/** A VM's history for `window`, live through `metrics.follow` while the page is open. */
export function useVmHistory(namespace: string, name: string, window: HistoryWindow, context?: string): HistoryState {
  const trpc = useTRPC();
  const client = useTRPCClient();
  const options = trpc.metrics.vmHistory.queryOptions({ namespace, name, window, ...inContext(context) });
  const history = useQuery({ ...options, staleTime: Infinity });
  const reading = useQuery({
    ...trpc.metrics.vm.queryOptions({ namespace, name, ...inContext(context) }),
    staleTime: Infinity,
  });
  const push = usePushInto(options.queryKey, window);
  const [live, setLive] = useState<{ stale: boolean; t: number } | null>(null);

  useEffect(() => {
    const sub = client.metrics.follow.subscribe(
      { namespace, name, ...inContext(context) },
      {
        onData: (value) => {
          const e = unwrap<MetricsFollowEvent>(value);
          setLive({ stale: e.stale, t: e.t });
          if (e.point) push(e.point);
        },
      },
    );
    return () => sub.unsubscribe();
  }, [client, namespace, name, context, push]);

  const stale = live?.stale ?? reading.data?.stale ?? false;
  return {
    points: history.data ?? EMPTY,
    loading: history.isPending,
    error: history.error?.message ?? null,
    status: { stale, lastSample: stale ? (live?.t ?? reading.data?.t ?? null) : null },
  };
}

/** Subscribes to the `metrics` events of the live stream (fleet and per-node sums after each round). */
export function useMetricsTicks(listener: (tick: MetricsTick) => void): MetricsTick | null {
  const { metrics } = useLive();
  const latest = useRef(listener);
  latest.current = listener;
  // Starts empty, as the server rendered it; the newest tick (if one arrived already) is taken after hydration.
  const [tick, setTick] = useState<MetricsTick | null>(null);
  useEffect(() => {
    setTick(metrics.latest);
    return metrics.subscribe((t) => {
      setTick(t);
      latest.current(t);
    });
  }, [metrics]);
  return tick;
}

/**
 * The fleet's (no node) or one node's summed history, live from the stream's `metrics` events. `context`: a node of
 * another cluster than the default, whose history is read from its cluster (the live rounds are the default's).
 */
export function useSumHistory(node: string | undefined, window: HistoryWindow, context?: string): HistoryState {
  const trpc = useTRPC();
  const options =
    node === undefined
      ? trpc.metrics.fleetHistory.queryOptions({ window })
      : trpc.metrics.nodeHistory.queryOptions({ name: node, window, ...inContext(context) });
  const history = useQuery({ ...options, staleTime: Infinity });
  const push = usePushInto(options.queryKey, window);
  const tick = useMetricsTicks((t) => {
    if (context) return; // the pushed rounds are the default cluster's: a namesake node there is another node
    const point = node === undefined ? t.fleet : t.nodes.find((n) => n.name === node)?.point;
    if (point && !t.stale) push(point);
  });
  const points = history.data ?? EMPTY;
  const stale = tick?.stale ?? false;
  return {
    points,
    loading: history.isPending,
    error: history.error?.message ?? null,
    status: { stale, lastSample: stale ? (tick?.t ?? null) : null },
  };
}

/** The busiest VMs (fleet-wide or on one node), refreshed when a sampling round is pushed. */
export function useTopVms(by: 'cpu' | 'mem', node: string | undefined, limit: number, context?: string) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = trpc.metrics.top.queryOptions(
    node === undefined ? { by, limit, ...inContext(context) } : { by, node, limit, ...inContext(context) },
  );
  const top = useQuery({ ...options, staleTime: Infinity });
  const key = useRef(options.queryKey);
  key.current = options.queryKey;
  useMetricsTicks((t) => {
    if (!t.stale) void queryClient.invalidateQueries({ queryKey: key.current, exact: true });
  });
  return top;
}
