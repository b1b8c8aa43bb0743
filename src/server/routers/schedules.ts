/** Snapshot and power schedules: list and history (public read); create, update, delete, run now (admins). */
import { z } from 'zod';
import { CorralError } from '../errors';
import {
  ScheduleCreate,
  ScheduleDeleted,
  ScheduleListInput,
  ScheduleRef,
  ScheduleRow,
  ScheduleRun,
  ScheduleRunResult,
  ScheduleUpdate,
} from '../schemas/schedules';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['schedules'];

export const schedulesRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/schedules',
        tags,
        summary: 'Snapshot and power schedules (with namespace and vm: those that take in that VM)',
      },
    })
    .input(ScheduleListInput)
    .output(z.array(ScheduleRow))
    .query(({ ctx, input }) => {
      if (input?.vm && input.namespace) return ctx.services.schedules.forVm(input.namespace, input.vm);
      if (input?.vm || input?.namespace) throw new CorralError('BAD_REQUEST', 'namespace and vm go together');
      return ctx.services.schedules.list();
    }),
  get: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/schedules/{name}', tags, summary: 'One schedule' } })
    .input(ScheduleRef)
    .output(ScheduleRow)
    .query(({ ctx, input }) => ctx.services.schedules.get(input.name)),
  runs: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/schedules/{name}/runs', tags, summary: "A schedule's last runs, newest first" },
    })
    .input(ScheduleRef)
    .output(z.array(ScheduleRun))
    .query(({ ctx, input }) => ctx.services.schedules.runs(input.name)),
  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/schedules',
        tags,
        summary: "Create a schedule (a CronJob); 409 when its extension isn't installed",
      },
      successStatus: 201,
    })
    .input(ScheduleCreate)
    .output(ScheduleRow)
    .mutation(({ ctx, input: { context: _cluster, ...schedule } }) =>
      ctx.services.schedules.create({ identity: ctx.identity }, schedule),
    ),
  run: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/schedules/{name}/run',
        tags,
        summary: 'Run a schedule now (in Corral, as a task); answers when the run is done',
      },
    })
    .input(ScheduleRef)
    .output(ScheduleRunResult)
    .mutation(({ ctx, input }) => ctx.services.schedules.runNow({ identity: ctx.identity }, input.name)),
  update: adminProcedure
    .meta({ openapi: { method: 'PATCH', path: '/schedules/{name}', tags, summary: 'Change a schedule' } })
    .input(ScheduleUpdate)
    .output(ScheduleRow)
    .mutation(({ ctx, input }) => {
      const { name, context: _cluster, ...change } = input;
      return ctx.services.schedules.update({ identity: ctx.identity }, name, change);
    }),
  delete: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/schedules/{name}',
        tags,
        summary: 'Delete a schedule (its CronJob and run history; the snapshots it took stay)',
      },
    })
    .input(ScheduleRef)
    .output(ScheduleDeleted)
    .mutation(({ ctx, input }) => ctx.services.schedules.remove({ identity: ctx.identity }, input.name)),
});
