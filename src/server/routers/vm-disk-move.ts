/** Moving a stopped VM's disk to another StorageClass (a CDI clone followed as a task; vm-disk-move.ts). */
import { moveDisk } from '../domain/vm-disk-move';
import { TaskAccepted } from '../schemas/common';
import { DiskMoveInput } from '../schemas/vm-disk-move';
import { adminProcedure, router } from '../trpc';

export const diskMoveRouter = router({
  move: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms/{namespace}/{name}/disks/{disk}/move',
        tags: ['hardware'],
        summary:
          "Move a VM's disk to another StorageClass as a task: stopped, a CDI clone the VM then uses; running, a KubeVirt volume migration (409 when its feature gates are off or the disk is hot-plugged)",
      },
      successStatus: 202,
    })
    .input(DiskMoveInput)
    .output(TaskAccepted)
    .mutation(async ({ ctx, input }) => ({
      task: await moveDisk(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, {
        disk: input.disk,
        storageClass: input.storageClass,
        deleteSource: input.deleteSource ?? false,
      }),
    })),
});
