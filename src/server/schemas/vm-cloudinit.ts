/**
 * DTOs of a VM's cloud-init (api.md "Cloud-init"): the settings with what is pending, a change, regenerate, and the
 * generated user-data / network-config / meta-data. Strict inputs (docs/security.md); the domain checks addresses,
 * keys and names and answers a 400 naming the field.
 */
import { z } from 'zod';
import { textUpTo, VmRef } from './common';

const TaskId = z.string().describe('task id; poll GET /api/tasks/{id}');
const CI_TYPES = ['nocloud', 'configdrive2'] as const;
const BUSES = ['sata', 'scsi'] as const;

const Short = (what: string, max = 253) =>
  z.string().min(1, 'must not be empty').max(max, `must be at most ${max} characters`).describe(what);

export const IpConfigDto = z.strictObject({
  nic: z
    .number()
    .int('must be an integer')
    .min(0, 'must be 0–31')
    .max(31, 'must be 0–31')
    .describe('NIC index (net0 = 0)'),
  ip: Short('"dhcp" or an IPv4 address in CIDR form (10.0.0.5/24)', 64).optional(),
  gw: Short('IPv4 gateway (needs a static ip)', 64).optional(),
  ip6: Short('"dhcp", "auto" (SLAAC) or an IPv6 address in CIDR form', 64).optional(),
  gw6: Short('IPv6 gateway (needs a static ip6)', 64).optional(),
});

const Custom = z.strictObject({
  user: Short('snippet replacing the generated user-data: local:snippets/<file>', 300).optional(),
  network: Short('snippet replacing the generated network-config: local:snippets/<file>', 300).optional(),
});

const PendingItem = z.object({
  key: z.string().describe('the Proxmox key (ciuser, cipassword, sshkeys, ipconfigN, nameserver, searchdomain, …)'),
  value: z.string().optional().describe('in the generated image'),
  pending: z.string().optional().describe('set since the image was generated'),
  delete: z.boolean().optional().describe('removed since the image was generated'),
});

export const CloudInitOutput = z.object({
  namespace: z.string(),
  name: z.string(),
  running: z.boolean(),
  drive: z
    .object({ disk: z.string(), bus: z.string(), type: z.enum(CI_TYPES), secret: z.string() })
    .nullable()
    .describe('the cloud-init volume, null when the VM has none'),
  handWritten: z.boolean().describe('the drive holds user-data written at create (cloudInit), not generated'),
  user: z.string().nullable(),
  passwordSet: z.boolean().describe('the password itself is never returned'),
  sshKeys: z.array(z.string()),
  ipConfigs: z.array(IpConfigDto),
  nameservers: z.array(z.string()),
  searchDomains: z.array(z.string()),
  type: z.enum(CI_TYPES).describe('the type the image is generated as'),
  typeSet: z.boolean().describe('false: the default (configdrive2 for Windows guests, else nocloud)'),
  upgrade: z.boolean().describe('package_upgrade on first boot'),
  custom: Custom,
  pending: z.array(PendingItem).describe('settings the image does not have yet; empty when it is up to date'),
});

export const CloudInitSetInput = VmRef.extend({
  user: Short('user cloud-init creates; null removes', 32).nullable().optional(),
  password: z
    .string()
    .min(1, 'must not be empty')
    .max(256, 'must be at most 256 characters')
    .nullable()
    .optional()
    .describe('write-only: stored as a SHA-512 crypt hash (a $6$… hash is kept as sent); null removes'),
  sshKeys: z.array(textUpTo(16384)).max(64, 'must list at most 64 keys').nullable().optional(),
  ipConfigs: z
    .array(IpConfigDto)
    .max(32, 'must list at most 32 NICs')
    .refine((v) => new Set(v.map((c) => c.nic)).size === v.length, 'must not name a NIC twice')
    .nullable()
    .optional()
    .describe("replaces every NIC's settings; null or [] removes them"),
  nameservers: z.array(Short('IP address', 64)).max(8, 'must list at most 8').nullable().optional(),
  searchDomains: z.array(Short('DNS name')).max(8, 'must list at most 8').nullable().optional(),
  type: z.enum(CI_TYPES, { error: 'must be nocloud or configdrive2' }).nullable().optional(),
  upgrade: z.boolean().nullable().optional(),
  custom: Custom.nullable().optional(),
  drive: z
    .enum(['add', 'remove'], { error: 'must be add or remove' })
    .optional()
    .describe('add a cloud-init drive (disk "cloudinit") or remove the one the VM has'),
  bus: z.enum(BUSES, { error: 'must be sata or scsi' }).optional().describe('bus of an added drive; default sata'),
  regenerate: z.boolean().optional().describe('regenerate the image now even while the VM runs'),
});

export const CloudInitTask = z.object({ status: z.literal('ok'), task: TaskId });

export const DUMP_TYPES = ['user', 'network', 'meta'] as const;
export const CloudInitDumpInput = VmRef.extend({
  type: z.enum(DUMP_TYPES, { error: 'must be user, network or meta' }),
});
export const CloudInitDump = z.object({
  type: z.enum(DUMP_TYPES),
  text: z.string().describe('what the guest reads: user-data, network-config or meta-data'),
});
