/**
 * Metrics DTOs: the live reading of one VM, retained history points (VM, node, fleet) and the "top VMs" rows.
 * Units are the wire names of shared/spec/README.md: `t` epoch ms, `cpu` millicores, `mem` bytes, network and disk
 * rates in bytes/s. A field the cluster does not measure is absent (history) or null (live reading), never 0.
 */
import { z } from 'zod';
import { InCluster, K8sName, K8sSubdomain, queryInt, VmRef } from './common';

export const HISTORY_WINDOWS = ['hour', 'day', 'week'] as const;
export const HistoryWindow = z.enum(HISTORY_WINDOWS);
export type HistoryWindow = z.infer<typeof HistoryWindow>;

export const HistoryPoint = z.object({
  t: z.number().describe('sample time, epoch ms'),
  cpu: z.number().describe('CPU in use, millicores'),
  mem: z.number().optional().describe('memory in use, bytes'),
  netin: z.number().optional().describe('network received, bytes/s'),
  netout: z.number().optional().describe('network sent, bytes/s'),
  diskread: z.number().optional().describe('disk read, bytes/s'),
  diskwrite: z.number().optional().describe('disk written, bytes/s'),
});
export type HistoryPoint = z.infer<typeof HistoryPoint>;

/** `GET /api/vms/{ns}/{name}/metrics`: the newest sample; every number null without metrics-server. */
export const VmMetrics = z.object({
  t: z.number().nullable().describe('when the numbers were sampled, epoch ms'),
  cpu: z.number().nullable().describe('millicores'),
  mem: z.number().nullable().describe('bytes'),
  netin: z.number().nullable(),
  netout: z.number().nullable(),
  diskread: z.number().nullable(),
  diskwrite: z.number().nullable(),
  stale: z.boolean().describe('metrics-server stopped answering; the numbers are the last ones held'),
});
export type VmMetrics = z.infer<typeof VmMetrics>;

export const WindowQuery = {
  window: HistoryWindow.default('hour').describe('hour (15 s points), day (5 min), week (30 min)'),
};

export const VmHistoryInput = VmRef.extend(WindowQuery).strict();
export const FleetHistoryInput = z.strictObject({ ...WindowQuery, ...InCluster });
export const NodeHistoryInput = z.strictObject({ name: K8sSubdomain, ...WindowQuery, ...InCluster });

export const TopBy = z.enum(['cpu', 'mem']);
export const TopInput = z.strictObject({
  by: TopBy.default('cpu').describe('sort by CPU (default) or memory, busiest first'),
  node: K8sSubdomain.optional().describe('only VMs on this node'),
  limit: queryInt(1, 1000).optional().describe('keep the first n rows'),
  ...InCluster,
});

export const TopRow = z.object({
  namespace: K8sName,
  name: K8sName,
  node: z.string(),
  cpu: z.number().describe('millicores'),
  mem: z.number().optional().describe('bytes'),
});
export type TopRow = z.infer<typeof TopRow>;

/** `metrics.follow`: the VM whose new points an open VM page wants. */
export const MetricsFollowInput = VmRef;

/**
 * One `metrics.follow` event after each sampling round: the VM's new hour point (absent when the VM was not
 * measured in that round, e.g. stopped), and whether the store is stale (metrics-server stopped answering).
 * A TypeScript type, not a REST output: subscriptions are tRPC-only (like `live.fleet`).
 */
export interface MetricsFollowEvent {
  t: number;
  stale: boolean;
  point?: HistoryPoint;
}

/** The `metrics` event of the `live.fleet` feed: fleet and per-node sums of the newest sample, never per-VM points. */
export interface MetricsTick {
  type: 'metrics';
  t: number;
  stale: boolean;
  fleet: HistoryPoint;
  nodes: { name: string; point: HistoryPoint }[];
}
