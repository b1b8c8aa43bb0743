/**
 * Containers (api.md "Containers (CT)"): thin procedures over src/server/domain/ct-*.ts. The static `…/scale`
 * route is defined ahead of `POST …/{action}` (trpc-to-openapi takes the first match).
 */
import { z } from 'zod';
import { createCt, ctAction, deleteCt, scaleCt } from '../domain/ct-ops';
import { listCts, requireCt, ctRowOf } from '../domain/ct-rows';
import { normalizeSize } from '../domain/quantity';
import {
  CtActionInput,
  CtActionOutput,
  CtCreated,
  CtCreateInput,
  CtDeleted,
  CtDetail,
  CtListInput,
  CtRef,
  CtRow,
  CtScaleInput,
  CtScaleOutput,
} from '../schemas/cts';
import { registryOf } from '../domain/registry';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['containers'];
const ct = '/cts/{namespace}/{name}';
const size = (q: string | undefined) => (q === undefined ? undefined : normalizeSize(q));

export const ctsRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/cts', tags, summary: 'List all containers across namespaces' } })
    .input(CtListInput)
    .output(z.array(CtRow))
    .query(({ ctx, input }) => registryOf(ctx.services).rows(input?.context, (s) => listCts(s.deps, input?.namespace))),

  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/cts',
        tags,
        summary: 'Create a container (data volume + pod) as a task that ends when it runs',
      },
      successStatus: 201,
    })
    .input(CtCreateInput)
    .output(CtCreated)
    .mutation(({ ctx, input }) =>
      createCt(
        ctx.services.deps,
        { identity: ctx.identity },
        { ...input, mem: size(input.mem), disk: size(input.disk) },
      ),
    ),

  get: publicProcedure
    .meta({
      openapi: { method: 'GET', path: ct, tags, summary: 'One container: its row, pod and data volume' },
    })
    .input(CtRef)
    .output(CtDetail)
    .query(({ ctx, input }) => {
      const ct = requireCt(ctx.services.deps, input.namespace, input.name);
      return { ...ctRowOf(ctx.services.deps, ct), pod: ct.pod ?? null, volume: ct.pvc };
    }),

  scale: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${ct}/scale`,
        tags,
        summary: 'Change CPU and/or memory: recorded on the volume; a running container gets a new pod',
      },
      successStatus: 202,
    })
    .input(CtScaleInput)
    .output(CtScaleOutput)
    .mutation(({ ctx, input }) => ({
      status: 'ok' as const,
      ...scaleCt(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, {
        ...(input.cpu !== undefined ? { cpu: input.cpu } : {}),
        ...(input.mem !== undefined ? { mem: normalizeSize(input.mem) } : {}),
      }),
    })),

  delete: adminProcedure
    .meta({
      openapi: { method: 'DELETE', path: ct, tags, summary: 'Delete a container: its pod, Services and data volume' },
    })
    .input(CtRef)
    .output(CtDeleted)
    .mutation(async ({ ctx, input }) => ({
      status: 'deleted' as const,
      ...(await deleteCt(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name)),
    })),

  action: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${ct}/{action}`,
        tags,
        summary: 'start (recreate the pod from the recorded spec), stop (delete the pod, keep the volume), restart',
      },
    })
    .input(CtActionInput)
    .output(CtActionOutput)
    .mutation(({ ctx, input }) => ({
      status: 'ok' as const,
      task: ctAction(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, input.action),
    })),
});
