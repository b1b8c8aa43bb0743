'use client';
// Live fleet: one `live.fleet` SSE subscription for the whole app (browsers allow ~6 connections per origin, so
// every view reads this one store instead of subscribing itself). The rows come first from the REST lists (on the
// Datacenter a first page, then every row: lib/prefill.ts); the stream then resumes from the lists' position, so
// it sends only what changed since (and a `state` event), not the fleet a second time. Without a position (or one
// the server no longer holds) it opens with a snapshot; EventSource reconnects by itself with Last-Event-ID, and a
// snapshot resyncs whenever the server cannot resume. No polling.
import {
  createContext,
  useCallback,
  useContext,
  useEffect,
  useMemo,
  useRef,
  useState,
  useSyncExternalStore,
  type ReactNode,
} from 'react';
import { useQueryClient } from '@tanstack/react-query';
import { FleetState } from './fleet-state';
import { rowKey } from './fleet-store';
import { MetricsFeed } from './metrics-feed';
import type { FirstScreenSeed } from './first-screen';
import { takePrefill } from './prefill';
import type { CtRow, FleetEvent, NodeRow, TaskRow, VmRow } from './model';
import { useTRPCClient } from './trpc';

/**
 * How long the stream waits for the prefill before opening anyway (with a snapshot). At 50,000 VMs the whole list
 * takes seconds on a loaded machine, and opening early would download the fleet twice; a failed prefill opens the
 * stream at once.
 */
const PREFILL_WAIT_MS = 10_000;

/** Resolves after the next frame has been painted (the first screen on the page before the big parse). */
const afterPaint = () =>
  new Promise<void>((resolve) =>
    typeof requestAnimationFrame === 'function' ? requestAnimationFrame(() => setTimeout(resolve, 0)) : resolve(),
  );

export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'failed';

interface LiveContextValue {
  state: FleetState;
  /** What the server rendered with, and hydration reproduces: the first screen it was given, or no rows. */
  serverState: FleetState;
  link: LinkState;
  lastError: string;
  /** The stream's `metrics` events (fleet/node sums per sampling round) for the charts; not part of the fleet. */
  metrics: MetricsFeed;
  /** Drops the stream and opens a new one (the banner's Retry); the snapshot that follows resyncs everything. */
  retry: () => void;
}

const LiveContext = createContext<LiveContextValue | null>(null);

/** tracked() events arrive as {id, data}; plain ones as the event itself. */
function unwrap(value: unknown): FleetEvent {
  if (value && typeof value === 'object' && 'data' in value && 'id' in value && !('type' in value)) {
    return (value as { data: FleetEvent }).data;
  }
  return value as FleetEvent;
}

/** A store holding the server-rendered first screen (lib/first-screen.ts), or nothing without one. */
function seeded(seed: FirstScreenSeed | undefined): FleetState {
  const state = new FleetState();
  if (seed)
    state.prefillFirst(seed.vms, seed.nodes, seed.cts, { total: seed.total - seed.templates, running: seed.running });
  return state;
}

/**
 * `seed`: the Datacenter's first screen, rendered into the HTML by the server (lib/first-screen.ts). The live store
 * starts with it, and so does the store the server render and hydration read (never changed afterwards, so a
 * Suspense boundary hydrating late still matches the HTML).
 */
export function LiveProvider({ children, seed }: { children: ReactNode; seed?: FirstScreenSeed }) {
  const client = useTRPCClient();
  const queryClient = useQueryClient();
  const stateRef = useRef<FleetState | null>(null);
  stateRef.current ??= seeded(seed);
  const state = stateRef.current;
  const serverRef = useRef<FleetState | null>(null);
  serverRef.current ??= seed ? seeded(seed) : SERVER_FLEET;
  const serverState = serverRef.current;
  const metricsRef = useRef<MetricsFeed | null>(null);
  metricsRef.current ??= new MetricsFeed();
  const metrics = metricsRef.current;
  const [link, setLink] = useState<LinkState>('connecting');
  const [lastError, setLastError] = useState('');
  const [generation, setGeneration] = useState(0);
  const everLive = useRef(false);

  // The stream opens once the prefill has answered (or after PREFILL_WAIT_MS): at thousands of VMs both are
  // megabytes of work for the server, and the plain-JSON list is the one that gets rows on screen soonest.
  const [prefillDone, setPrefillDone] = useState(false);
  /** The position the prefilled lists were read at: the first subscription resumes from it (then it is spent). */
  const position = useRef<string | undefined>(undefined);

  useEffect(() => {
    if (!prefillDone) return;
    const from = position.current;
    position.current = undefined; // a Retry resyncs with a snapshot
    // coalesce: bursts (a bulk start of 1,000 VMs) arrive as at most 10 batch frames a second, not one per change.
    const sub = client.live.fleet.subscribe(
      { coalesce: true, ...(from ? { from } : {}) },
      {
        onData: (value) => {
          const event = unwrap(value);
          for (const e of event.type === 'batch' ? event.events : [event]) {
            if (e.type === 'metrics') metrics.push(e);
            else state.apply(e);
          }
          if (event.type === 'snapshot' || event.type === 'state') {
            everLive.current = true;
            setLink('live');
            setLastError('');
          }
        },
        onConnectionStateChange: (s) => {
          // 'pending' = the stream is open. After a reconnect with Last-Event-ID the server may replay only the
          // missed events (no snapshot), so an open stream on a synced store is live again.
          if (s.state === 'pending' && state.synced) {
            setLink('live');
            setLastError('');
          }
          if (s.state === 'connecting') setLink(everLive.current ? 'reconnecting' : 'connecting');
          if (s.error) setLastError(s.error.message);
        },
        onError: (err) => {
          setLastError(err.message);
          setLink('failed');
        },
      },
    );
    return () => sub.unsubscribe();
  }, [client, state, metrics, generation, prefillDone]);

  // One-shot prefill (not polling): plain JSON lists render the table while the snapshot is still on its way.
  // The requests usually started in <head> already (lib/prefill.ts).
  useEffect(() => {
    const abort = new AbortController();
    const fallback = setTimeout(() => setPrefillDone(true), PREFILL_WAIT_MS);
    const { first, lists, release } = takePrefill(abort.signal);
    // The first screen renders, and is painted, before the whole VM list is parsed.
    const painted = first
      ?.then((screen) => {
        if (abort.signal.aborted) return;
        if (state.prefillFirst(screen.vms, screen.nodes, screen.cts, screen.counts)) return afterPaint();
      })
      .catch(() => undefined); // without a first screen the whole list still comes
    lists(painted)
      .then(
        (prefill) => {
          if (abort.signal.aborted) return;
          release();
          if (state.prefill(prefill.vms, prefill.nodes, prefill.cts)) position.current = prefill.position;
        },
        () => undefined, // the stream reports problems; a failed prefill only means waiting for the snapshot
      )
      .finally(() => {
        clearTimeout(fallback);
        if (!abort.signal.aborted) setPrefillDone(true);
      });
    return () => {
      clearTimeout(fallback);
      abort.abort();
    };
  }, [state]);

  const retry = useCallback(() => {
    setLink(everLive.current ? 'reconnecting' : 'connecting');
    setGeneration((g) => g + 1);
    void queryClient.invalidateQueries();
  }, [queryClient]);

  const value = useMemo(
    () => ({ state, serverState, link, lastError, metrics, retry }),
    [state, serverState, link, lastError, metrics, retry],
  );
  return <LiveContext.Provider value={value}>{children}</LiveContext.Provider>;
}

export function useLive(): LiveContextValue {
  const ctx = useContext(LiveContext);
  if (!ctx) throw new Error('useLive outside <LiveProvider>');
  return ctx;
}

/** The version the server renders with, and hydration reproduces: never a real version (those start at 0). */
const SERVER_VERSION = -1;
/** What the server rendered without a first screen: no rows, not synced. Never mutated. */
const SERVER_FLEET = new FleetState();
const serverVersion = () => SERVER_VERSION;

/** Re-renders the caller when anything in the fleet changed (at most once per frame). */
function useFleetVersion(): number {
  const { state } = useLive();
  return useSyncExternalStore(state.notifier.subscribe, state.notifier.getVersion, serverVersion);
}

/**
 * The fleet as this render may show it. The store is filled in place, outside React, so it can be ahead of
 * hydration: a Suspense boundary (the VM page's) hydrates after the provider's effects have already applied the
 * prefill, and reading the store there rendered a VM where the server had rendered "Loading…" — React error
 * #418. While hydrating, useSyncExternalStore answers with the server snapshot (SERVER_VERSION), and the view is
 * what the server rendered with (no rows, or the Datacenter's first screen); React re-renders with the real
 * version right after.
 */
export function useFleet() {
  const { state: live, serverState } = useLive();
  const version = useFleetVersion();
  const state = version === SERVER_VERSION ? serverState : live;
  return { state, version, synced: state.synced, clusterReady: state.clusterReady };
}

export function useVms(): VmRow[] {
  const { state } = useFleet();
  return state.vms.list();
}

/** One VM; `context` names its cluster when it is not the default one (a page's `?context=`). */
export function useVm(namespace: string, name: string, context?: string): VmRow | undefined {
  const { state } = useFleet();
  return state.vms.get(rowKey({ namespace, name, context }, state.defaultContext));
}

/** The cluster requests without a context act on ('' while Corral serves one): its pages' URLs carry no context. */
export function useDefaultContext(): string {
  return useFleet().state.defaultContext;
}

/** Every container (CT), pushed by the same stream as VMs. */
export function useCts(): CtRow[] {
  const { state } = useFleet();
  return state.cts.list();
}

export function useCtRow(namespace: string, name: string, context?: string): CtRow | undefined {
  const { state } = useFleet();
  return state.cts.get(rowKey({ namespace, name, context }, state.defaultContext));
}

export function useNodes(): NodeRow[] {
  const { state } = useFleet();
  return state.nodes.list();
}

export function useTasks(): TaskRow[] {
  const { state } = useFleet();
  return state.tasks();
}

export function useTask(id: string | null): TaskRow | undefined {
  const { state } = useFleet();
  return id ? state.task(id) : undefined;
}
