/** The image library (api.md "Image library & catalog"): custom sources and imported images (CDI DataVolumes). */
import { z } from 'zod';
import { NoInput, VmRef } from '../schemas/common';
import {
  CatalogImage,
  DataVolumeCreated,
  DataVolumeCreateInput,
  DataVolumeDeleted,
  DataVolumeRow,
  SourceInput,
  SourceNameInput,
  SourceRemoved,
  SourceSaved,
} from '../schemas/images';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['images'];

export const sourcesRouter = router({
  list: publicProcedure
    .meta({ openapi: { method: 'GET', path: '/sources', tags, summary: 'The custom image sources only' } })
    .input(NoInput)
    .output(z.array(CatalogImage))
    .query(({ ctx }) => ctx.services.sources.list()),
  save: adminProcedure
    .meta({
      openapi: { method: 'POST', path: '/sources', tags, summary: 'Add or replace a custom source (by name)' },
    })
    .input(SourceInput)
    .output(SourceSaved)
    .mutation(({ ctx, input }) => ctx.services.sources.save({ identity: ctx.identity }, input)),
  remove: adminProcedure
    .meta({ openapi: { method: 'DELETE', path: '/sources/{name}', tags, summary: 'Remove a custom source' } })
    .input(SourceNameInput)
    .output(SourceRemoved)
    .mutation(({ ctx, input }) => ctx.services.sources.remove({ identity: ctx.identity }, input.name)),
});

export const dataVolumesRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/datavolumes',
        tags,
        summary: 'Imported images: DataVolumes that belong to no VM, with live progress',
      },
    })
    .input(NoInput)
    .output(z.array(DataVolumeRow))
    .query(({ ctx }) => ctx.services.dataVolumes.list()),
  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/datavolumes',
        tags,
        summary: 'Start a CDI import from an http(s) URL or a registry (a task follows it)',
      },
      successStatus: 201,
    })
    .input(DataVolumeCreateInput)
    .output(DataVolumeCreated)
    .mutation(({ ctx, input }) => ctx.services.dataVolumes.create({ identity: ctx.identity }, input)),
  delete: adminProcedure
    .meta({
      openapi: { method: 'DELETE', path: '/datavolumes/{namespace}/{name}', tags, summary: 'Delete an imported image' },
    })
    .input(VmRef)
    .output(DataVolumeDeleted)
    .mutation(({ ctx, input }) =>
      ctx.services.dataVolumes.delete({ identity: ctx.identity }, input.namespace, input.name),
    ),
});
