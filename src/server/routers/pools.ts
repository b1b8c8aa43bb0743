/**
 * Pools (ADR-0008) under `/api/folders*` (api.md "Pools"): the tree, create, delete, move, file and unfile a
 * member, and a power action fanned out over a pool. The domain does the work (src/server/domain/pools*.ts). The
 * static routes come first (trpc-to-openapi takes the first match).
 */
import {
  FolderActionInput,
  FolderActionOutput,
  FolderCreated,
  FolderCreateInput,
  FolderListing,
  FolderMemberAdded,
  FolderMemberInput,
  FolderMemberRemoved,
  FolderMoved,
  FolderMoveInput,
  FolderPathQuery,
  FolderRefQuery,
  FolderRemoved,
} from '../schemas/pools';
import { NoInput } from '../schemas/common';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['pools'];

export const poolsRouter = router({
  move: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/folders/move',
        tags,
        summary: 'Re-parent or rename a pool with its sub-pools (refuses cycles, an existing destination, depth > 8)',
      },
    })
    .input(FolderMoveInput)
    .output(FolderMoved)
    .mutation(({ ctx, input }) => ctx.services.pools.move({ identity: ctx.identity }, input.from, input.to)),

  addMember: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/folders/members',
        tags,
        summary: 'File a VM or CT in a pool (what a drag-and-drop lands on); one already in another pool is a 409',
      },
    })
    .input(FolderMemberInput)
    .output(FolderMemberAdded)
    .mutation(({ ctx, input }) => ctx.services.pools.addMember({ identity: ctx.identity }, input.path, input.ref)),

  removeMember: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/folders/members',
        tags,
        summary: 'Take a ref out of the pool it is in (the instance is untouched)',
      },
    })
    .input(FolderRefQuery)
    .output(FolderMemberRemoved)
    .mutation(({ ctx, input }) => ctx.services.pools.removeMember({ identity: ctx.identity }, input.ref)),

  action: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/folders/action',
        tags,
        summary:
          'Start, stop, restart, pause or resume every member of a pool and its sub-pools, with a result per member',
      },
    })
    .input(FolderActionInput)
    .output(FolderActionOutput)
    .mutation(({ ctx, input }) => ctx.services.pools.action({ identity: ctx.identity }, input.path, input.action)),

  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/folders',
        tags,
        summary: 'Every pool with its members resolved against the live fleet, plus the unfoldered instances',
      },
    })
    .input(NoInput)
    .output(FolderListing)
    .query(({ ctx }) => ctx.services.pools.list()),

  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/folders',
        tags,
        summary: 'Create a pool (nesting with /, missing parents are created); an existing one is a 409',
      },
      successStatus: 201,
    })
    .input(FolderCreateInput)
    .output(FolderCreated)
    .mutation(({ ctx, input }) => ctx.services.pools.create({ identity: ctx.identity }, input.path, input.comment)),

  remove: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/folders',
        tags,
        summary: 'Delete a pool and its sub-pools; their members are unfoldered, never deleted',
      },
    })
    .input(FolderPathQuery)
    .output(FolderRemoved)
    .mutation(({ ctx, input }) => ctx.services.pools.remove({ identity: ctx.identity }, input.path)),
});
