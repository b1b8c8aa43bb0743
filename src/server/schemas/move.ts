/**
 * Cold cross-cluster move (ADR-0010, api.md "Pools and cross-backend move"): destinations, a preflight that touches
 * nothing, and the commit that runs as a task. The body is the same for preflight and commit.
 */
import { z } from 'zod';
import { ContextName, K8sName, Namespace } from './common';
import { MemberRefText } from './pools';

export const MOVE_BACKENDS = ['kubevirt', 'pve'] as const;

export const MoveBackend = z
  .enum(MOVE_BACKENDS, { error: 'must be kubevirt (a served cluster) or pve (a configured Proxmox VE host)' })
  .describe('the kind of backend to move to: kubevirt (a served kube context) or pve (a Proxmox VE host, --pve)');

export const MOVE_KINDS = ['vm', 'ct'] as const;

export const MoveKind = z
  .enum(MOVE_KINDS, { error: 'must be vm or ct' })
  .describe('what `ref` names: a VM (vm, the default) or a container (ct)');
export type MoveKind = z.infer<typeof MoveKind>;

export const MoveDestinationsQuery = z.strictObject({
  ref: MemberRefText.describe('the VM to move: kubevirt/<context>/<namespace>/<name>'),
  kind: MoveKind.optional(),
});

export const MoveInput = z.strictObject({
  ref: MemberRefText.describe('the VM (or CT, with kind ct) to move: kubevirt/<context>/<namespace>/<name>'),
  kind: MoveKind.optional(),
  toBackend: MoveBackend,
  toContext: ContextName.optional().describe(
    'the served cluster (kubevirt) or configured Proxmox VE host (pve) to move to; default: the first one',
  ),
  toNamespace: Namespace.optional().describe("the namespace at the destination; default: the source's namespace"),
  name: K8sName.optional().describe("the VM's name at the destination; default: its current name"),
  scratch: z
    .boolean()
    .optional()
    .describe(
      "stage each exported disk in a temporary file on the Corral server before the upload (default false: streamed straight from the source's export server to the destination's upload proxy)",
    ),
  deleteSource: z
    .boolean()
    .optional()
    .describe('delete the source VM and its disks once the moved VM is verified (default false: it is kept, stopped)'),
  vmid: z
    .number()
    .int('must be a whole number')
    .min(100, 'must be at least 100')
    .max(999_999_999, 'must be at most 999999999')
    .optional()
    .describe("pve only: the moved VM's vmid (default: the host's next free one)"),
  toNode: z
    .string()
    .regex(/^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'must be a PVE node name')
    .optional()
    .describe('pve only: the node to create the VM on (default: the first online node)'),
  toStorage: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9._-]{0,99}$/, 'must be a PVE storage id')
    .optional()
    .describe("pve only: the storage for the VM's disks (default: the first with content 'images')"),
  bridge: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9._-]{0,15}$/, 'must be a Linux bridge name')
    .optional()
    .describe('pve only: the bridge every NIC is put on (default vmbr0)'),
});
export type MoveInput = z.infer<typeof MoveInput>;

export const MoveDestination = z.object({
  backend: z.enum(MOVE_BACKENDS),
  context: z.string().describe('the kube context or the PVE host name; send it as toContext'),
  name: z.string().describe("the cluster's display name"),
  default: z.boolean().describe('the first cluster Corral serves'),
  ok: z.boolean().describe('it can receive this VM (a preflight still checks names, classes and types)'),
  reasons: z.array(z.string()).describe('why it cannot; empty when ok'),
  note: z.string().optional().describe('what to know before choosing it (a PVE host: moves there are one way)'),
});
export type MoveDestination = z.infer<typeof MoveDestination>;

export const MoveDestinations = z.object({
  ref: z.string(),
  destinations: z.array(MoveDestination),
});
export type MoveDestinations = z.infer<typeof MoveDestinations>;

export const MoveRefusal = z.object({
  reason: z.string().describe('what stops the move'),
  remedy: z.string().describe('what to do about it'),
});
export type MoveRefusal = z.infer<typeof MoveRefusal>;

export const MoveDiskPlan = z.object({
  volume: z.string().describe("the volume's name in the VM spec"),
  claim: z.string().describe("the source's PersistentVolumeClaim"),
  size: z.string(),
  storageClass: z.string().describe("the class at the destination ('' = its default class); pve: the storage"),
  to: z.string().describe('the DataVolume the disk becomes at the destination; pve: its disk key (scsi0, …)'),
});

export const MovePlan = z.object({
  source: z.object({
    backend: z.literal('kubevirt'),
    context: z.string(),
    namespace: z.string(),
    name: z.string(),
    running: z.boolean().describe('it runs now: the move stops it and starts the moved VM'),
  }),
  destination: z.object({
    backend: z.enum(MOVE_BACKENDS),
    context: z.string(),
    namespace: z.string().describe("'' for a PVE host"),
    name: z.string(),
    node: z.string().optional().describe('pve: the node the VM is created on'),
    vmid: z.number().optional().describe('pve: the vmid asked for (absent: the next free one at commit)'),
  }),
  disks: z.array(MoveDiskPlan),
  secrets: z.array(z.string()).describe('cloud-init Secrets copied along'),
  scratch: z.boolean(),
  deleteSource: z.boolean(),
  steps: z.array(z.string()).describe('what the commit will do, in order'),
});
export type MovePlan = z.infer<typeof MovePlan>;

export const MovePreflight = z.object({
  ok: z.boolean().describe('no refusals: POST /api/move would start'),
  refusals: z.array(MoveRefusal),
  warnings: z.array(z.string()).describe('what changes (a moved VM always gets new MACs and IP addresses)'),
  dropped: z.array(z.string()).describe('what will not carry over'),
  plan: MovePlan,
});
export type MovePreflight = z.infer<typeof MovePreflight>;

export const MoveAccepted = z.object({
  task: z.string().describe('task id; poll GET /api/tasks/{id}'),
  context: z.string().describe("the cluster whose journal holds the task (the source's)"),
  ref: z
    .string()
    .describe('the moved VM once done: kubevirt/<context>/<namespace>/<name>, or pve/<host>/<node>/<name>'),
});
export type MoveAccepted = z.infer<typeof MoveAccepted>;
