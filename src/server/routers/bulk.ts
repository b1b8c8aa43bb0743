/**
 * `POST /api/bulk`: start, stop, restart or delete a mixed selection of VMs and CTs (src/server/domain/bulk.ts).
 * A guest that cannot do the action is a failed row in a 200 answer, never a failed request. `POST /api/bulk/runs`
 * starts the same run and answers at once (202), `GET /api/bulk/runs/{task}` reads its progress and results, and
 * `POST /api/bulk/runs/{task}/cancel` stops sending the rest.
 */
import { bulkRun, cancelBulk, runBulk, startBulk } from '../domain/bulk';
import { BulkCancelOutput, BulkInput, BulkOutput, BulkRunInput, BulkRunOutput, BulkStarted } from '../schemas/bulk';
import { adminProcedure, publicProcedure, router } from '../trpc';

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
  start: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/bulk/runs',
        tags: ['bulk'],
        summary: 'Start a bulk action and answer at once with its task; read it at GET /api/bulk/runs/{task}',
      },
      successStatus: 202,
    })
    .input(BulkInput)
    .output(BulkStarted)
    .mutation(({ ctx, input }) => {
      const { task, done } = startBulk(ctx.services.deps, { identity: ctx.identity }, input.action, input.targets);
      done.catch(() => undefined); // every guest's failure is in its result; the run itself does not reject
      return { task, total: input.targets.length };
    }),
  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/bulk/runs/{task}',
        tags: ['bulk'],
        summary: 'A bulk action’s progress (counts while it runs) and its result per guest once it has ended',
      },
    })
    .input(BulkRunInput)
    .output(BulkRunOutput)
    .query(({ ctx, input }) => bulkRun(ctx.services.deps, input.task)),
  cancel: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/bulk/runs/{task}/cancel',
        tags: ['bulk'],
        summary: 'Stop a running bulk action: guests not yet sent end as cancelled (409 when it has ended)',
      },
    })
    .input(BulkRunInput)
    .output(BulkCancelOutput)
    .mutation(({ ctx, input }) => cancelBulk(ctx.services.deps, { identity: ctx.identity }, input.task)),
});
