/**
 * Metrics (api.md "GET …/metrics", "…/metrics/history", "/api/metrics/history", "/api/nodes/{name}/metrics/history",
 * "/api/metrics/top"): thin reads of the metrics store (src/server/domain/metrics-store.ts), all from memory, plus
 * the `metrics.follow` subscription that hands an open VM page each new point. Static sub-paths of `/vms/…`, so
 * _app.ts lists this router ahead of `vms` and its `POST …/{action}` route.
 */
import { z } from 'zod';
import { CorralError } from '../errors';
import { requireVm } from '../domain/vm-actions';
import { VmRef } from '../schemas/common';
import {
  FleetHistoryInput,
  HistoryPoint,
  MetricsFollowInput,
  type MetricsFollowEvent,
  NodeHistoryInput,
  TopInput,
  TopRow,
  VmHistoryInput,
  VmMetrics,
} from '../schemas/metrics';
import { publicProcedure, router } from '../trpc';

const tags = ['metrics'];
const vm = '/vms/{namespace}/{name}';

export const metricsRouter = router({
  vm: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${vm}/metrics`,
        tags,
        summary: 'The newest sample of a VM: CPU, memory, network and disk rates; nulls without metrics-server',
      },
    })
    .input(VmRef)
    .output(VmMetrics)
    .query(({ ctx, input }) => {
      requireVm(ctx.services.deps, input.namespace, input.name);
      return ctx.services.metricsStore.vmNow(input.namespace, input.name);
    }),

  vmHistory: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${vm}/metrics/history`,
        tags,
        summary: 'Retained samples of a VM, oldest first (an empty array when it has none)',
      },
    })
    .input(VmHistoryInput)
    .output(z.array(HistoryPoint))
    .query(({ ctx, input }) => {
      requireVm(ctx.services.deps, input.namespace, input.name);
      return ctx.services.metricsStore.vmHistory(input.namespace, input.name, input.window);
    }),

  fleetHistory: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/metrics/history',
        tags,
        summary: 'Retained samples added up over all VMs that run now, oldest first',
      },
    })
    .input(FleetHistoryInput)
    .output(z.array(HistoryPoint))
    .query(({ ctx, input }) => ctx.services.metricsStore.sumHistory(input.window)),

  nodeHistory: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/nodes/{name}/metrics/history',
        tags,
        summary: 'Retained samples added up over the VMs that run now on one node, oldest first',
      },
    })
    .input(NodeHistoryInput)
    .output(z.array(HistoryPoint))
    .query(({ ctx, input }) => {
      if (!ctx.services.deps.cluster.cache.get('Node', undefined, input.name))
        throw new CorralError('NOT_FOUND', `node ${input.name} not found`);
      return ctx.services.metricsStore.sumHistory(input.window, input.name);
    }),

  top: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/metrics/top',
        tags,
        summary: 'The newest sample of each VM that runs now, busiest first',
      },
    })
    .input(TopInput)
    .output(z.array(TopRow))
    .query(({ ctx, input }) => ctx.services.metricsStore.top(input.by, input.node, input.limit)),

  /** After each sampling round, the VM's new point (SSE; event shape in docs/server.md). */
  follow: publicProcedure.input(MetricsFollowInput).subscription(async function* ({ ctx, input, signal }) {
    requireVm(ctx.services.deps, input.namespace, input.name);
    const queue: MetricsFollowEvent[] = [];
    let wake: (() => void) | undefined;
    const unsubscribe = ctx.services.metricsStore.follow(input.namespace, input.name, (e) => {
      queue.push(e);
      if (queue.length > 100) queue.shift(); // a stalled reader keeps the newest points only
      wake?.();
    });
    const aborted = new Promise<void>((resolve) => {
      if (signal?.aborted) resolve();
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
    try {
      while (!signal?.aborted) {
        while (queue.length > 0) {
          const e = queue.shift();
          if (e) yield e;
        }
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
        wake = undefined;
      }
    } finally {
      unsubscribe();
    }
  }),
});
