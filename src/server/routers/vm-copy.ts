/**
 * Clone and template flag (api.md "Clone & template"). Static segments, so _app.ts lists these routers ahead of
 * `vms` and its `{action}` route.
 */
import { cloneForApi, setTemplate } from '../domain/vm-copy';
import { CloneInput, Cloned, TemplateInput, TemplateOutput } from '../schemas/vm-ops';
import { adminProcedure, router } from '../trpc';

export const clonesRouter = router({
  create: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms/{ns}/{name}/clone',
        tags: ['clone'],
        summary:
          'Full clone as a task with progress: VirtualMachineClone (snapshot + restore) within the namespace, CDI cross-namespace DataVolumes into another; a running VM only with a guest agent and within its namespace',
      },
      successStatus: 202,
    })
    .input(CloneInput)
    .output(Cloned)
    .mutation(({ ctx, input }) =>
      cloneForApi(
        ctx.services.deps,
        { identity: ctx.identity },
        {
          namespace: input.ns,
          name: input.name,
          target: input.target,
          ...(input.namespace ? { targetNamespace: input.namespace } : {}),
          ...(input.start !== undefined ? { start: input.start } : {}),
        },
      ),
    ),
});

export const templatesRouter = router({
  set: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/vms/{namespace}/{name}/template',
        tags: ['clone'],
        summary: 'Mark (on: true) or unmark a VM as a template',
      },
    })
    .input(TemplateInput)
    .output(TemplateOutput)
    .mutation(({ ctx, input }) =>
      setTemplate(ctx.services.deps, { identity: ctx.identity }, input.namespace, input.name, input.on),
    ),
});
