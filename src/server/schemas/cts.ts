/**
 * DTOs of the container API (api.md "Containers (CT)"). Inputs follow the strict-input rules (docs/security.md):
 * strict objects, DNS-1123 names, bounded sizes, image references checked against the registry grammar.
 */
import { z } from 'zod';
import { ContextName, CpuCount, DiskSize, K8sName, K8sSubdomain, MemorySize, Namespace, VmRef } from './common';

const TaskId = z.string().describe('task id; poll GET /api/tasks/{id}');

// The reference grammar of distribution/reference: [host[:port]/]path[:tag][@digest], path components lower-case.
const HOST =
  '(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*(?::[0-9]{1,5})?/)';
const COMPONENT = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const REFERENCE = new RegExp(
  `^${HOST}?${COMPONENT}(?:/${COMPONENT})*(?::[\\w][\\w.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$`,
);

/** An OCI image reference such as `debian:bookworm` or `ghcr.io/me/tools:1.2`; no scheme, no spaces. */
export const ImageReference = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .regex(
    REFERENCE,
    'must be an image reference like debian:bookworm or registry.example.org/team/image:tag (no scheme, lower-case repository)',
  );

const CtMemory = MemorySize.describe('memory limit (and request), e.g. 2Gi; 64Mi – 4Ti');

export const CtRef = VmRef;

export const CtRow = z.object({
  context: z.string().describe('the kube context (cluster) the CT is on'),
  name: z.string(),
  namespace: z.string(),
  node: z.string().describe('"" when stopped or not scheduled'),
  phase: z
    .string()
    .describe('the pod phase (Pending, Running, ...), Stopping while it is deleted, Stopped without a pod'),
  ready: z.boolean(),
  image: z.string(),
  cpu: z.number().describe('CPU cores (requests = limits)'),
  mem: z.string().describe('memory limit'),
  privileged: z.boolean().describe('a persistent root filesystem on the data volume (chroot)'),
  disk: z.string().describe('data volume size (its capacity once bound)'),
  storageClass: z.string(),
  ip: z.string().describe('the pod IP, "" when none'),
  createdAt: z.string(),
  reason: z.string().describe('why the pod does not run (image pull error, unschedulable), "" when nothing is wrong'),
  diskUsage: z
    .object({ usedBytes: z.number(), totalBytes: z.number() })
    .nullable()
    .describe(
      'data volume usage measured by the kubelet that mounts it (Summary API); null when unknown: stopped, or no reading yet',
    ),
});
export type CtRow = z.infer<typeof CtRow>;

export const CtListInput = z
  .strictObject({
    namespace: Namespace.optional().describe('only this namespace'),
    context: ContextName.optional().describe('only this cluster (default: every cluster Corral serves)'),
  })
  .optional();

export const CtDetail = CtRow.extend({
  pod: z.record(z.string(), z.unknown()).nullable().describe('the Pod object as stored, null when stopped'),
  volume: z.record(z.string(), z.unknown()).describe('the data PersistentVolumeClaim as stored'),
});

export const CtCreateInput = z.strictObject({
  name: K8sName,
  namespace: Namespace.optional().describe('defaults to tailvm (CORRAL_NAMESPACE)'),
  context: ContextName.optional(),
  image: ImageReference,
  cpu: CpuCount.optional().describe('CPU cores, default 1'),
  mem: CtMemory.optional(),
  disk: DiskSize.optional().describe('data volume size, default 8Gi; 1Gi – 64Ti'),
  storageClass: z
    .union([z.literal(''), K8sSubdomain])
    .optional()
    .describe('"" (default) uses the cluster default StorageClass'),
  privileged: z
    .boolean()
    .optional()
    .describe('seed the image root filesystem onto the volume and chroot into it (default false: volume at /data)'),
});
export type CtCreateInput = z.infer<typeof CtCreateInput>;

export const CtCreated = z.object({ name: z.string(), namespace: z.string(), task: TaskId });

export const CT_ACTIONS = ['start', 'stop', 'restart'] as const;
export const CtActionInput = CtRef.extend({
  action: z.enum(CT_ACTIONS, { error: `must be one of ${CT_ACTIONS.join(', ')}` }),
});
export const CtActionOutput = z.object({ status: z.literal('ok'), task: TaskId });

export const CtScaleInput = CtRef.extend({
  cpu: CpuCount.optional().describe('CPU cores; 1 – 512'),
  mem: CtMemory.optional(),
}).refine((v) => v.cpu !== undefined || v.mem !== undefined, { message: 'give cpu, mem or both' });

export const CtScaleOutput = z.object({
  status: z.literal('ok'),
  task: TaskId,
  mode: z
    .enum(['restart', 'offline', 'unchanged'])
    .describe('restart: a running CT gets a new pod with the new size; offline: applies at the next start'),
});

export const CtDeleted = z.object({
  status: z.literal('deleted'),
  task: TaskId,
  removed: z.array(z.string()).describe('Kind/namespace/name of everything deleted (pod, Services, data volume)'),
});
