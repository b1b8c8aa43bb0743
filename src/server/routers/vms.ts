/**
 * VM lifecycle procedures (api.md "VM lifecycle"). Route order matters to trpc-to-openapi (first match wins), so
 * the static `.../tags`, `.../migrate` and `.../deletion-plan` routes are defined before `.../{action}`.
 */
import { z } from 'zod';
import { StatusOk, TaskAccepted, VmRef } from '../schemas/common';
import {
  DeletionPlan,
  VmActionInput,
  VmCreated,
  VmCreateInput,
  VmDeleted,
  VmListInput,
  VmManifest,
  VmMigrateInput,
  VmRow,
  VmTagInput,
  VmTagOutput,
} from '../schemas/vms';
import { registryOf } from '../domain/registry';
import { firstByName } from '../domain/vm-first-page';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['vms'];

export const vmsRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/vms',
        tags,
        summary: 'List all VMs across namespaces (and clusters), merged with live VMI data',
      },
    })
    .input(VmListInput)
    .output(z.array(VmRow))
    .query(({ ctx, input }) => {
      const registry = registryOf(ctx.services);
      const { limit, ...filter } = input ?? {};
      // The whole fleet's first page is kept per fleet version; a filtered one is picked per request.
      if (limit !== undefined && Object.values(filter).every((v) => v === undefined))
        return registry.vmFirstPage(limit).rows;
      const rows = registry.rows(input?.context, (s) => s.vms.list(input));
      return limit === undefined ? rows : firstByName(rows, limit);
    }),

  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms',
        tags,
        summary: 'Create a VM from exactly one source (bootc answers 202 with a task)',
      },
      successStatus: 201,
    })
    .input(VmCreateInput)
    .output(VmCreated)
    .mutation(async ({ ctx, input }) => {
      const created = await ctx.services.vms.create({ identity: ctx.identity }, input);
      if (!('name' in created)) ctx.responseStatus = 202;
      return created;
    }),

  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/vms/{namespace}/{name}',
        tags,
        summary: 'The raw KubeVirt VirtualMachine object',
      },
    })
    .input(VmRef)
    .output(VmManifest)
    .query(({ ctx, input }) => ctx.services.vms.manifest(input.namespace, input.name)),

  row: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/vms/{namespace}/{name}/row', tags, summary: 'One VM as a list row' } })
    .input(VmRef)
    .output(VmRow)
    .query(({ ctx, input }) => ctx.services.vms.row(input.namespace, input.name)),

  deletionPlan: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/vms/{namespace}/{name}/deletion-plan',
        tags,
        summary: 'What DELETE would remove',
      },
    })
    .input(VmRef)
    .output(DeletionPlan)
    .query(({ ctx, input }) => ctx.services.vms.deletionPlan(input.namespace, input.name)),

  delete: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/vms/{namespace}/{name}',
        tags,
        summary: 'Stop and delete a VM and everything created for it',
      },
    })
    .input(VmRef)
    .output(VmDeleted)
    .mutation(async ({ ctx, input }) => {
      const { task, removed } = await ctx.services.vms.delete({ identity: ctx.identity }, input.namespace, input.name);
      return { status: 'deleted' as const, task, removed };
    }),

  setTag: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms/{namespace}/{name}/tags',
        tags,
        summary: 'Add or remove a tag (label corral.dev/tag.<tag>)',
      },
    })
    .input(VmTagInput)
    .output(VmTagOutput)
    .mutation(({ ctx, input }) =>
      ctx.services.vms.setTag({ identity: ctx.identity }, input.namespace, input.name, input.tag, input.on),
    ),

  migrate: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms/{namespace}/{name}/migrate',
        tags,
        summary: 'Migrate as a tracked task: live when running, offline (pinned to targetNode) when stopped',
      },
      successStatus: 202,
    })
    .input(VmMigrateInput)
    .output(TaskAccepted)
    .mutation(async ({ ctx, input }) => ({
      task: await ctx.services.vms.migrate(
        { identity: ctx.identity },
        input.namespace,
        input.name,
        input.targetNode || undefined,
      ),
    })),

  action: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms/{namespace}/{name}/{action}',
        tags,
        summary: 'start, stop, restart, pause, unpause, migrate',
      },
    })
    .input(VmActionInput)
    .output(StatusOk)
    .mutation(async ({ ctx, input }) => {
      await ctx.services.vms.action({ identity: ctx.identity }, input.namespace, input.name, input.action);
      return { status: 'ok' as const };
    }),
});
