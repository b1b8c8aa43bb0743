/**
 * VM snapshots (api.md "Snapshots"). Static segments, so trpc-to-openapi must see these before vms' `{action}`
 * route: _app.ts lists this router ahead of `vms`.
 */
import { z } from 'zod';
import { removeSnapshot, restoreAndResume, snapshotRows, takeSnapshot } from '../domain/vm-snapshot-ops';
import {
  SnapshotCreated,
  SnapshotCreateInput,
  SnapshotDeleted,
  SnapshotRef,
  SnapshotRestoring,
  SnapshotRow,
  SnapshotVmRef,
} from '../schemas/vm-ops';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['snapshots'];
const base = '/vms/{namespace}/{vm}/snapshots';

export const snapshotsRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: base, tags, summary: "A VM's snapshots, oldest first" } })
    .input(SnapshotVmRef)
    .output(z.array(SnapshotRow))
    .query(({ ctx, input }) => snapshotRows(ctx.services.deps, input.namespace, input.vm)),

  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: base,
        tags,
        summary: 'Take a snapshot as a task (online while the VM runs; 409 naming what is missing to snapshot)',
      },
      successStatus: 202,
    })
    .input(SnapshotCreateInput)
    .output(SnapshotCreated)
    .mutation(({ ctx, input }) =>
      takeSnapshot(
        ctx.services.deps,
        { identity: ctx.identity },
        input.namespace,
        input.vm,
        input.name,
        input.description,
      ),
    ),

  restore: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${base}/{snap}/restore`,
        tags,
        summary: 'Restore a snapshot as a task: stop, restore, start again if it was running',
      },
      successStatus: 202,
    })
    .input(SnapshotRef)
    .output(SnapshotRestoring)
    .mutation(async ({ ctx, input }) => ({
      status: 'restoring' as const,
      task: await restoreAndResume(
        ctx.services.deps,
        { identity: ctx.identity },
        input.namespace,
        input.vm,
        input.snap,
      ),
    })),

  delete: adminProcedure
    .meta({ openapi: { method: 'DELETE', path: `${base}/{snap}`, tags, summary: 'Delete a snapshot' } })
    .input(SnapshotRef)
    .output(SnapshotDeleted)
    .mutation(async ({ ctx, input }) => ({
      status: 'deleted' as const,
      task: await removeSnapshot(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.vm, input.snap),
    })),
});
