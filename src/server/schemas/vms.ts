/** DTOs of the VM lifecycle API (api.md "VM lifecycle"). Outputs are plain JSON: REST ignores superjson. */
import { z } from 'zod';
import { HttpUrl } from './images';
import {
  ContextName,
  CpuCount,
  DiskSize,
  K8sName,
  K8sSubdomain,
  MemorySize,
  Namespace,
  queryInt,
  textUpTo,
  VmRef,
} from './common';

export const VmRow = z.object({
  context: z.string().describe('the kube context (cluster) the VM is on'),
  name: z.string(),
  namespace: z.string(),
  status: z.string().describe("KubeVirt's status.printableStatus as is (Running, Stopped, Starting, Paused, ...)"),
  ready: z.boolean(),
  running: z.boolean().describe('a VM instance exists and is not finished (Running, Paused, Migrating, Starting...)'),
  cpu: z
    .number()
    .describe('vCPUs (sockets × cores × threads); for instancetype-sized VMs the running topology, else 0'),
  mem: z.string().describe('guest memory quantity; for instancetype-sized VMs the running size, else ""'),
  disk: z.string().describe('root disk size, "" for an ephemeral containerDisk'),
  ip: z.string().describe('"" when no address'),
  node: z
    .string()
    .describe('where it runs; when not running, the node it is pinned to (create node, offline migrate); "" else'),
  tags: z.array(z.string()).describe('from labels corral.dev/tag.<tag>'),
  template: z.boolean().describe('label corral.dev/template=true'),
  uid: z.string(),
  createdAt: z.string(),
  runStrategy: z.string(),
  instancetype: z.string(),
  preference: z.string(),
  os: z.string().describe('guest OS pretty name from the guest agent, "" when unknown'),
  vmid: z
    .number()
    .int()
    .min(100)
    .max(999_999_999)
    .describe(
      'the id /api2/json addresses this VM by: label corral.io/proxmox-vmid, else 100 + crc32(name) % 899999900; ' +
        'on a collision the newcomer gets the lowest free id, persisted as its label',
    ),
});
export type VmRow = z.infer<typeof VmRow>;

export const VmListInput = z
  .strictObject({
    namespace: Namespace.optional().describe('only this namespace'),
    tag: z.string().max(63).optional().describe('only VMs carrying this tag'),
    node: K8sSubdomain.optional().describe('only VMs placed on this node'),
    context: ContextName.optional().describe('only this cluster (default: every cluster Corral serves)'),
    limit: queryInt(1, 1000)
      .optional()
      .describe(
        'only the first N rows in name order (natural: vm-2 before vm-10, then namespace), as a table opens: a first screen before the whole list',
      ),
  })
  .optional();

export const VM_SOURCES = [
  'containerDisk',
  'image',
  'import',
  'iso',
  'bootc',
  'pvc',
  'dataVolume',
  'isoDataVolume',
] as const;
export type VmSource = (typeof VM_SOURCES)[number];

// http(s) only: a CDI importer must not be pointed at file:// (or any other scheme).
const url = (what: string) => HttpUrl.describe(`http(s) URL of the ${what}`);
const imageRef = z
  .string()
  .min(1, 'must not be empty')
  .max(512)
  .regex(/^[^\s]+$/, 'must be an image reference without spaces');

export const VmCreateInput = z
  .strictObject({
    name: K8sName,
    namespace: Namespace.optional().describe('defaults to tailvm (CORRAL_NAMESPACE)'),
    context: ContextName.optional(),
    cpu: CpuCount.optional().describe('default 2'),
    mem: MemorySize.optional().describe('default 4G; 64Mi – 4Ti'),
    disk: DiskSize.optional().describe('default 20G; 1Gi – 64Ti'),
    containerDisk: imageRef.optional().describe('source: OCI containerdisk URI'),
    image: z.string().min(1).max(253).optional().describe('source: catalog entry name (GET /api/images)'),
    import: url('qcow2/raw image').optional().describe('source: CDI import into DataVolume <vm>-disk'),
    iso: url('installer ISO').optional().describe('source: ISO DataVolume <vm>-iso + blank <vm>-disk'),
    bootc: imageRef.optional().describe('source: bootc image, built into a disk by a cluster Job (202 + task)'),
    pvc: K8sName.optional().describe('source: existing PVC, cloned into <vm>-disk'),
    dataVolume: K8sName.optional().describe(
      "source: an imported disk image (GET /api/datavolumes) in the VM's namespace, phase Succeeded, cloned into <vm>-disk",
    ),
    isoDataVolume: K8sName.optional().describe(
      "source: an imported ISO (GET /api/datavolumes) in the VM's namespace, phase Succeeded, attached read-only as a cdrom that boots first, + blank <vm>-disk",
    ),
    sshKey: z
      .string()
      .max(16384)
      .regex(/^(ssh|ecdsa|sk)-\S+ \S+/, 'must be an SSH public key')
      .optional(),
    node: K8sSubdomain.optional().describe('schedule on this node'),
    cloudInit: textUpTo(65536).optional().describe('cloud-init user-data (stored in a Secret), at most 64 KiB'),
    instancetype: K8sSubdomain.optional(),
    preference: K8sSubdomain.optional(),
    start: z
      .boolean()
      .optional()
      .describe('power on right after creation (default false: created stopped, like Proxmox)'),
  })
  .superRefine((input, ctx) => {
    const given = VM_SOURCES.filter((s) => input[s] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: ['source'],
        message:
          given.length === 0
            ? `exactly one of ${VM_SOURCES.join(', ')} is required`
            : `exactly one source is allowed, got ${given.join(' and ')}`,
      });
    }
    if (input.instancetype && input.cpu !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['cpu'],
        message: 'cannot be combined with instancetype (it sizes the CPU)',
      });
    }
    if (input.instancetype && input.mem !== undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['mem'],
        message: 'cannot be combined with instancetype (it sizes memory)',
      });
    }
  });
export type VmCreateInput = z.infer<typeof VmCreateInput>;

export const VmCreated = z.union([
  z.object({ name: z.string(), namespace: z.string(), task: z.string().optional() }),
  z.object({ task: z.string() }),
]);
export type VmCreated = z.infer<typeof VmCreated>;

export const VM_ACTIONS = ['start', 'stop', 'restart', 'pause', 'unpause', 'migrate'] as const;
export type VmAction = (typeof VM_ACTIONS)[number];
export const VmActionInput = VmRef.extend({
  action: z.enum(VM_ACTIONS, { error: `must be one of ${VM_ACTIONS.join(', ')}` }),
});

export const VmMigrateInput = VmRef.extend({
  targetNode: z
    .union([z.literal(''), K8sSubdomain])
    .optional()
    .describe(
      'a running VM live-migrates (empty lets the scheduler choose); a stopped VM is pinned to it (offline migration)',
    ),
});

export const Tag = z
  .string()
  .min(1, 'must not be empty')
  .max(63, 'must be at most 63 characters')
  .regex(
    /^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$/,
    'must be a label-name segment ([A-Za-z0-9_.-], alphanumeric ends)',
  );
export const VmTagInput = VmRef.extend({ tag: Tag, on: z.boolean() });
export const VmTagOutput = z.object({ tag: z.string(), on: z.boolean() });

export const VmManifest = z.record(z.string(), z.unknown()).describe('the KubeVirt VirtualMachine object as stored');

export const DeletionItem = z.object({
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  why: z.string().describe('labelled corral.dev/vm, referenced by the VM spec, owned by the VM, ...'),
});
export const DeletionPlan = z.object({ vm: VmRef, running: z.boolean(), objects: z.array(DeletionItem) });
export type DeletionPlan = z.infer<typeof DeletionPlan>;

export const VmDeleted = z.object({
  status: z.literal('deleted'),
  task: z.string(),
  removed: z.array(z.string()).describe('Kind/namespace/name of everything deleted'),
});
