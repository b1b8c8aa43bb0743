/**
 * Corral's view of a VM rendered as Proxmox answers: list rows (`/nodes/{n}/qemu`, `/cluster/resources`),
 * `status/current`, and the qemu config. JSON types follow what clients decode strictly: vmid/sizes/counters are
 * integers, `memory` is a numeric string, property strings (`agent`, `netN`, disks) are strings, flags 0/1.
 */
import { createHash } from 'node:crypto';
import type { IoTotals } from '@/server/domain/io-counters';
import { DESCRIPTION_ANNOTATION, type VmHardware } from '@/server/domain/vm-hardware';
import type { VmRuntime } from '@/server/domain/vm-runtime';
import type { VmRow } from '@/server/schemas/vms';
import { isCloudInitKey } from './cloudinit-params';
import { parseExtras, type Extras } from './extras';
import { EMPTY_CDROM, formatDisk, parseDiskKey } from './translate/disk-spec';
import { formatNet, parseNetKey, stableMac, type NetModel, NET_MODELS } from './translate/net-spec';
import { bytesToMiB, parseQuantity } from './translate/size';
import { pveState } from './translate/status';
import { EXTRAS_ANNOTATION } from './extras';

/** The slice of a VM row list rows need, plus what the translator knows on top. */
export interface RowContext {
  vmid: number;
  row: VmRow;
  node: string;
  lock?: string;
  runtime: VmRuntime;
  /** Bytes since the VM started (the domain's integrated counters); zeros when absent or not running. */
  io?: IoTotals;
}

function baseNumbers(ctx: RowContext) {
  const { row, runtime } = ctx;
  // An instancetype-sized VM has no memory in its row; the running guest's memory is the best known maximum.
  const maxmem = parseQuantity(row.mem) || runtime.guestMemoryBytes;
  const maxdisk = parseQuantity(row.disk) ?? 0;
  const state = pveState(row.status);
  return {
    state,
    maxmem,
    maxdisk,
    cpus: Math.max(1, row.cpu),
    uptime: state.status === 'running' ? runtime.uptimeSeconds : 0,
    // Measured usage (metrics.k8s.io, sampled by the cluster layer); 0 when metrics-server is absent, as PVE shows
    // for a guest it cannot measure. QEMU overhead can push the launcher past the guest size: capped at maxmem.
    mem: state.status === 'running' ? Math.min(maxmem, runtime.memoryUsedBytes) : 0,
    cpu: state.status === 'running' ? runtime.cpuUsage : 0,
    io: state.status === 'running' && ctx.io ? ctx.io : NO_IO,
  };
}

const NO_IO: IoTotals = { netin: 0, netout: 0, diskread: 0, diskwrite: 0 };

/** Tags and the operation lock appear only when there are any, as on a real PVE node. */
function withTagsAndLock(
  out: Record<string, unknown>,
  ctx: RowContext,
  stateLock: string | undefined,
): Record<string, unknown> {
  if (ctx.row.tags.length) out.tags = ctx.row.tags.join(';');
  const lock = ctx.lock ?? stateLock;
  if (lock) out.lock = lock;
  return out;
}

/** A `/nodes/{n}/qemu` row. */
export function qemuListRow(ctx: RowContext): Record<string, unknown> {
  const n = baseNumbers(ctx);
  const out: Record<string, unknown> = {
    vmid: ctx.vmid,
    name: ctx.row.name,
    status: n.state.status,
    qmpstatus: n.state.qmpstatus,
    cpus: n.cpus,
    maxmem: n.maxmem,
    mem: n.mem,
    maxdisk: n.maxdisk,
    disk: 0,
    uptime: n.uptime,
    cpu: n.cpu,
    netin: n.io.netin,
    netout: n.io.netout,
    diskread: n.io.diskread,
    diskwrite: n.io.diskwrite,
    template: ctx.row.template ? 1 : 0,
  };
  return withTagsAndLock(out, ctx, n.state.lock);
}

/** A `qemu` row of `/cluster/resources`. */
export function resourceRow(ctx: RowContext): Record<string, unknown> {
  const n = baseNumbers(ctx);
  const out: Record<string, unknown> = {
    id: `qemu/${ctx.vmid}`,
    type: 'qemu',
    vmid: ctx.vmid,
    node: ctx.node,
    name: ctx.row.name,
    status: n.state.status,
    template: ctx.row.template ? 1 : 0,
    maxcpu: n.cpus,
    cpu: n.cpu,
    maxmem: n.maxmem,
    mem: n.mem,
    maxdisk: n.maxdisk,
    disk: 0,
    uptime: n.uptime,
    netin: n.io.netin,
    netout: n.io.netout,
    diskread: n.io.diskread,
    diskwrite: n.io.diskwrite,
  };
  return withTagsAndLock(out, ctx, n.state.lock);
}

/** `GET …/status/current`. `agent` is a number here (the opposite of config). */
export function statusCurrent(ctx: RowContext, agentConfigured: boolean): Record<string, unknown> {
  // The same numbers as the node's qemu list, plus the fields only the single-VM status carries.
  const out: Record<string, unknown> = { ...qemuListRow(ctx), ha: { managed: 0 } };
  if (agentConfigured) out.agent = 1;
  if (out.status === 'running') out['running-machine'] = 'pc-q35-kubevirt';
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Config

/** The PVE slot each KubeVirt disk/NIC is shown in: its own name when that is a PVE key, else the next free slot. */
export function assignSlots(hw: VmHardware, extras: Extras): { disks: Map<string, string>; nets: Map<string, string> } {
  const disks = new Map<string, string>();
  const taken = new Set<string>(Object.keys(extras.disks).filter((k) => extras.disks[k]?.empty));
  const claim = (disk: string, slot: string) => {
    disks.set(disk, slot);
    taken.add(slot);
  };
  for (const d of hw.disks) if (parseDiskKey(d.name)) claim(d.name, d.name);
  const next = (bus: string, order: number[]) => {
    for (const i of order) if (!taken.has(`${bus}${i}`)) return `${bus}${i}`;
    return undefined;
  };
  const range = (n: number) => [...Array(n).keys()];
  for (const d of hw.disks) {
    if (disks.has(d.name)) continue;
    const slot =
      d.device === 'cdrom'
        ? (next('ide', [2, 0, 1, 3]) ?? next('sata', range(6)))
        : d.volume?.kind === 'cloudInit'
          ? (next('ide', [0, 1, 3, 2]) ?? next('sata', range(6)))
          : d.bus === 'scsi'
            ? next('scsi', range(31))
            : d.bus === 'sata'
              ? next('sata', range(6))
              : next('virtio', range(16));
    if (slot) claim(d.name, slot);
  }
  const nets = new Map<string, string>();
  const takenNets = new Set<string>();
  for (const nic of hw.nics) {
    if (parseNetKey(nic.name) === undefined) continue;
    nets.set(nic.name, nic.name);
    takenNets.add(nic.name);
  }
  let i = 0;
  for (const nic of hw.nics) {
    if (nets.has(nic.name)) continue;
    while (takenNets.has(`net${i}`)) i++;
    nets.set(nic.name, `net${i}`);
    takenNets.add(`net${i}`);
  }
  return { disks, nets };
}

export interface ConfigContext {
  hw: VmHardware;
  row: VmRow;
  /** The StorageClass new disks land on when none is named (shown for claims without a class). */
  defaultStorage: string;
  runtime: VmRuntime;
  /** The domain's start on boot (read from the run strategy), shown as `onboot`. */
  startOnBoot: boolean;
  /** Cloud-init settings as PVE keys (vm-cloudinit.ts; `cipassword` masked). */
  cloudInit?: Record<string, string>;
}

function diskLine(ctx: ConfigContext, d: VmHardware['disks'][number], extras: Extras, slot: string): string {
  const ex = extras.disks[slot];
  const options = { ...(ex?.options ?? {}) };
  if (d.volume?.kind === 'containerDisk')
    return formatDisk({
      storage: 'containerdisk',
      volume: d.image ?? d.name,
      options,
      ...(d.device === 'cdrom' ? { cdrom: true } : {}),
    });
  if (d.volume?.kind === 'cloudInit')
    return formatDisk({
      storage: ex?.storage ?? 'cloudinit',
      volume: ex?.volume ?? d.secret ?? d.name,
      cdrom: true,
      options,
    });
  const storage =
    d.device === 'cdrom'
      ? (ex?.storage ?? 'local')
      : (ex?.storage ?? (d.storageClass || ctx.defaultStorage || 'local-lvm'));
  const volume =
    ex?.volume ?? (d.device === 'cdrom' && storage === 'local' ? `iso/${d.claim || d.name}` : d.claim || d.name);
  return formatDisk({
    storage,
    volume,
    ...(d.sizeBytes !== undefined ? { sizeBytes: d.sizeBytes } : {}),
    options,
    ...(d.device === 'cdrom' ? { cdrom: true } : {}),
  });
}

/** Keys clients send that PVE stores verbatim and Corral keeps in the extras annotation. */
export const STORED_OPTIONS = new Set([
  'acpi',
  'agent',
  'arch',
  'args',
  'autostart',
  'balloon',
  'bios',
  'boot',
  'bootdisk',
  'cpu',
  'cpulimit',
  'cpuunits',
  'description',
  'efidisk0',
  'freeze',
  'hookscript',
  'hotplug',
  'hugepages',
  'keyboard',
  'kvm',
  'localtime',
  'lock',
  'machine',
  'numa',
  'onboot',
  'ostype',
  'protection',
  'reboot',
  'rng0',
  'scsihw',
  'serial0',
  'serial1',
  'shares',
  'smbios1',
  'smp',
  'startdate',
  'startup',
  'tablet',
  'tdf',
  'tpmstate0',
  'vcpus',
  'vga',
  'vmgenid',
  'vmstatestorage',
  'watchdog',
  'audio0',
  'usb0',
  'usb1',
  'affinity',
  'spice_enhancements',
]);

/** Keys whose value must be a JSON integer (bpg CustomBool / int decoding). */
const INT_OPTIONS = new Set([
  'acpi',
  'autostart',
  'balloon',
  'cpuunits',
  'freeze',
  'kvm',
  'localtime',
  'numa',
  'onboot',
  'protection',
  'reboot',
  'shares',
  'tablet',
  'tdf',
  'vcpus',
  'smp',
]);

export function vmConfig(ctx: ConfigContext): Record<string, unknown> {
  const { hw, row } = ctx;
  const extras = parseExtras(hw.annotations[EXTRAS_ANNOTATION]);
  const slots = assignSlots(hw, extras);
  const config: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(extras.options)) {
    // An `onboot` stored by an older Corral is not the truth any more: the run strategy is.
    if (k === 'onboot') continue;
    // Cloud-init keys an older Corral stored verbatim are the domain's now (and a password is never shown).
    if (isCloudInitKey(k)) continue;
    config[k] = INT_OPTIONS.has(k) && /^-?\d+$/.test(v) ? Number(v) : v;
  }
  config.onboot = ctx.startOnBoot ? 1 : 0;
  Object.assign(config, ctx.cloudInit ?? {});
  // A description set through /api (the domain's annotation) shows here too; one a PVE client wrote wins.
  const description = hw.annotations[DESCRIPTION_ANNOTATION];
  if (config.description === undefined && description) config.description = description;
  config.name = row.name;
  config.cores = hw.cores;
  config.sockets = hw.sockets;
  config.memory = String(bytesToMiB(hw.memoryBytes));
  config.cpu ??= 'host';
  config.ostype ??= 'l26';
  config.scsihw ??= 'virtio-scsi-pci';
  const agent = reportedAgent(typeof config.agent === 'string' ? config.agent : undefined, ctx.runtime);
  if (agent !== undefined) config.agent = agent;
  if (row.template) config.template = 1;
  if (row.tags.length) config.tags = row.tags.join(';');
  for (const d of hw.disks) {
    const slot = slots.disks.get(d.name);
    if (slot) config[slot] = diskLine(ctx, d, extras, slot);
  }
  for (const [slot, ex] of Object.entries(extras.disks))
    if (ex.empty && config[slot] === undefined) config[slot] = EMPTY_CDROM;
  hw.nics.forEach((nic, index) => {
    const slot = slots.nets.get(nic.name) ?? `net${index}`;
    const ex = extras.nets[slot];
    const model = (ex?.model ?? nic.model) as NetModel;
    const mac = nic.mac
      ? nic.mac.toUpperCase()
      : (ctx.runtime.interfaces.find((i) => i.name === nic.name)?.mac.toUpperCase() ??
        stableMac(hw.namespace, hw.name, parseNetKey(slot) ?? index));
    config[slot] = formatNet({
      model: (NET_MODELS as readonly string[]).includes(model) ? model : 'virtio',
      mac,
      bridge: ex?.bridge ?? (nic.network === 'pod' ? 'vmbr0' : nic.network),
      options: ex?.options ?? {},
    });
  });
  if (typeof config.boot !== 'string') {
    const order = [...hw.disks]
      .filter((d) => d.bootOrder !== undefined)
      .sort((a, b) => (a.bootOrder ?? 0) - (b.bootOrder ?? 0))
      .map((d) => slots.disks.get(d.name))
      .filter((s): s is string => !!s);
    config.boot = `order=${[...order, ...[...slots.nets.values()]].join(';')}`;
  }
  config.digest = configDigest(config);
  return config;
}

/** Whether a PVE `agent` property string enables the agent: `1`, `enabled=1,…`, `type=virtio,enabled=1`. */
export function agentEnabled(value: string): boolean {
  const parts = value.trim().split(',');
  if (parts[0] === '1') return true;
  return parts.some((p) => p === 'enabled=1');
}

/**
 * The `agent` setting as config and `status/current` both report it. A config that claims an agent bpg cannot
 * reach makes Terraform wait 15 minutes per read, so only a connected agent, or a stopped VM (nobody asks its
 * agent), keeps the client's enabled setting; a running VM without a connected agent reports `0` — in config
 * AND in status/current, which must never say 1 while config says 0.
 */
export function reportedAgent(setting: string | undefined, runtime: VmRuntime): string | undefined {
  if (setting === undefined) return undefined;
  return agentEnabled(setting) && runtime.active && !runtime.agentConnected ? '0' : setting;
}

/** sha1 over the sorted config: what clients echo back in `digest=` for optimistic locking. */
export function configDigest(config: Record<string, unknown>): string {
  const copy = Object.fromEntries(
    Object.entries(config)
      .filter(([k]) => k !== 'digest')
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  return createHash('sha1').update(JSON.stringify(copy)).digest('hex');
}
