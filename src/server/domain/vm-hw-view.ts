/**
 * The read the UI's Hardware/Options tabs are built from: every device with what can be done to it (and why not),
 * the options (vm-hw-options.ts), and the changes a running VM has not taken yet (pending until its next restart,
 * as PVE shows them).
 */
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
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
import { bytesQuantity, num, sizedHardware } from './vm-hw-facts';
import { bootOrderOf, descriptionOf, firmwareOf, startOnBootOf, type Firmware } from './vm-hw-options';

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
      startOnBoot: startOnBootOf(vm, running),
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
