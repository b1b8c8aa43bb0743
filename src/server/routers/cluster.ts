/** Cluster-level reads: nodes, images, instancetypes, identity and capabilities (tasks: tasks.ts). */
import { z } from 'zod';
import { NoInput } from '../schemas/common';
import { CatalogImage } from '../schemas/images';
import { NodeDetail, NodeNameInput, NodeRow } from '../schemas/nodes';
import { Capabilities, InstanceTypes, WhoAmI } from '../schemas/system';
import { registryOf } from '../domain/registry';
import { ClusterStatus } from '../schemas/contexts';
import { publicProcedure, router } from '../trpc';

export const nodesRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/nodes',
        tags: ['cluster'],
        summary: 'Cluster nodes with readiness, roles, kubelet and arch',
      },
    })
    .input(NoInput)
    .output(z.array(NodeRow))
    .query(({ ctx, input }) => registryOf(ctx.services).rows(input?.context, (s) => s.nodes.list())),
  get: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/nodes/{name}',
        tags: ['cluster'],
        summary: 'One node and the VMs placed on it',
      },
    })
    .input(NodeNameInput)
    .output(NodeDetail)
    .query(({ ctx, input }) => ctx.services.nodes.get(input.name)),
});

export const imagesRouter = router({
  list: publicProcedure
    .meta({
      openapi: { method: 'GET', path: '/images', tags: ['images'], summary: 'The curated catalog plus custom sources' },
    })
    .input(NoInput)
    .output(z.array(CatalogImage))
    .query(({ ctx }) => ctx.services.images.list()),
});

export const instancetypesRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/instancetypes',
        tags: ['cluster'],
        summary: 'Cluster instancetypes and preferences',
      },
    })
    .input(NoInput)
    .output(InstanceTypes)
    .query(({ ctx }) => ctx.services.instancetypes()),
});

export const whoami = publicProcedure
  .meta({
    openapi: { method: 'GET', path: '/whoami', tags: ['cluster'], summary: "The caller's identity and privilege" },
  })
  .input(NoInput)
  .output(WhoAmI)
  .query(({ ctx }) => ({
    ...ctx.identity,
    demo: ctx.services.cluster.info.demo,
    cluster: ctx.services.cluster.info.name,
  }));

export const capabilities = publicProcedure
  .meta({
    openapi: {
      method: 'GET',
      path: '/capabilities',
      tags: ['cluster'],
      summary: 'Cluster capability flags; demo: true on the embedded cluster',
    },
  })
  .input(NoInput)
  .output(Capabilities)
  .query(({ ctx }) => ctx.services.capabilities());

export const contextsRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/contexts',
        tags: ['cluster'],
        summary: 'The clusters (kube contexts) Corral serves, the default first, with their health',
      },
    })
    .input(NoInput)
    .output(z.array(ClusterStatus))
    .query(({ ctx }) => registryOf(ctx.services).status()),
});
