/** Extensions (plugins): the catalog merged with installed state (public read); install and uninstall (admins). */
import { z } from 'zod';
import { NoInput } from '../schemas/common';
import { ExtensionInstalled, ExtensionRef, ExtensionRemoved, ExtensionRow } from '../schemas/extensions';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['cluster'];

export const extensionsRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/plugins',
        tags,
        summary: 'Extensions Corral ships, merged with installed state',
      },
    })
    .input(NoInput)
    .output(z.array(ExtensionRow))
    .query(({ ctx }) => ctx.services.extensions.list()),
  install: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/plugins/{name}/install',
        tags,
        summary: 'Install an extension (server-side apply of its labelled objects); installing again is idempotent',
      },
    })
    .input(ExtensionRef)
    .output(ExtensionInstalled)
    .mutation(({ ctx, input }) => ctx.services.extensions.install({ identity: ctx.identity }, input.name)),
  uninstall: adminProcedure
    .meta({
      openapi: {
        method: 'DELETE',
        path: '/plugins/{name}',
        tags,
        summary: 'Remove an extension: deletes the objects carrying its label and reports any left behind',
      },
    })
    .input(ExtensionRef)
    .output(ExtensionRemoved)
    .mutation(({ ctx, input }) => ctx.services.extensions.uninstall({ identity: ctx.identity }, input.name)),
});
