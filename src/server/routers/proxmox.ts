/** The Proxmox door seen from Corral: which PVE endpoints clients asked for that Corral does not serve (admins). */
import { TRPCError } from '@trpc/server';
import { NoInput } from '../schemas/common';
import { ProxmoxGapReport } from '../schemas/proxmox';
import { publicProcedure, router } from '../trpc';

/**
 * Admins only, but a read: the gap log names users and tokens, so it is not for everyone; it changes nothing, so it
 * needs neither a JSON body nor the cross-site guard of `adminProcedure` (a GET from another site cannot read the
 * answer anyway).
 */
const adminRead = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.identity.admin)
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `${ctx.identity.login} may not read the Proxmox gap log: it is for logins in CORRAL_ADMINS`,
    });
  return next();
});

export const proxmoxRouter = router({
  gaps: adminRead
    .meta({
      openapi: {
        method: 'GET',
        path: '/proxmox/gaps',
        tags: ['cluster'],
        summary: 'PVE endpoints Proxmox clients asked for that Corral does not serve, with counts and the last caller',
      },
    })
    .input(NoInput)
    .output(ProxmoxGapReport)
    .query(({ ctx }) => ctx.services.proxmoxGaps.report()),
});
