/**
 * `POST /api/bulk`: start, stop, restart or delete a mixed selection of VMs and CTs (src/server/domain/bulk.ts).
 * A guest that cannot do the action is a failed row in a 200 answer, never a failed request.
 */
import { runBulk } from '../domain/bulk';
import { BulkInput, BulkOutput } from '../schemas/bulk';
import { adminProcedure, router } from '../trpc';

export const bulkRouter = router({
  run: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/bulk',
        tags: ['bulk'],
        summary: 'Start, stop, restart or delete many VMs and containers at once, with a result per guest',
      },
    })
    .input(BulkInput)
    .output(BulkOutput)
    .mutation(({ ctx, input }) => runBulk(ctx.services.deps, { identity: ctx.identity }, input.action, input.targets)),
});
