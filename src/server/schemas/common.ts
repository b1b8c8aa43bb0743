/** Shared primitives for every DTO: names, sizes, counts. One definition, one error message per rule. */
import { z } from 'zod';

/** A Kubernetes object name as Corral accepts it for VMs and namespaces. */
export const K8sName = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(/^[a-z0-9][a-z0-9-]*$/, 'must match [a-z0-9][a-z0-9-]* (lower-case letters, digits and dashes)');

export const Namespace = K8sName;

/** `4G`, `4Gi`, `512Mi`, `1.5T`: decimal suffixes are taken as their binary counterparts (see docs/server.md). */
export const Quantity = z
  .string()
  .regex(/^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|K|M|G|T|P|k)$/, 'must be a size like 4G or 4Gi (units K, M, G, T, P, Ki … Pi)');

export const CpuCount = z
  .number()
  .int('must be a whole number')
  .min(1, 'must be at least 1')
  .max(128, 'must be at most 128');

/** Path parameters identifying one VM. */
export const VmRef = z.object({ namespace: Namespace, name: K8sName });
export type VmRef = z.infer<typeof VmRef>;

export const StatusOk = z.object({ status: z.literal('ok') });
export const TaskAccepted = z.object({ task: z.string().describe('task id; poll GET /api/tasks/{id}') });
