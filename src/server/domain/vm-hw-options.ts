/**
 * What Proxmox's Options tab holds, the KubeVirt way — start on boot is the run strategy, firmware is the
 * bootloader, boot order is `bootOrder` on disks and NICs, description an annotation. The read the UI's
 * Hardware/Options tabs are built from is vm-hw-view.ts.
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { patchVmFrom } from './vm-patch';
import { runAsTask } from './tasks';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, printableStatus, runStrategy, templateSpec, vmiActive } from './vm-facts';
import { liveVm, num } from './vm-hw-facts';

export const DESCRIPTION_ANNOTATION = 'corral.dev/description';
/** Where the Proxmox translator keeps a PVE description; read as a fallback so both front doors show one. */
const PROXMOX_EXTRAS_ANNOTATION = 'corral.io/proxmox-config';

export const RUN_STRATEGIES = ['Always', 'RerunOnFailure', 'Manual', 'Halted', 'Once'] as const;
export type RunStrategy = (typeof RUN_STRATEGIES)[number];
/** Run strategies that make KubeVirt start a stopped VM at once. */
const STARTING: readonly string[] = ['Always', 'RerunOnFailure', 'Once'];

/**
 * Start on boot, read from the run strategy: one that keeps the VM up (Always, RerunOnFailure, Once), or — for a
 * stopped VM — Halted, because KubeVirt's start turns Halted into Always (and its stop turns Always into Halted).
 * Manual never starts by itself and stays Manual across start and stop: that is "no".
 */
export function startOnBootOf(vm: KObject, active: boolean): boolean {
  const strategy = runStrategy(vm);
  return STARTING.includes(strategy) || (!active && strategy === 'Halted');
}

/** The run strategy that says `on` for a VM that is `active` or not, without starting or stopping it now. */
function startOnBootStrategy(active: boolean, on: boolean): RunStrategy {
  if (!on) return 'Manual';
  return active ? 'Always' : 'Halted';
}

/**
 * Sets start on boot through the run strategy (how Proxmox's `onboot` lands): a running VM gets Always or Manual;
 * a stopped one Halted (Always once started) or Manual, so nothing starts now. Undefined when it already says so.
 */
export async function setStartOnBoot(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  on: boolean,
): Promise<string | undefined> {
  const vm = requireVm(deps, namespace, name);
  const active = vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name));
  if (startOnBootOf(vm, active) === on) return undefined;
  return (await setOptions(deps, caller, namespace, name, { runStrategy: startOnBootStrategy(active, on) })).task;
}

/** Start on boot of a VM in the cache (false when it is not there). */
export function startOnBoot(deps: DomainDeps, namespace: string, name: string): boolean {
  const vm = deps.cluster.cache.get('VirtualMachine', namespace, name);
  return !!vm && startOnBootOf(vm, vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name)));
}

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

export function firmwareOf(domain: Record<string, unknown>): { firmware: Firmware; secureBoot: boolean } {
  const loader = asDict(asDict(domain.firmware).bootloader);
  if (!loader.efi) return { firmware: 'bios', secureBoot: false };
  // KubeVirt's default for an efi bootloader is secure boot on.
  return { firmware: 'uefi', secureBoot: asDict(loader.efi).secureBoot !== false };
}

export function bootOrderOf(domain: Record<string, unknown>): string[] {
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
    await patchVmFrom(deps, vm, patch);
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
