/**
 * The task journal over REST: recent tasks, one task, and cancelling a running one. A cancel is accepted only by
 * tasks that registered a cancel handler (a cross-cluster move does: domain/move-commit.ts); the task then undoes
 * what it did and ends with `error: cancelled by <login>` (domain/tasks.ts `TaskJournal.cancel`).
 */
import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { registryOf } from '../domain/registry';
import { crossSiteRefusal } from '../http-guards';
import { Task, TaskIdInput, TaskListInput } from '../schemas/tasks';
import { publicProcedure, router } from '../trpc';

const tags = ['tasks'];

export const tasksRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/tasks', tags, summary: 'Recent tasks, newest first' } })
    .input(TaskListInput)
    .output(z.array(Task))
    .query(({ ctx, input }) => registryOf(ctx.services).tasks(input?.limit, input?.context)),
  get: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/tasks/{id}', tags, summary: 'Poll one task' } })
    .input(TaskIdInput)
    .output(Task)
    .query(({ ctx, input }) => registryOf(ctx.services).task(input.id, input.context)),
  // Not adminProcedure: who started a task may cancel it even when not (or no longer) an admin; the journal checks.
  cancel: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/tasks/{id}/cancel',
        tags,
        summary:
          'Cancel a running task that accepts it (cancellable: true, e.g. a move): its current step stops, what it did is undone, and it ends with error "cancelled by <login>". By who started it or an admin; 409 when it ended or cannot be cancelled',
      },
      successStatus: 202,
    })
    .input(TaskIdInput)
    .output(Task)
    .mutation(({ ctx, input }) => {
      const refusal = ctx.http ? crossSiteRefusal(ctx.http.headers) : undefined;
      if (refusal) throw new TRPCError({ code: 'FORBIDDEN', message: refusal });
      return registryOf(ctx.services).cancelTask(input.id, ctx.identity, input.context);
    }),
});
