/**
 * What Proxmox's Options tab holds, the KubeVirt way — start on boot is the run strategy, firmware is the
 * bootloader, boot order is `bootOrder` on disks and NICs, description an annotation — and the read the UI's
 * Hardware/Options tabs are built from: every device with what can be done to it (and why not), and the changes a
 * running VM has not taken yet (pending until its next restart, as PVE shows them).
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { runAsTask } from './tasks';
import { requireVm } from './vm-actions';
import {
  asArray,
  asDict,
  asString,
  printableStatus,
  runStrategy,
  templateSpec,
  vmiActive,
  vmiPaused,
} from './vm-facts';
import { storageClasses } from './vm-hw-disks';
import { bytesQuantity, liveVm, num, sizedHardware } from './vm-hw-facts';

export const DESCRIPTION_ANNOTATION = 'corral.dev/description';
/** Where the Proxmox translator keeps a PVE description; read as a fallback so both front doors show one. */
const PROXMOX_EXTRAS_ANNOTATION = 'corral.io/proxmox-config';

export const RUN_STRATEGIES = ['Always', 'RerunOnFailure', 'Manual', 'Halted', 'Once'] as const;
export type RunStrategy = (typeof RUN_STRATEGIES)[number];
/** Run strategies that make KubeVirt start a stopped VM at once. */
const STARTING: readonly string[] = ['Always', 'RerunOnFailure', 'Once'];

export type Firmware = 'bios' | 'uefi';

export interface OptionsChange {
  runStrategy?: RunStrategy;
  firmware?: Firmware;
  secureBoot?: boolean;
  /** Disk and NIC names, first boots first; [] clears the order (KubeVirt's default). */
  bootOrder?: string[];
  /** '' removes it. */
  description?: string;
}

function firmwareOf(domain: Record<string, unknown>): { firmware: Firmware; secureBoot: boolean } {
  const loader = asDict(asDict(domain.firmware).bootloader);
  if (!loader.efi) return { firmware: 'bios', secureBoot: false };
  // KubeVirt's default for an efi bootloader is secure boot on.
  return { firmware: 'uefi', secureBoot: asDict(loader.efi).secureBoot !== false };
}

function bootOrderOf(domain: Record<string, unknown>): string[] {
  const devices = asDict(domain.devices);
  return [...asArray(devices.disks), ...asArray(devices.interfaces)]
    .map(asDict)
    .filter((d) => typeof d.bootOrder === 'number')
    .sort((a, b) => num(a.bootOrder, 0) - num(b.bootOrder, 0))
    .map((d) => asString(d.name));
}

function proxmoxExtras(vm: KObject): Record<string, unknown> | undefined {
  const text = vm.metadata.annotations?.[PROXMOX_EXTRAS_ANNOTATION];
  if (!text) return undefined;
  try {
    return asDict(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/**
 * The description: the one a Proxmox client wrote (kept in the translator's extras annotation), else the one set
 * through /api. Setting it through /api drops the Proxmox copy, so whichever was written last is shown by both.
 */
export function descriptionOf(vm: KObject): string {
  const pve = asDict(proxmoxExtras(vm)?.options).description;
  if (typeof pve === 'string') return pve;
  return vm.metadata.annotations?.[DESCRIPTION_ANNOTATION] ?? '';
}

/**
 * Sets options as one patch (a task). Run strategy and description apply at once; firmware, secure boot and boot
 * order of a running VM are saved and pending until its next restart (`pending` names them). A run strategy that
 * would start or stop the VM right now is refused (409): that is a power action, not an option.
 */
export async function setOptions(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  change: OptionsChange,
): Promise<{ task: string; applied: string[]; pending: string[] }> {
  const id = `VM ${namespace}/${name}`;
  requireVm(deps, namespace, name);
  if (Object.values(change).every((v) => v === undefined))
    throw new CorralError(
      'BAD_REQUEST',
      'nothing to change: give runStrategy, firmware, secureBoot, bootOrder or description',
    );
  const vm = await liveVm(deps, namespace, name);
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `${id} is being deleted`);
  const active = vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name));
  const status = printableStatus(vm);
  const domain = asDict(templateSpec(vm).domain);
  const applied: string[] = [];
  const restart: string[] = [];
  const patch: { metadata?: Record<string, unknown>; spec?: Record<string, unknown> } = {};
  const domainPatch: Record<string, unknown> = {};

  if (change.runStrategy !== undefined && change.runStrategy !== runStrategy(vm)) {
    if (!active && STARTING.includes(change.runStrategy))
      throw new CorralError(
        'CONFLICT',
        `${id} is ${status}: runStrategy ${change.runStrategy} would start it now; start it first, or choose Manual or Halted`,
      );
    if (active && change.runStrategy === 'Halted')
      throw new CorralError(
        'CONFLICT',
        `${id} is ${status}: runStrategy Halted would stop it now; stop it instead (POST …/stop)`,
      );
    patch.spec = { runStrategy: change.runStrategy, running: null };
    applied.push('runStrategy');
  }

  const now = firmwareOf(domain);
  if (change.firmware !== undefined || change.secureBoot !== undefined) {
    const firmware = change.firmware ?? now.firmware;
    const secureBoot = change.secureBoot ?? (firmware === now.firmware ? now.secureBoot : false);
    if (secureBoot && firmware !== 'uefi')
      throw new CorralError('BAD_REQUEST', 'secureBoot: needs firmware uefi (BIOS has no secure boot)');
    if (firmware !== now.firmware || secureBoot !== now.secureBoot) {
      domainPatch.firmware = {
        bootloader: firmware === 'uefi' ? { efi: { secureBoot }, bios: null } : { bios: {}, efi: null },
      };
      // KubeVirt requires SMM for secure boot.
      if (secureBoot) domainPatch.features = { smm: { enabled: true } };
      (active ? restart : applied).push('firmware');
    }
  }

  if (change.bootOrder !== undefined) {
    const devices = asDict(domain.devices);
    const disks = asArray(devices.disks).map(asDict);
    const interfaces = asArray(devices.interfaces).map(asDict);
    const known = new Set([...disks, ...interfaces].map((d) => asString(d.name)));
    const unknown = change.bootOrder.filter((n) => !known.has(n));
    if (unknown.length)
      throw new CorralError(
        'BAD_REQUEST',
        `bootOrder: ${id} has no disk or NIC named ${unknown.join(', ')} (it has: ${[...known].join(', ') || 'none'})`,
      );
    if (change.bootOrder.join('\n') !== bootOrderOf(domain).join('\n')) {
      const order = (d: Record<string, unknown>) => {
        const { bootOrder: _old, ...rest } = d;
        const at = change.bootOrder?.indexOf(asString(d.name)) ?? -1;
        return at < 0 ? rest : { ...rest, bootOrder: at + 1 };
      };
      domainPatch.devices = { disks: disks.map(order), interfaces: interfaces.map(order) };
      (active ? restart : applied).push('bootOrder');
    }
  }

  if (change.description !== undefined && change.description !== descriptionOf(vm)) {
    const annotations: Record<string, string | null> = { [DESCRIPTION_ANNOTATION]: change.description || null };
    const extras = proxmoxExtras(vm);
    const options = asDict(extras?.options);
    if (extras && typeof options.description === 'string') {
      const { description: _pve, ...rest } = options;
      annotations[PROXMOX_EXTRAS_ANNOTATION] = JSON.stringify({ ...extras, options: rest });
    }
    patch.metadata = { annotations };
    applied.push('description');
  }

  if (Object.keys(domainPatch).length)
    patch.spec = { ...(patch.spec ?? {}), template: { spec: { domain: domainPatch } } };
  const task = await runAsTask(deps.journal, 'options', `${namespace}/${name}`, caller.identity.login, async (t) => {
    if (!patch.spec && !patch.metadata) {
      t.done('nothing changed');
      return t.id;
    }
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      ...patch,
      metadata: { ...(patch.metadata ?? {}), resourceVersion: vm.metadata.resourceVersion },
    });
    t.done(
      [
        applied.length ? `set ${applied.join(', ')}` : '',
        restart.length ? `saved ${restart.join(', ')}: pending until the VM restarts` : '',
      ]
        .filter(Boolean)
        .join('; '),
    );
    return t.id;
  });
  return { task, applied, pending: restart };
}

// ---------------------------------------------------------------------------------------------------------------
// The Hardware/Options read.

/** Whether a control can be used now, and why not (shown next to a disabled control). */
export interface Control {
  allowed: boolean;
  reason: string;
}
const ok = (reason = ''): Control => ({ allowed: true, reason });
const no = (reason: string): Control => ({ allowed: false, reason });

export interface PendingChange {
  /** `cpu`, `memory`, `firmware`, `bootOrder`, `disk <name>`, `nic <name>`. */
  field: string;
  /** What the running instance has. */
  current: string;
  /** What it gets at the next restart. */
  pending: string;
}

export interface HardwareView {
  namespace: string;
  name: string;
  status: string;
  running: boolean;
  cpu: {
    vcpus: number;
    sockets: number;
    cores: number;
    threads: number;
    /** Hot-plug ceiling of sockets while it runs (0 when not running). */
    maxSockets: number;
    instancetype: string;
  };
  memory: { size: string; bytes: number; maxGuest: string; bootSize: string };
  disks: {
    name: string;
    device: string;
    bus: string;
    claim: string;
    size: string;
    sizeBytes: number | null;
    storageClass: string;
    canExpand: boolean;
    hotplugged: boolean;
    kind: string;
    bootOrder: number | null;
    expand: Control;
    detach: Control;
  }[];
  nics: { name: string; model: string; network: string; mac: string; bootOrder: number | null; remove: Control }[];
  options: {
    runStrategy: string;
    startOnBoot: boolean;
    firmware: Firmware;
    secureBoot: boolean;
    bootOrder: string[];
    description: string;
  };
  pending: PendingChange[];
  /** KubeVirt's RestartRequired message, '' when none. */
  restartRequired: string;
  controls: {
    scale: Control;
    liveScale: Control;
    addDisk: Control;
    addNic: Control;
    firmware: Control;
    bootOrder: Control;
  };
}

const size = (bytes: number) => (Number.isFinite(bytes) && bytes > 0 ? bytesQuantity(bytes) : '');

function pendingChanges(vm: KObject, vmi: KObject): PendingChange[] {
  const want = asDict(templateSpec(vm).domain);
  const have = asDict(asDict(vmi.spec).domain);
  const out: PendingChange[] = [];
  const vcpus = (cpu: Record<string, unknown>) => num(cpu.sockets, 1) * num(cpu.cores, 1) * num(cpu.threads, 1);
  if (Object.keys(asDict(want.cpu)).length) {
    const [a, b] = [vcpus(asDict(have.cpu)), vcpus(asDict(want.cpu))];
    if (a !== b) out.push({ field: 'cpu', current: String(a), pending: String(b) });
  }
  const wantMem = asString(asDict(want.memory).guest);
  if (wantMem) {
    const haveMem = asString(asDict(have.memory).guest);
    if (quantityToNumber(wantMem) !== quantityToNumber(haveMem))
      out.push({ field: 'memory', current: haveMem, pending: wantMem });
  }
  const [fa, fb] = [firmwareOf(have), firmwareOf(want)];
  const fw = (f: typeof fa) => `${f.firmware}${f.firmware === 'uefi' ? (f.secureBoot ? ' (secure boot)' : '') : ''}`;
  if (fw(fa) !== fw(fb)) out.push({ field: 'firmware', current: fw(fa), pending: fw(fb) });
  const names = (d: Record<string, unknown>, key: 'disks' | 'interfaces') =>
    new Set(asArray(asDict(d.devices)[key]).map((x) => asString(asDict(x).name)));
  for (const [key, label] of [
    ['disks', 'disk'],
    ['interfaces', 'nic'],
  ] as const) {
    const [now, next] = [names(have, key), names(want, key)];
    for (const n of next) if (!now.has(n)) out.push({ field: `${label} ${n}`, current: 'absent', pending: 'added' });
    for (const n of now) if (!next.has(n)) out.push({ field: `${label} ${n}`, current: 'present', pending: 'removed' });
  }
  const [ba, bb] = [bootOrderOf(have).join(', '), bootOrderOf(want).join(', ')];
  if (ba !== bb) out.push({ field: 'bootOrder', current: ba, pending: bb });
  return out;
}

/** A VM's hardware and options with what can be changed now (and why not), and its pending changes. */
export async function hardwareView(deps: DomainDeps, namespace: string, name: string): Promise<HardwareView> {
  const vm = requireVm(deps, namespace, name);
  const hw = await sizedHardware(deps, namespace, name);
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const running = vmiActive(vmi);
  const status = printableStatus(vm);
  const classes = await storageClasses(deps).catch(() => []);
  const defaultClass = classes.find((c) => c.isDefault);
  const instancetype = asString(asDict(asDict(vm.spec).instancetype).name);
  const vmiDomain = asDict(asDict(vmi?.spec).domain);
  const stopFirst = 'stop the VM first';
  const atRestart = 'applies at the next restart';

  const disks = hw.disks.map((d) => {
    const claimBacked = !!d.claim && d.volume?.kind !== 'containerDisk' && d.volume?.kind !== 'cloudInit';
    const sc = d.storageClass ? classes.find((c) => c.name === d.storageClass) : defaultClass;
    const canExpand = claimBacked && (sc?.expandable ?? false);
    const hotplugged = d.volume?.hotpluggable ?? false;
    return {
      name: d.name,
      device: d.device,
      bus: d.bus,
      claim: d.claim,
      size: d.sizeBytes !== undefined ? bytesQuantity(d.sizeBytes) : '',
      sizeBytes: d.sizeBytes ?? null,
      storageClass: d.storageClass || sc?.name || '',
      canExpand,
      hotplugged,
      kind: d.volume?.kind ?? 'other',
      bootOrder: d.bootOrder ?? null,
      expand: !claimBacked
        ? no(`${d.name} is a ${d.volume?.kind ?? 'disk'} without a volume that can grow`)
        : canExpand
          ? ok()
          : no(`storage class ${sc?.name || '(none)'} cannot expand`),
      detach: running && !hotplugged ? no(`${stopFirst}: ${d.name} is not hot-plugged`) : ok(),
    };
  });
  const nics = hw.nics.map((n) => {
    const iface = asArray(asDict(asDict(templateSpec(vm).domain).devices).interfaces)
      .map(asDict)
      .find((i) => asString(i.name) === n.name);
    return {
      ...n,
      bootOrder: typeof iface?.bootOrder === 'number' ? iface.bootOrder : null,
      remove: ok(running ? atRestart : ''),
    };
  });

  const migratable = asArray(asDict(vmi?.status).conditions)
    .map(asDict)
    .find((c) => c.type === 'LiveMigratable');
  const scale = instancetype
    ? no(`sized by instancetype ${instancetype}: pick another instancetype instead`)
    : running && vmiPaused(vmi)
      ? no('unpause the VM first')
      : status === 'Migrating'
        ? no('wait for the migration to finish')
        : ok(running ? '' : 'applies at the next start');
  const liveScale = !running
    ? no('the VM is not running')
    : migratable?.status === 'True'
      ? ok()
      : no(
          `the VM is not live-migratable${migratable ? ` (${asString(migratable.message) || asString(migratable.reason)})` : ''}: scaling restarts it`,
        );
  const fw = firmwareOf(asDict(templateSpec(vm).domain));
  const restartCond = asArray(asDict(vm.status).conditions)
    .map(asDict)
    .find((c) => c.type === 'RestartRequired' && c.status === 'True');
  return {
    namespace,
    name,
    status,
    running,
    cpu: {
      vcpus: hw.sockets * hw.cores * hw.threads,
      sockets: hw.sockets,
      cores: hw.cores,
      threads: hw.threads,
      maxSockets: running ? num(asDict(vmiDomain.cpu).maxSockets, 0) : 0,
      instancetype,
    },
    memory: {
      size: size(hw.memoryBytes),
      bytes: hw.memoryBytes,
      maxGuest: running ? size(quantityToNumber(asString(asDict(vmiDomain.memory).maxGuest))) : '',
      bootSize: running ? size(quantityToNumber(asString(asDict(asDict(vmi?.status).memory).guestAtBoot))) : '',
    },
    disks,
    nics,
    options: {
      runStrategy: runStrategy(vm),
      startOnBoot: STARTING.includes(runStrategy(vm)),
      firmware: fw.firmware,
      secureBoot: fw.secureBoot,
      bootOrder: bootOrderOf(asDict(templateSpec(vm).domain)),
      description: descriptionOf(vm),
    },
    pending: running && vmi ? pendingChanges(vm, vmi) : [],
    restartRequired: restartCond ? asString(restartCond.message) || 'a restart is required' : '',
    controls: {
      scale,
      liveScale,
      addDisk: running ? ok('hot-plugged: bus scsi or virtio (sata: stop the VM first)') : ok(),
      addNic: ok(running ? atRestart : ''),
      firmware: ok(running ? atRestart : ''),
      bootOrder: ok(running ? atRestart : ''),
    },
  };
}
