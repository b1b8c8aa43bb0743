/**
 * DTOs of the pools API (api.md "Pools", ADR-0008): `/api/folders*`. Paths travel in the body or the query string,
 * never in the route (a nested path holds slashes). Strict input (docs/security.md): paths and refs are checked by
 * the same rules the domain applies (src/server/domain/pools-path.ts), so a bad one is a 400 naming the field.
 */
import { z } from 'zod';
import { pathProblem, MAX_DEPTH } from '../domain/pools-path';
import { textUpTo } from './common';

export const FolderPath = z
  .string()
  .max(600, 'must be at most 600 characters')
  .superRefine((p, ctx) => {
    const why = pathProblem(p);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  })
  .describe(`a pool path: segments of [A-Za-z0-9 _.-] joined by /, never . or .., at most ${MAX_DEPTH} deep`);

export const MemberRefText = z
  .string()
  .min(1, 'must not be empty')
  .max(600, 'must be at most 600 characters')
  .describe('backend/context/namespace/name, e.g. kubevirt/corral-sim/tailvm/web');

export const FOLDER_ACTIONS = ['start', 'stop', 'restart', 'pause', 'resume'] as const;
export type FolderAction = (typeof FOLDER_ACTIONS)[number];

export const FolderCreateInput = z.strictObject({
  path: FolderPath,
  comment: textUpTo(1024).optional().describe('free text, shown beside the pool'),
});
export const FolderPathQuery = z.strictObject({ path: FolderPath });
export const FolderMoveInput = z.strictObject({ from: FolderPath, to: FolderPath });
export const FolderMemberInput = z.strictObject({ path: FolderPath, ref: MemberRefText });
export const FolderRefQuery = z.strictObject({ ref: MemberRefText });
export const FolderActionInput = z.strictObject({
  path: FolderPath,
  action: z.enum(FOLDER_ACTIONS, { error: `must be one of ${FOLDER_ACTIONS.join(', ')}` }),
});

const Usage = z.object({ cpuCores: z.number(), memoryBytes: z.number() });

export const FolderMember = z.object({
  ref: z.string(),
  backend: z.string(),
  context: z.string(),
  namespace: z.string(),
  name: z.string(),
  type: z.enum(['vm', 'ct', '']).describe('"" for a missing member'),
  missing: z.boolean().describe('the ref names no instance this Corral serves now; it is kept in the pool'),
  reason: z.string().describe('why it is missing, "" otherwise'),
  status: z.string().describe('the VM status or CT phase; "missing" for a missing member'),
  running: z.boolean(),
  cpu: z.number().describe('vCPUs (VM) or CPUs (CT)'),
  mem: z.string(),
  node: z.string(),
  vmid: z.number().int().nullable().describe('the id /api2/json addresses it by; null when missing'),
  usage: Usage.nullable().describe('measured CPU and memory use (metrics.k8s.io); null when not measured'),
});
export type FolderMember = z.infer<typeof FolderMember>;

export const FolderUsage = z.object({
  instances: z.number().int().describe('members that exist'),
  running: z.number().int(),
  missing: z.number().int(),
  cpus: z.number().describe('vCPUs/CPUs allocated to the existing members'),
  memoryBytes: z.number().describe('memory allocated to the existing members'),
  cpuUsedCores: z.number().describe('CPU in use by the measured members'),
  memoryUsedBytes: z.number().describe('memory in use by the measured members'),
});
export type FolderUsage = z.infer<typeof FolderUsage>;

export const Folder = z.object({
  path: z.string(),
  name: z.string().describe('the last segment'),
  parent: z.string().describe('"" for a top-level pool'),
  depth: z.number().int(),
  comment: z.string(),
  members: z.array(FolderMember).describe('this pool’s own members (not its sub-pools’)'),
  usage: FolderUsage.describe('of this pool’s own members'),
});

export const FolderListing = z.object({
  backend: z.string().describe('the backend refs of this Corral name (kubevirt)'),
  context: z.string().describe('the context refs of this Corral’s instances carry'),
  folders: z.array(Folder).describe('every pool, depth first: a parent before its children'),
  unfoldered: z.array(FolderMember).describe('every VM and CT that is in no pool'),
});
export type FolderListing = z.infer<typeof FolderListing>;

export const FolderCreated = z.object({
  path: z.string(),
  created: z.array(z.string()).describe('the pool and any parents that did not exist'),
});
export const FolderRemoved = z.object({
  removed: z.array(z.string()).describe('the pool and its sub-pools'),
  unfoldered: z.array(z.string()).describe('refs that were in them (the instances are untouched)'),
});
export const FolderMoved = z.object({
  from: z.string(),
  to: z.string(),
  moved: z.array(z.string()).describe('the old paths of the pool and its sub-pools'),
});
export const FolderMemberAdded = z.object({
  path: z.string(),
  ref: z.string(),
  changed: z.boolean().describe('false when it was already in this pool'),
});
export const FolderMemberRemoved = z.object({ path: z.string().describe('the pool it was in'), ref: z.string() });

export const FolderActionResult = z.object({
  ref: z.string(),
  pool: z.string().describe('the pool the member is in (the target or a sub-pool)'),
  type: z.enum(['vm', 'ct', '']),
  namespace: z.string(),
  name: z.string(),
  status: z.enum(['ok', 'skipped', 'failed']),
  reason: z.string().optional().describe('why it was skipped'),
  error: z.string().optional().describe('why it failed'),
});
export type FolderActionResult = z.infer<typeof FolderActionResult>;

export const FolderActionOutput = z.object({
  path: z.string(),
  action: z.enum(FOLDER_ACTIONS),
  task: z.string().describe('the fan-out task: one log line per member; it ends in error when any member failed'),
  ok: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  results: z.array(FolderActionResult).describe('one per member, depth first'),
});
export type FolderActionOutput = z.infer<typeof FolderActionOutput>;
