/** Cluster health: the doctor's checks (public read) and its fixes (admins only; each fix is a task). */
import { z } from 'zod';
import { DoctorCheck, DoctorFixed, DoctorFixInput, DoctorInput } from '../schemas/doctor';
import { adminProcedure, publicProcedure, router } from '../trpc';

const tags = ['cluster'];

export const doctorRouter = router({
  list: publicProcedure
    .meta({
      openapi: {
        method: 'GET',
        path: '/doctor',
        tags,
        summary: 'Run the cluster checks: one row per check with status, message and whether Corral can fix it',
      },
    })
    .input(DoctorInput)
    .output(z.array(DoctorCheck))
    .query(({ ctx, input }) => ctx.services.doctor.report({ refresh: input?.refresh ?? false })),
  fix: adminProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/doctor/fix',
        tags,
        summary: 'Fix one check ({"name": …}) or every fixable one; says exactly what changed',
      },
    })
    .input(DoctorFixInput)
    .output(DoctorFixed)
    .mutation(({ ctx, input }) => ctx.services.doctor.fix({ identity: ctx.identity }, input?.name)),
});
