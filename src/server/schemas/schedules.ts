/** Snapshot and power schedules (extensions snapshot-schedules, power-schedules): docs/schedules.md. */
import { z } from 'zod';
import { ContextName, K8sName, Namespace } from './common';

export const ScheduleName = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, 'must be lower-case letters, digits and "-" (at most 40), e.g. nightly')
  .describe('schedule name (its CronJob is corral-sched-<name>)');

/** `context` picks the cluster when Corral serves several (trpc.ts); absent: the first. */
export const ScheduleRef = z.strictObject({ name: ScheduleName, context: ContextName.optional() });

const Cron = z
  .string()
  .min(1)
  .max(100)
  .describe('five-field cron expression in UTC (minute hour day-of-month month day-of-week) or @daily, @hourly, …');

const Tag = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/, 'must be a tag such as prod');

export const ScheduleTarget = z
  .discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('vm'), namespace: Namespace, name: K8sName }),
    z.strictObject({ kind: z.literal('tag'), tag: Tag }),
  ])
  .describe('one VM, or every VM carrying a tag (at run time)');

const Keep = z.number().int().min(1).max(100).describe('snapshot schedules: snapshots kept per VM (default 7)');
const Action = z.enum(['start', 'stop']).describe('power schedules: what to do to the VMs');
const Description = z.string().max(200);

export const ScheduleCreate = z.strictObject({
  name: ScheduleName,
  type: z.enum(['snapshot', 'power']),
  cron: Cron,
  enabled: z.boolean().default(true),
  target: ScheduleTarget,
  keep: Keep.optional(),
  action: Action.optional(),
  description: Description.optional(),
  context: ContextName.optional(),
});

export const ScheduleUpdate = z.strictObject({
  name: ScheduleName,
  cron: Cron.optional(),
  enabled: z.boolean().optional(),
  target: ScheduleTarget.optional(),
  keep: Keep.optional(),
  action: Action.optional(),
  description: Description.optional(),
  context: ContextName.optional(),
});

export const ScheduleListInput = z
  .strictObject({
    namespace: Namespace.optional().describe('with vm: only the schedules that take in this VM'),
    vm: K8sName.optional(),
    context: ContextName.optional(),
  })
  .optional();

export const ScheduleRun = z.object({
  id: z.string(),
  schedule: z.string(),
  trigger: z.enum(['schedule', 'manual']).describe('schedule: started by the CronJob; manual: run now'),
  by: z.string(),
  startedAt: z.string(),
  endedAt: z.string(),
  status: z.enum(['ok', 'error']),
  message: z.string(),
  lines: z.array(z.string()),
});

export const ScheduleRow = z.object({
  name: z.string(),
  type: z.enum(['snapshot', 'power']),
  cron: z.string(),
  enabled: z.boolean(),
  target: z.discriminatedUnion('kind', [
    z.object({ kind: z.literal('vm'), namespace: z.string(), name: z.string() }),
    z.object({ kind: z.literal('tag'), tag: z.string() }),
  ]),
  keep: z.number().optional(),
  action: z.enum(['start', 'stop']).optional(),
  description: z.string().optional(),
  extension: z.string().describe('the extension the schedule belongs to'),
  nextRun: z.string().nullable().describe('next time the CronJob fires (UTC), null when disabled'),
  active: z.boolean().describe('a run is in progress'),
  lastRun: ScheduleRun.nullable(),
});
export type ScheduleRow = z.infer<typeof ScheduleRow>;
export type ScheduleRun = z.infer<typeof ScheduleRun>;

export const ScheduleDeleted = z.object({ deleted: z.string(), task: z.string() });
export const ScheduleRunResult = z.object({ task: z.string(), run: ScheduleRun });
