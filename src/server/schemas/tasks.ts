import { z } from 'zod';
import { ContextName, queryInt } from './common';

export const TaskStatus = z.enum(['running', 'done', 'error']);

export const Task = z.object({
  id: z.string(),
  action: z.string().describe('e.g. create, delete, migrate, start, bootc-build'),
  target: z.string().describe('namespace/name of the object acted on'),
  caller: z.string().describe('login of who asked'),
  status: TaskStatus,
  progress: z.number().min(0).max(100),
  log: z.string().describe('log lines joined with \\n'),
  error: z.string().describe('"" unless status is error'),
  startedAt: z.string().describe('ISO 8601'),
  endedAt: z.string().nullable().describe('ISO 8601, null while running'),
  cancellable: z
    .literal(true)
    .optional()
    .describe('present while the running task accepts POST /api/tasks/{id}/cancel (a move does; most tasks do not)'),
  cancelledBy: z
    .string()
    .optional()
    .describe('login of who cancelled it: set once a cancel is asked; the task then ends with error "cancelled by …"'),
});
export type Task = z.infer<typeof Task>;

export const TaskIdInput = z.strictObject({ id: z.string().min(1).max(200), context: ContextName.optional() });
export const TaskListInput = z
  .strictObject({
    limit: queryInt(1, 1000).optional().describe('newest first; default 100'),
    context: ContextName.optional().describe("only this cluster's tasks (default: every cluster's)"),
  })
  .optional();
