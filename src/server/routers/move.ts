/**
 * Cross-cluster move (ADR-0010, api.md "Pools and cross-backend move"): the destinations, the preflight (touches
 * nothing; a refused one is a 200 with the refusals) and the commit (409 with the same list when refused, else a
 * task). The domain does the work (src/server/domain/move-*.ts); the commit's bytes go through the HTTP transport.
 */
import { commitMove } from '../domain/move-commit';
import { commitCtMove } from '../domain/move-ct-commit';
import { ctMoveDestinations, planCtMove } from '../domain/move-ct-preflight';
import { planMove } from '../domain/move-preflight';
import { planPveMove } from '../domain/move-pve';
import { allMoveDestinations, requireKubevirtFields } from '../domain/move-pve-hosts';
import { commitPveMove } from '../domain/move-pve-commit';
import { httpImageSource } from '../http/move-pve-transfer';
import { httpDiskTransfer } from '../http/move-transfer';
import { MoveAccepted, MoveDestinations, MoveDestinationsQuery, MoveInput, MovePreflight } from '../schemas/move';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['move'];

export const moveRouter = router({
  destinations: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/move/destinations',
        tags,
        summary:
          'Every served cluster and configured Proxmox VE host as a move destination for the VM `ref` (with kind ct: the served clusters for the CT `ref`), with why the refused ones cannot receive',
      },
    })
    .input(MoveDestinationsQuery)
    .output(MoveDestinations)
    .query(({ ctx, input }) =>
      input.kind === 'ct'
        ? ctMoveDestinations(ctx.services.deps, input.ref)
        : allMoveDestinations(ctx.services.deps, input.ref),
    ),

  preflight: publicProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/move/preflight',
        tags,
        summary:
          'Plan a cold move of a VM (or, with kind ct, a container) to another cluster or namespace, or a VM to a Proxmox VE host: every refusal with its remedy, warnings, what is dropped, the steps. Touches nothing; a refused move is a 200',
      },
    })
    .input(MoveInput)
    .output(MovePreflight)
    .mutation(async ({ ctx, input }) => {
      if (input.kind === 'ct') return (await planCtMove(ctx.services.deps, input)).preflight;
      if (input.toBackend === 'pve') return (await planPveMove(ctx.services.deps, input)).preflight;
      requireKubevirtFields(input);
      return (await planMove(ctx.services.deps, input)).preflight;
    }),

  commit: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/move',
        tags,
        summary:
          'Move a VM or, with kind ct, a container (cold): re-runs the preflight (409 with its refusals), then a task stops, exports, uploads, recreates, verifies and starts it; a failure rolls the destination back',
      },
      successStatus: 202,
    })
    .input(MoveInput)
    .output(MoveAccepted)
    .mutation(({ ctx, input }) => {
      if (input.kind === 'ct')
        return commitCtMove(ctx.services.deps, { identity: ctx.identity }, input, httpDiskTransfer);
      if (input.toBackend === 'pve')
        return commitPveMove(ctx.services.deps, { identity: ctx.identity }, input, httpImageSource);
      requireKubevirtFields(input);
      return commitMove(ctx.services.deps, { identity: ctx.identity }, input, httpDiskTransfer);
    }),
});
