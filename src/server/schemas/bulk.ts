/**
 * DTOs of `POST /api/bulk`: one action over a mixed selection of VMs and CTs with a result per guest. Strict input
 * (docs/security.md): a bounded list of `{type, namespace, name}`, each name DNS-1123.
 */
import { z } from 'zod';
import { InCluster, K8sName, Namespace } from './common';

export const BULK_ACTIONS = ['start', 'stop', 'restart', 'delete'] as const;
export type BulkAction = (typeof BULK_ACTIONS)[number];
export const BULK_MAX_TARGETS = 1000;

const GuestType = z.enum(['vm', 'ct'], { error: 'must be vm or ct' }).describe('vm (KubeVirt VM) or ct (container)');

export const BulkTarget = z.strictObject({ type: GuestType, namespace: Namespace, name: K8sName });

export const BulkInput = z.strictObject({
  action: z.enum(BULK_ACTIONS, { error: `must be one of ${BULK_ACTIONS.join(', ')}` }),
  targets: z
    .array(BulkTarget)
    .min(1, 'must list at least one guest')
    .max(BULK_MAX_TARGETS, `must list at most ${BULK_MAX_TARGETS} guests`)
    .describe('the guests to act on; each one is listed once'),
  ...InCluster,
});
export type BulkInput = z.infer<typeof BulkInput>;

export const BulkItemResult = z.object({
  type: z.enum(['vm', 'ct']),
  namespace: z.string(),
  name: z.string(),
  ok: z.boolean(),
  message: z.string().describe('what happened, or why not (e.g. "CT tailvm/x is Stopped")'),
  task: z.string().describe('this guest’s own task id; "" when it was refused before a task existed'),
});

export const BulkOutput = z.object({
  task: z.string().describe('the bulk task: one log line per guest; it ends in error when any guest failed'),
  ok: z.number().int(),
  failed: z.number().int().describe('guests that failed, cancelled ones included'),
  cancelled: z.number().int().describe('guests never sent because the run was cancelled first'),
  results: z.array(BulkItemResult).describe('one per target, in the order given'),
});

export const BulkStarted = z.object({
  task: z.string().describe('the bulk task; read its progress at GET /api/bulk/runs/{task}'),
  total: z.number().int(),
});

export const BulkRunInput = z.strictObject({
  task: z
    .string()
    .regex(/^bulk-[A-Za-z0-9._-]{1,190}$/, 'must be a bulk task id (bulk-…)')
    .describe('the bulk task id from POST /api/bulk or /api/bulk/runs'),
  ...InCluster,
});

export const BulkRunOutput = z.object({
  task: z.string(),
  action: z.enum(BULK_ACTIONS),
  status: z.enum(['running', 'done', 'cancelled']),
  total: z.number().int(),
  finished: z.number().int().describe('guests with a result so far'),
  ok: z.number().int(),
  failed: z.number().int(),
  cancelled: z.number().int(),
  results: z.array(BulkItemResult).describe('empty while running; one per target, in the order given, once ended'),
});

export const BulkCancelOutput = z.object({
  task: z.string(),
  pending: z.number().int().describe('guests without a result when cancelled (the few in flight still finish)'),
});
