/**
 * What Corral observes about one VM (api.md "Guest info"): the guest agent's report and the VM's Kubernetes
 * events, plus the live feed of new events for an open Events tab. Thin procedures over src/server/domain/vm-guest.ts
 * and vm-events.ts. Static sub-paths, so _app.ts lists this router ahead of `vms` and its `…/{action}` route.
 */
import { vmEvents, watchVmEvents } from '../domain/vm-events';
import { guestInfo } from '../domain/vm-guest';
import { VmRef } from '../schemas/common';
import { GuestInfo, VmEventsInput, VmEventsOutput } from '../schemas/vm-observe';
import { publicProcedure, router } from '../trpc';

const tags = ['observe'];
const vm = '/vms/{namespace}/{name}';

export const vmObserveRouter = router({
  guestInfo: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${vm}/guestinfo`,
        tags,
        summary: "The guest agent's report: OS, hostname, timezone, users, filesystems, interfaces",
        description: '503 with the reason when the VM is not running or its guest agent is not connected.',
      },
    })
    .input(VmRef)
    .output(GuestInfo)
    .query(({ ctx, input }) => guestInfo(ctx.services.deps, input.namespace, input.name)),

  events: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${vm}/events`,
        tags,
        summary: 'Kubernetes events of the VM, its VMI, launcher pods, PVCs and DataVolumes, newest first',
        description:
          '`type=Normal|Warning` keeps one type. Read live from the cluster (a field-selected list per involved name).',
      },
    })
    .input(VmEventsInput)
    .output(VmEventsOutput)
    .query(({ ctx, input }) =>
      vmEvents(ctx.services.deps, input.namespace, input.name, input.type ? { type: input.type } : {}),
    ),

  /**
   * The open Events tab's feed: a Kubernetes watch on the namespace's events, closed when the client goes. Every
   * (re)connect starts with `resync` (read the list again), so there is nothing to resume and no event ids.
   */
  eventsLive: publicProcedure.input(VmRef).subscription(async function* ({ ctx, input, signal }) {
    const ac = new AbortController();
    const stop = () => ac.abort();
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop, { once: true });
    try {
      yield* watchVmEvents(ctx.services.deps, input.namespace, input.name, ac.signal);
    } finally {
      signal?.removeEventListener('abort', stop);
      stop();
    }
  }),
});
