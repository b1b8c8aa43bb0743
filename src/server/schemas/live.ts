/**
 * The `live.fleet` subscription (SSE). Event payloads are documented in docs/server.md; they are TypeScript types
 * (not REST outputs) because subscriptions are tRPC-only and travel with superjson.
 */
import { z } from 'zod';
import type { ClusterStatus } from './contexts';
import type { CtRow } from './cts';
import type { MetricsTick } from './metrics';
import type { NodeRow } from './nodes';
import type { Task } from './tasks';
import type { VmRow } from './vms';

export const LiveFleetInput = z
  .strictObject({
    lastEventId: z.string().max(200).nullish().describe('resume after this event id (EventSource Last-Event-ID)'),
    from: z
      .string()
      .max(200)
      .optional()
      .describe(
        "the live position a list was read at (the lists' Corral-Live-Position header): no snapshot, only a `state` event and the changes since",
      ),
    coalesce: z
      .boolean()
      .optional()
      .describe('frames: at most 10 a second, each a batch of the newest change per row (domain/live-coalesce.ts)'),
  })
  .optional();

/** The live feed's first event on a new subscription: the whole fleet. */
export interface FleetSnapshot {
  type: 'snapshot';
  vms: VmRow[];
  cts: CtRow[];
  nodes: NodeRow[];
  tasks: Task[];
  demo: boolean;
  cluster: string;
  ready: boolean;
  /** With several clusters: each one's health (registry.ts); the rows carry their `context`. */
  clusters?: ClusterStatus[];
}

export type FleetEvent =
  | FleetSnapshot
  /**
   * Instead of the snapshot when the subscriber resumes `from` a list's position: everything the snapshot says
   * except the rows (which the subscriber already read from the lists), then the changes since that position.
   */
  | (Omit<FleetSnapshot, 'type' | 'vms' | 'cts' | 'nodes'> & { type: 'state' })
  | { type: 'vm'; op: 'upsert'; vm: VmRow }
  /** `context` names the cluster when Corral serves several (absent: the only one). */
  | { type: 'vm'; op: 'delete'; namespace: string; name: string; context?: string }
  /** A container (CT) row changed (its pod or data volume, or the volume's measured usage) or the CT is gone. */
  | { type: 'ct'; op: 'upsert'; ct: CtRow }
  | { type: 'ct'; op: 'delete'; namespace: string; name: string; context?: string }
  | { type: 'node'; op: 'upsert'; node: NodeRow }
  | { type: 'node'; op: 'delete'; name: string; context?: string }
  | { type: 'task'; task: Task }
  /** With several clusters `context` says whose readiness changed and `clusters` holds every one's. */
  | { type: 'ready'; ready: boolean; context?: string; clusters?: ClusterStatus[] }
  /** After each sampling round: fleet and per-node sums of the newest sample (see schemas/metrics.ts). */
  | MetricsTick
  /** With `coalesce`: the newest change per row since the last frame, in order (domain/live-coalesce.ts). */
  | { type: 'batch'; events: FleetEvent[] };
