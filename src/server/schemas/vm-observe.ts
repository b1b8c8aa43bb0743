/**
 * DTOs of what Corral observes about one VM (api.md "Guest info"): the guest agent's report and the Kubernetes
 * events of the VM and the objects that belong to it. Plain JSON (numbers, ISO strings) so REST and tRPC agree.
 */
import { z } from 'zod';
import { VmRef } from './common';

export const GuestOsInfo = z.object({
  name: z.string().describe('e.g. Fedora Linux'),
  prettyName: z.string().describe('e.g. Fedora Linux 42 (Cloud Edition)'),
  version: z.string(),
  versionId: z.string(),
  id: z.string().describe('os-release ID, e.g. fedora'),
  kernelRelease: z.string(),
  kernelVersion: z.string(),
  machine: z.string().describe('e.g. x86_64'),
});

export const GuestUser = z.object({
  name: z.string(),
  domain: z.string().optional().describe('Windows domain, when the agent reports one'),
  loginTime: z.string().describe('ISO time of the login'),
});

export const GuestFilesystem = z.object({
  mountpoint: z.string(),
  type: z.string().describe('e.g. ext4, xfs, btrfs, NTFS'),
  usedBytes: z.number(),
  totalBytes: z.number(),
  disks: z.array(z.string()).describe('block devices backing it (e.g. vda4)'),
});

export const GuestNic = z.object({
  name: z.string().describe('interface name inside the guest (eth0), else the VM network name'),
  mac: z.string(),
  ips: z.array(z.string()),
});

export const GuestInfo = z.object({
  agentVersion: z.string(),
  hostname: z.string(),
  os: GuestOsInfo,
  timezone: z.object({
    name: z.string().describe('e.g. UTC, CET'),
    offsetSeconds: z.number().describe('east of UTC'),
  }),
  users: z.array(GuestUser),
  filesystems: z.array(GuestFilesystem),
  interfaces: z.array(GuestNic),
});

export const EVENT_TYPES = ['Normal', 'Warning'] as const;

export const VmEvent = z.object({
  id: z.string().describe('the Event object name (stable while its count grows)'),
  type: z.enum(EVENT_TYPES),
  reason: z.string(),
  message: z.string(),
  count: z.number(),
  object: z.object({ kind: z.string(), name: z.string() }),
  time: z.string().describe('ISO time it was last seen'),
  firstTime: z.string().optional().describe('ISO time it was first seen'),
});

export const EVENT_LIMIT = 200;

export const VmEventsInput = VmRef.extend({
  type: z.enum(EVENT_TYPES, { error: `must be one of ${EVENT_TYPES.join(', ')}` }).optional(),
});

export const VmEventsOutput = z
  .array(VmEvent)
  .describe(`newest first, at most ${EVENT_LIMIT} rows (the newest ${EVENT_LIMIT} when there are more)`);

export type GuestInfo = z.infer<typeof GuestInfo>;
export type VmEvent = z.infer<typeof VmEvent>;
export type VmEventType = (typeof EVENT_TYPES)[number];
/** `observe.eventsLive`: `resync` once the watch runs (read the list again), then each new or updated event. */
export type VmEventsLiveMessage = { kind: 'resync' } | { kind: 'event'; event: VmEvent };
