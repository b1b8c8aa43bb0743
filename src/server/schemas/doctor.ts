/** The doctor's rows and fix answers (api.md "GET /api/doctor", "POST /api/doctor/fix"). */
import { z } from 'zod';
import { InCluster, queryBool } from './common';

export const CheckStatus = z.enum(['ok', 'warn', 'fail']);
export const CheckArea = z.enum(['cluster', 'kubevirt', 'storage', 'network', 'access', 'corral']);
export const Feature = z.enum(['snapshots', 'hotplug', 'expand', 'export', 'metrics', 'networks', 'imports', 'create']);

export const DoctorCheck = z.object({
  name: z.string().describe('stable id of the check; the name POST /api/doctor/fix takes'),
  area: CheckArea,
  title: z.string(),
  status: CheckStatus.describe('ok, warn (works, degraded) or fail (something Corral uses does not work)'),
  message: z.string(),
  fixable: z.boolean().describe('Corral can fix it: POST /api/doctor/fix {"name": …}'),
  fix: z.string().optional().describe('what the fix will change, when fixable'),
  docs: z.string().optional().describe('where docs/doctor.md explains the check'),
  details: z.array(z.string()).optional().describe('the exact items behind the message, e.g. each missing permission'),
  affects: z.array(Feature).optional().describe('Corral features that stop working while this check fails'),
});
export type DoctorCheck = z.infer<typeof DoctorCheck>;

export const DoctorInput = z
  .strictObject({
    refresh: queryBool.optional().describe('run every check now instead of answering from the 15 s cache'),
    ...InCluster,
  })
  .optional();

export const DoctorFixInput = z
  .strictObject({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z0-9-]+$/, 'must be a check name such as gate-snapshot')
      .optional()
      .describe('fix this check only; omitted: every fixable check that is not ok'),
    ...InCluster,
  })
  .optional();

export const DoctorFixed = z.object({
  fixed: z.array(z.string()).describe('one line per change made, e.g. "created namespace tailvm"'),
  tasks: z.array(z.string()).describe('the task of each fix (GET /api/tasks/{id}), whose log repeats the changes'),
  failed: z
    .array(z.object({ name: z.string(), error: z.string() }))
    .describe('fixes that failed, each with what it had changed first; [] when all succeeded'),
});

export const Blocker = z.object({
  feature: Feature,
  check: z.string().describe('the doctor check that explains it'),
  reason: z.string(),
});
