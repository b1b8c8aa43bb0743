/**
 * DTOs of the VM hardware API (api.md "Hardware operations", `GET /api/nads`): scale, volumes, expand, NICs,
 * options and the Hardware/Options read. Inputs follow the strict-input rules (docs/security.md): strict objects,
 * DNS-1123 names, bounded sizes, `queryBool` for query booleans.
 */
import { z } from 'zod';
import { RUN_STRATEGIES } from '../domain/vm-hw-options';
import {
  CpuCount,
  DiskSize,
  InCluster,
  K8sName,
  K8sSubdomain,
  MemorySize,
  Namespace,
  queryBool,
  textUpTo,
  VmRef,
} from './common';

const TaskId = z.string().describe('task id; poll GET /api/tasks/{id}');

/** A KubeVirt disk or interface name (DNS-1123 label, as PVC-derived and Proxmox-slot names are). */
const DeviceName = K8sName;

export const ScaleInput = VmRef.extend({
  cpu: CpuCount.optional().describe('vCPUs (sockets × cores × threads); 1 – 512'),
  mem: MemorySize.optional().describe('guest memory, e.g. 8Gi; 64Mi – 4Ti'),
}).refine((v) => v.cpu !== undefined || v.mem !== undefined, { message: 'give cpu, mem or both' });

export const SCALE_MODES = ['live', 'restart', 'offline', 'unchanged'] as const;
export const ScaleOutput = z.object({
  status: z.literal('ok'),
  task: TaskId,
  mode: z
    .enum(SCALE_MODES)
    .describe(
      'live: hot-plugged into the running guest; restart: stopped, changed and started again; offline: saved, applies at the next start; unchanged: it already had that size',
    ),
  reason: z.string().describe('why this mode (e.g. why not live)'),
  cpu: z.number().describe('vCPUs after the change'),
  mem: z.string().describe('guest memory after the change'),
});

export const DISK_BUSES = ['scsi', 'virtio', 'sata'] as const;
export const VolumeAddInput = VmRef.extend({
  size: DiskSize.describe('1Gi – 64Ti'),
  storageClass: K8sSubdomain.optional().describe('default: the cluster default StorageClass'),
  bus: z
    .enum(DISK_BUSES, { error: `must be one of ${DISK_BUSES.join(', ')}` })
    .optional()
    .describe('default scsi; a running VM hot-plugs scsi or virtio'),
});
export const VolumeAdded = z.object({
  pvc: z.string().describe('the new PVC/DataVolume, <vm>-disk-<n>'),
  disk: z.string().describe('its disk name in the VM spec (disk-<n>)'),
  task: TaskId.describe('ends when the volume is ready (and attached, when the VM runs)'),
});

export const VolumeRemoveInput = VmRef.extend({
  vol: K8sSubdomain.describe('the PVC name (or the disk name in the VM spec)'),
  delete: queryBool.optional().describe('also delete the PVC/DataVolume when it was made for this VM (default false)'),
});
export const VolumeRemoved = z.object({ status: z.literal('removed'), disk: z.string(), task: TaskId });

export const ExpandInput = VmRef.extend({
  pvc: K8sSubdomain.describe('the PVC to grow (or the disk name in the VM spec)'),
  size: DiskSize.describe('the new size; never smaller than now'),
});
export const Expanded = z.object({
  status: z.literal('ok'),
  size: z.string(),
  task: TaskId.describe('ends when the PVC reports the new capacity'),
});

/** `lan` (the VM's namespace) or `namespace/lan`. */
const NadRef = z
  .string()
  .max(127)
  .regex(
    /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\/)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/,
    'must be a NetworkAttachmentDefinition name (DNS-1123 label), optionally namespace/name',
  );
export const NIC_MODELS = ['virtio', 'e1000', 'e1000e', 'rtl8139'] as const;
export const NicAddInput = VmRef.extend({
  nad: NadRef.describe('a NetworkAttachmentDefinition (GET /api/nads)'),
  iface: DeviceName.optional().describe('interface name; default the first free net<n>'),
  model: z
    .enum(NIC_MODELS, { error: `must be one of ${NIC_MODELS.join(', ')}` })
    .optional()
    .describe('default virtio'),
});
export const NicAdded = z.object({
  status: z.literal('ok'),
  iface: z.string(),
  mac: z.string(),
  task: TaskId,
  pending: z.boolean().describe('true when the VM runs: the NIC appears at its next restart'),
});
export const NicRemoveInput = VmRef.extend({ iface: DeviceName.describe('the NIC to remove') });
export const NicRemoved = z.object({
  status: z.literal('removed'),
  task: TaskId,
  pending: z.boolean().describe('true when the VM runs: the NIC goes at its next restart'),
});

export const OptionsInput = VmRef.extend({
  runStrategy: z
    .enum(RUN_STRATEGIES, { error: `must be one of ${RUN_STRATEGIES.join(', ')}` })
    .optional()
    .describe(
      'start on boot: Always, RerunOnFailure or Once (Halted on a stopped VM, which KubeVirt starts as Always), not Manual; a strategy that would start or stop the VM now is a 409',
    ),
  firmware: z.enum(['bios', 'uefi'], { error: 'must be bios or uefi' }).optional(),
  secureBoot: z.boolean().optional().describe('needs firmware uefi'),
  bootOrder: z
    .array(DeviceName)
    .max(32, 'must list at most 32 devices')
    .refine((v) => new Set(v).size === v.length, 'must not name a device twice')
    .optional()
    .describe('disk and NIC names, first boots first; [] clears the order'),
  description: textUpTo(8192).optional().describe('at most 8 KiB; "" removes it'),
});
export const OptionsOutput = z.object({
  status: z.literal('ok'),
  task: TaskId,
  applied: z.array(z.string()).describe('options in effect now'),
  pending: z.array(z.string()).describe('options saved that the running VM takes at its next restart'),
});

const Control = z.object({
  allowed: z.boolean(),
  reason: z.string().describe('why not (or a note such as "applies at the next restart"); "" when nothing to say'),
});
export const HardwareOutput = z.object({
  namespace: z.string(),
  name: z.string(),
  status: z.string(),
  running: z.boolean(),
  cpu: z.object({
    vcpus: z.number(),
    sockets: z.number(),
    cores: z.number(),
    threads: z.number(),
    maxSockets: z.number().describe('hot-plug ceiling while running, 0 otherwise'),
    instancetype: z.string().describe('"" unless sized by an instancetype'),
  }),
  memory: z.object({
    size: z.string(),
    bytes: z.number(),
    maxGuest: z.string().describe('hot-plug ceiling while running, "" otherwise'),
    bootSize: z.string().describe('memory at boot: the floor a running VM cannot shrink below; "" when stopped'),
  }),
  disks: z.array(
    z.object({
      name: z.string(),
      device: z.string().describe('disk, cdrom or lun'),
      bus: z.string(),
      claim: z.string().describe('PVC/DataVolume, "" for containerDisk/cloud-init'),
      size: z.string(),
      sizeBytes: z.number().nullable(),
      storageClass: z.string(),
      canExpand: z.boolean(),
      hotplugged: z.boolean(),
      kind: z.string().describe('dataVolume, persistentVolumeClaim, containerDisk, cloudInit, other'),
      bootOrder: z.number().nullable(),
      expand: Control,
      detach: Control,
    }),
  ),
  nics: z.array(
    z.object({
      name: z.string(),
      model: z.string(),
      network: z.string().describe('"pod" or the NetworkAttachmentDefinition'),
      mac: z.string(),
      bootOrder: z.number().nullable(),
      remove: Control,
    }),
  ),
  options: z.object({
    runStrategy: z.string(),
    startOnBoot: z.boolean(),
    firmware: z.enum(['bios', 'uefi']),
    secureBoot: z.boolean(),
    bootOrder: z.array(z.string()),
    description: z.string(),
  }),
  pending: z
    .array(z.object({ field: z.string(), current: z.string(), pending: z.string() }))
    .describe('what the running VM takes at its next restart'),
  restartRequired: z.string().describe('KubeVirt\'s RestartRequired message, "" when none'),
  controls: z.object({
    scale: Control,
    liveScale: Control,
    addDisk: Control,
    addNic: Control,
    firmware: Control,
    bootOrder: Control,
  }),
});

export const NadListInput = z
  .strictObject({ namespace: Namespace.optional().describe('only this namespace'), ...InCluster })
  .optional();
export const NadRow = z.object({
  name: z.string(),
  namespace: z.string(),
  type: z.string().describe('CNI plugin, "" when the config does not say'),
  bridge: z.string().optional(),
  vlan: z.number().optional(),
});
