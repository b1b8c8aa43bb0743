/**
 * DTOs of the VM operations API (api.md "Snapshots", "Clone & template", "Console & export"): snapshots, clone,
 * template flag and the disk export's query. Inputs follow the strict-input rules (docs/security.md).
 */
import { z } from 'zod';
import { InCluster, K8sName, Namespace, textUpTo, VmRef } from './common';

/**
 * A snapshot's display name, as Proxmox and Corral both accept it: a letter, then up to 39 of `[A-Za-z0-9_-]`.
 * The cluster object gets a DNS-1123 name derived from it, so a snapshot taken through /api2/json is addressable here.
 */
export const SnapshotName = z
  .string()
  .min(1, 'must not be empty')
  .max(40, 'must be at most 40 characters')
  .regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'must start with a letter, then letters, digits, "-" or "_"')
  .refine((v) => v !== 'current', "'current' is reserved");

/**
 * The snapshot routes name the VM `{vm}`: the create body's `name` (api.md) is the snapshot's, and trpc-to-openapi
 * merges path parameters into the body, so the two may not share a name.
 */
export const SnapshotVmRef = z.strictObject({ namespace: Namespace, vm: K8sName.describe('the VM'), ...InCluster });
export const SnapshotRef = SnapshotVmRef.extend({ snap: SnapshotName.describe('the snapshot name') });

export const SnapshotRow = z.object({
  name: z.string(),
  phase: z.string().describe('InProgress, Succeeded, Failed, ... (KubeVirt VirtualMachineSnapshot phase)'),
  creationTime: z.string().describe('RFC 3339; while in progress, when it was requested'),
  description: z.string().optional(),
  size: z.string().optional().describe('total size of the disks it holds, as a quantity (e.g. 20Gi)'),
  ready: z.boolean().describe('ready to restore from'),
  error: z.string().optional().describe("KubeVirt's error message while it cannot proceed"),
});
export type SnapshotRow = z.infer<typeof SnapshotRow>;

export const SnapshotCreateInput = SnapshotVmRef.extend({
  name: SnapshotName.optional().describe('default: snap-<yyyymmdd>-<hhmmss>'),
  description: textUpTo(8192).optional().describe('at most 8 KiB'),
});
export const SnapshotCreated = z.object({ name: z.string(), task: z.string() });
export const SnapshotRestoring = z.object({
  status: z.literal('restoring'),
  task: z.string().describe('stops the VM if it runs, restores, starts it again if it was running'),
});
export const SnapshotDeleted = z.object({ status: z.literal('deleted'), task: z.string() });

/**
 * The path names the source's namespace `{ns}` because the body's `namespace` (api.md) is the clone's namespace:
 * trpc-to-openapi merges path parameters into the body, so the two may not share a name.
 */
export const CloneInput = z.strictObject({
  ns: Namespace.describe('namespace of the source VM'),
  name: K8sName.describe('the source VM'),
  target: K8sName.describe('name of the new VM'),
  namespace: Namespace.optional().describe(
    'namespace of the clone (default: the source namespace); it must exist, and the source must be stopped to clone into another one',
  ),
  start: z.boolean().optional().describe('start the clone once it exists (default false)'),
  ...InCluster,
});
export const Cloned = z.object({ target: z.string(), namespace: z.string(), task: z.string() });

export const TemplateInput = VmRef.extend({ on: z.boolean().describe('true marks the VM as a template') });
export const TemplateOutput = z.object({ isTemplate: z.boolean(), task: z.string() });

export const EXPORT_FORMATS = ['raw.gz', 'qcow2'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** The query of GET …/export (a raw streaming route, validated with this schema). */
export const ExportQuery = z.strictObject({
  format: z.enum(EXPORT_FORMATS, { error: `must be one of ${EXPORT_FORMATS.join(', ')}` }).optional(),
  ...InCluster,
});
