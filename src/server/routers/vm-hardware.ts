/**
 * VM hardware and options (api.md "Hardware operations", `GET /api/nads`): thin procedures over the domain that
 * the Proxmox translator uses too (src/server/domain/vm-hardware.ts). Static segments, so _app.ts lists this router
 * ahead of `vms` and its `POST …/{action}` route.
 */
import { z } from 'zod';
import { normalizeSize, quantityToNumber } from '../domain/quantity';
import {
  addNic,
  addVolume,
  expandVolume,
  hardwareView,
  listNads,
  removeNic,
  removeVolume,
  scaleVm,
  setOptions,
} from '../domain/vm-hardware';
import { VmRef } from '../schemas/common';
import {
  Expanded,
  ExpandInput,
  HardwareOutput,
  NadListInput,
  NadRow,
  NicAdded,
  NicAddInput,
  NicRemoved,
  NicRemoveInput,
  OptionsInput,
  OptionsOutput,
  ScaleInput,
  ScaleOutput,
  VolumeAdded,
  VolumeAddInput,
  VolumeRemoved,
  VolumeRemoveInput,
} from '../schemas/vm-hardware';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['hardware'];
const vm = '/vms/{namespace}/{name}';
/** A validated size (`8G`, `8Gi`) in bytes, decimal suffixes read as binary like everywhere in Corral. */
const bytes = (q: string) => quantityToNumber(normalizeSize(q));

export const hardwareRouter = router({
  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: `${vm}/hardware`,
        tags,
        summary: 'Processors, memory, disks, NICs, options and pending changes, with what can be changed now',
      },
    })
    .input(VmRef)
    .output(HardwareOutput)
    .query(({ ctx, input }) => hardwareView(ctx.services.deps, input.namespace, input.name)),

  scale: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${vm}/scale`,
        tags,
        summary: 'Change vCPUs and/or memory as a task: live hot-plug, else stop → patch → start (mode says which)',
      },
      successStatus: 202,
    })
    .input(ScaleInput)
    .output(ScaleOutput)
    .mutation(async ({ ctx, input }) => ({
      status: 'ok' as const,
      ...(await scaleVm(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, {
        ...(input.cpu !== undefined ? { cpu: input.cpu } : {}),
        ...(input.mem !== undefined ? { memoryBytes: bytes(input.mem) } : {}),
      })),
    })),

  addVolume: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${vm}/volumes`,
        tags,
        summary: 'A new blank disk <vm>-disk-<n>, hot-plugged and kept in the VM spec (a task)',
      },
      successStatus: 202,
    })
    .input(VolumeAddInput)
    .output(VolumeAdded)
    .mutation(({ ctx, input }) =>
      addVolume(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, {
        sizeBytes: bytes(input.size),
        ...(input.storageClass ? { storageClass: input.storageClass } : {}),
        ...(input.bus ? { bus: input.bus } : {}),
      }),
    ),

  removeVolume: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: `${vm}/volumes/{vol}`,
        tags,
        summary: 'Detach a volume; ?delete=true also deletes its PVC',
      },
    })
    .input(VolumeRemoveInput)
    .output(VolumeRemoved)
    .mutation(async ({ ctx, input }) => ({
      status: 'removed' as const,
      ...(await removeVolume(
        ctx.services.deps,
        { identity: ctx.identity },
        input.namespace,
        input.name,
        input.vol,
        input.delete ?? false,
      )),
    })),

  expand: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${vm}/expand`,
        tags,
        summary: 'Grow a PVC (409 naming a StorageClass that cannot expand; 400 when the size shrinks)',
      },
      successStatus: 202,
    })
    .input(ExpandInput)
    .output(Expanded)
    .mutation(async ({ ctx, input }) => ({
      status: 'ok' as const,
      ...(await expandVolume(
        ctx.services.deps,
        { identity: ctx.identity },
        input.namespace,
        input.name,
        input.pvc,
        bytes(input.size),
      )),
    })),

  addNic: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${vm}/nics`,
        tags,
        summary: 'Add a Multus NIC (400 naming a missing NetworkAttachmentDefinition)',
      },
    })
    .input(NicAddInput)
    .output(NicAdded)
    .mutation(async ({ ctx, input }) => ({
      status: 'ok' as const,
      ...(await addNic(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, {
        nad: input.nad,
        ...(input.iface ? { iface: input.iface } : {}),
        ...(input.model ? { model: input.model } : {}),
      })),
    })),

  removeNic: adminProcedure
    .meta({ openapi: { method: 'DELETE', path: `${vm}/nics/{iface}`, tags, summary: 'Remove a NIC' } })
    .input(NicRemoveInput)
    .output(NicRemoved)
    .mutation(async ({ ctx, input }) => ({
      status: 'removed' as const,
      ...(await removeNic(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, input.iface)),
    })),

  setOptions: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: `${vm}/options`,
        tags,
        summary:
          'Run strategy (start on boot), firmware, secure boot, boot order, description; restart-bound ones are pending',
      },
    })
    .input(OptionsInput)
    .output(OptionsOutput)
    .mutation(async ({ ctx, input }) => {
      const { namespace, name, ...change } = input;
      return {
        status: 'ok' as const,
        ...(await setOptions(ctx.services.deps, { identity: ctx.identity }, namespace, name, change)),
      };
    }),
});

export const nadsRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/nads',
        tags: ['networks'],
        summary: 'Multus NetworkAttachmentDefinitions for secondary NICs (type, bridge, VLAN when the config says)',
      },
    })
    .input(NadListInput)
    .output(z.array(NadRow))
    .query(({ ctx, input }) => listNads(ctx.services.deps, input?.namespace)),
});
