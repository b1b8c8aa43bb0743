/**
 * The `live.fleet` subscription (SSE). Event payloads are documented in docs/server.md; they are TypeScript types
 * (not REST outputs) because subscriptions are tRPC-only and travel with superjson.
 */
import { z } from 'zod';
import type { CtRow } from './cts';
import type { MetricsTick } from './metrics';
import type { NodeRow } from './nodes';
import type { Task } from './tasks';
import type { VmRow } from './vms';

export const LiveFleetInput = z
  .strictObject({
    lastEventId: z.string().max(200).nullish().describe('resume after this event id (EventSource Last-Event-ID)'),
    coalesce: z
      .boolean()
      .optional()
      .describe('frames: at most 10 a second, each a batch of the newest change per row (domain/live-coalesce.ts)'),
  })
  .optional();

export type FleetEvent =
  | {
      type: 'snapshot';
      vms: VmRow[];
      cts: CtRow[];
      nodes: NodeRow[];
      tasks: Task[];
      demo: boolean;
      cluster: string;
      ready: boolean;
    }
  | { type: 'vm'; op: 'upsert'; vm: VmRow }
  | { type: 'vm'; op: 'delete'; namespace: string; name: string }
  /** A container (CT) row changed (its pod or data volume, or the volume's measured usage) or the CT is gone. */
  | { type: 'ct'; op: 'upsert'; ct: CtRow }
  | { type: 'ct'; op: 'delete'; namespace: string; name: string }
  | { type: 'node'; op: 'upsert'; node: NodeRow }
  | { type: 'node'; op: 'delete'; name: string }
  | { type: 'task'; task: Task }
  | { type: 'ready'; ready: boolean }
  /** After each sampling round: fleet and per-node sums of the newest sample (see schemas/metrics.ts). */
  | MetricsTick
  /** With `coalesce`: the newest change per row since the last frame, in order (domain/live-coalesce.ts). */
  | { type: 'batch'; events: FleetEvent[] };
