/** CPU, memory and metadata of an existing VM: the Proxmox config write, and Corral's scale (live or cold). */
import { CorralError, describeError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { LABEL_TEMPLATE } from './labels';
import { runAsTask, type TaskHandle } from './tasks';
import { requireVm } from './vm-actions';
import {
  asArray,
  asDict,
  asString,
  isLiveMigratable,
  printableStatus,
  templateSpec,
  vmiActive,
  vmiNode,
  vmiPaused,
  vmiPhase,
} from './vm-facts';
import { bytesQuantity, num, readHardware } from './vm-hw-facts';
import { taskEnded, waitFor } from './vm-hw-wait';
import { powerAction } from './vm-power';

export interface HardwareChange {
  sockets?: number;
  cores?: number;
  memoryBytes?: number;
  /** Labels to set (value) or remove (null). */
  labels?: Record<string, string | null>;
  /** Annotations to set (value) or remove (null). */
  annotations?: Record<string, string | null>;
}

/**
 * Applies CPU/memory and metadata in one merge patch. Like Proxmox's config PUT it never restarts the guest: a
 * running VM picks up CPU/memory through KubeVirt's live update where supported, else at its next restart.
 */
export async function changeHardware(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  change: HardwareChange,
): Promise<string | undefined> {
  const vm = requireVm(deps, namespace, name);
  const domain: Record<string, unknown> = {};
  const cpu = asDict(asDict(templateSpec(vm).domain).cpu);
  if (change.sockets !== undefined || change.cores !== undefined) {
    domain.cpu = { ...cpu, sockets: change.sockets ?? num(cpu.sockets, 1), cores: change.cores ?? num(cpu.cores, 1) };
  }
  if (change.memoryBytes !== undefined) domain.memory = { guest: bytesQuantity(change.memoryBytes) };
  const patch: Record<string, unknown> = {};
  if (change.labels || change.annotations) {
    patch.metadata = {
      ...(change.labels ? { labels: change.labels } : {}),
      ...(change.annotations ? { annotations: change.annotations } : {}),
    };
  }
  if (Object.keys(domain).length) patch.spec = { template: { spec: { domain } } };
  if (Object.keys(patch).length === 0) return undefined;
  const summary = [
    change.sockets !== undefined ? `sockets=${change.sockets}` : '',
    change.cores !== undefined ? `cores=${change.cores}` : '',
    change.memoryBytes !== undefined ? `memory=${change.memoryBytes}B` : '',
    change.labels || change.annotations ? 'metadata' : '',
  ]
    .filter(Boolean)
    .join(' ');
  return runAsTask(deps.journal, 'config', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, patch);
    task.done(`updated ${summary}`);
    return task.id;
  });
}

/** Metadata only, without a task (the vmid index persisting a label, tags). */
export async function patchVmMetadata(
  deps: DomainDeps,
  namespace: string,
  name: string,
  labels: Record<string, string | null>,
): Promise<void> {
  await deps.cluster.patch('VirtualMachine', namespace, name, { metadata: { labels } });
}

export async function setTemplateFlag(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  on: boolean,
): Promise<string> {
  requireVm(deps, namespace, name);
  return runAsTask(deps.journal, 'template', `${namespace}/${name}`, caller.identity.login, async (task) => {
    await deps.cluster.patch('VirtualMachine', namespace, name, {
      metadata: { labels: { [LABEL_TEMPLATE]: on ? 'true' : null } },
    });
    task.done(on ? 'marked as template' : 'template flag removed');
    return task.id;
  });
}

// ---------------------------------------------------------------------------------------------------------------
// Scale: CPU and memory of a VM, applied live where KubeVirt can hot-plug them, else by a restart.

/** How a scale is applied: hot-plugged into the running guest, by stop → patch → start, or saved for the next start. */
export type ScaleMode = 'live' | 'restart' | 'offline' | 'unchanged';

export interface ScaleRequest {
  /** vCPUs (sockets × cores × threads). */
  cpu?: number;
  memoryBytes?: number;
}

export interface ScaleResult {
  task: string;
  mode: ScaleMode;
  /** Why this mode (e.g. why not live). */
  reason: string;
  cpu: number;
  mem: string;
}

/** KubeVirt hot-plugs memory in blocks of 128Mi. */
const MEMORY_BLOCK = 128 * 2 ** 20;

interface Topology {
  sockets: number;
  cores: number;
  threads: number;
}

/** The largest amount of each resource a node offers (allocatable), for the capacity check. */
function nodeCapacity(deps: DomainDeps, node: string | undefined): { cpu: number; memoryBytes: number; what: string } {
  const rows = deps.fleet.nodeRows().filter((n) => (node ? n.name === node : n.schedulable));
  if (!rows.length) return { cpu: Infinity, memoryBytes: Infinity, what: '' };
  const mem = (q: string) => {
    const b = quantityToNumber(q);
    return Number.isFinite(b) ? b : Infinity;
  };
  const cpu = Math.max(...rows.map((n) => (n.cpu > 0 ? n.cpu : Infinity)));
  const memoryBytes = Math.max(...rows.map((n) => mem(n.memory)));
  return { cpu, memoryBytes, what: node ? `node ${node}` : 'the largest node' };
}

/**
 * Why the running VM cannot take the new size live (`undefined` when it can): KubeVirt hot-plugs CPU sockets up
 * to the instance's maxSockets and memory up to maxGuest in 128Mi blocks, and only for live-migratable VMs (the
 * change rolls out through a live-update migration).
 */
function liveRefusal(vmi: KObject, target: Topology, current: Topology, memoryBytes: number): string | undefined {
  const domain = asDict(asDict(vmi.spec).domain);
  const cpu = asDict(domain.cpu);
  const memory = asDict(domain.memory);
  const migratable = asArray(asDict(vmi.status).conditions)
    .map(asDict)
    .find((c) => c.type === 'LiveMigratable');
  if (migratable?.status !== 'True')
    return `it is not live-migratable${migratable ? ` (${asString(migratable.message) || asString(migratable.reason)})` : ''}`;
  if (target.cores !== current.cores || target.threads !== current.threads)
    return `${target.sockets * target.cores * target.threads} vCPUs need a new topology (only sockets hot-plug; it has ${current.cores} core(s) × ${current.threads} thread(s) per socket)`;
  const maxSockets = num(cpu.maxSockets, current.sockets);
  if (target.sockets > maxSockets)
    return `${target.sockets} sockets exceed its hot-plug ceiling of ${maxSockets} (maxSockets)`;
  const maxGuest = quantityToNumber(asString(memory.maxGuest));
  if (Number.isFinite(maxGuest) && memoryBytes > maxGuest)
    return `${bytesQuantity(memoryBytes)} exceeds its hot-plug ceiling of ${bytesQuantity(maxGuest)} (maxGuest)`;
  if (memoryBytes % MEMORY_BLOCK !== 0) return `${memoryBytes} bytes of memory is not a multiple of 128Mi`;
  return undefined;
}

/**
 * Changes a VM's vCPUs and/or memory as a task. A running, live-migratable VM within its hot-plug ceilings gets
 * them live (KubeVirt's LiveUpdate rollout); any other running VM is stopped, patched and started again; a stopped
 * VM is patched and takes the size at its next start. Refused up front (409, nothing written): a VM sized by an
 * instancetype, a paused or migrating VM, shrinking a hot-plug-capable running VM below what it booted with (the
 * hot-plug floor), and a size no node can hold.
 */
export async function scaleVm(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  req: ScaleRequest,
): Promise<ScaleResult> {
  const id = `VM ${namespace}/${name}`;
  const vm = requireVm(deps, namespace, name);
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `${id} is being deleted`);
  const instancetype = asString(asDict(asDict(vm.spec).instancetype).name);
  if (instancetype)
    throw new CorralError(
      'CONFLICT',
      `${id} is sized by instancetype ${instancetype}: its CPU and memory come from there; pick another instancetype instead`,
    );
  const hw = readHardware(deps, vm);
  const current: Topology = { sockets: hw.sockets, cores: hw.cores, threads: hw.threads };
  const perSocket = hw.cores * hw.threads;
  const target: Topology =
    req.cpu === undefined
      ? current
      : req.cpu % perSocket === 0
        ? { ...current, sockets: req.cpu / perSocket }
        : { sockets: req.cpu, cores: 1, threads: 1 };
  const vcpus = target.sockets * target.cores * target.threads;
  const memoryBytes = req.memoryBytes ?? hw.memoryBytes;
  const result = (task: string, mode: ScaleMode, reason: string): ScaleResult => ({
    task,
    mode,
    reason,
    cpu: vcpus,
    mem: bytesQuantity(memoryBytes),
  });
  const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
  const active = vmiActive(vmi);
  const status = printableStatus(vm);
  if (active && vmiPaused(vmi)) throw new CorralError('CONFLICT', `${id} is Paused; unpause it before scaling`);
  if (status === 'Migrating') throw new CorralError('CONFLICT', `${id} is Migrating; scale it once that has finished`);
  if (active && vmiPhase(vmi) !== 'Running')
    throw new CorralError('CONFLICT', `${id} is ${status}; scale it once it is Running or Stopped`);
  const unchanged =
    target.sockets === current.sockets &&
    target.cores === current.cores &&
    target.threads === current.threads &&
    memoryBytes === hw.memoryBytes;
  const liveWhy = active && vmi && !unchanged ? liveRefusal(vmi, target, current, memoryBytes) : 'it is not running';
  const live = active && !unchanged && liveWhy === undefined;

  // Capacity: a live change stays on the VM's node; anything else may land on any node.
  const cap = nodeCapacity(deps, live ? vmiNode(vmi) : undefined);
  if (vcpus > cap.cpu)
    throw new CorralError('CONFLICT', `${vcpus} vCPUs exceed ${cap.what}'s capacity of ${cap.cpu} allocatable CPUs`);
  if (memoryBytes > cap.memoryBytes)
    throw new CorralError(
      'CONFLICT',
      `${bytesQuantity(memoryBytes)} of memory exceeds ${cap.what}'s capacity of ${bytesQuantity(cap.memoryBytes)} allocatable`,
    );
  // The hot-plug floor: KubeVirt hot-plugs up, never below what the guest booted with.
  if (active && vmi && !unchanged && isLiveMigratable(vmi).ok) {
    const vmiDomain = asDict(asDict(vmi.spec).domain);
    const bootMemory = quantityToNumber(
      asString(asDict(asDict(vmi.status).memory).guestAtBoot) || asString(asDict(vmiDomain.memory).guest),
    );
    const liveSockets = num(asDict(vmiDomain.cpu).sockets, current.sockets);
    if (req.memoryBytes !== undefined && Number.isFinite(bootMemory) && memoryBytes < bootMemory)
      throw new CorralError(
        'CONFLICT',
        `${id} is running: ${bytesQuantity(memoryBytes)} is below its hot-plug floor of ${bytesQuantity(bootMemory)} (the memory it booted with); stop the VM first to shrink it`,
      );
    if (
      req.cpu !== undefined &&
      target.cores === current.cores &&
      target.threads === current.threads &&
      target.sockets < liveSockets
    )
      throw new CorralError(
        'CONFLICT',
        `${id} is running: ${vcpus} vCPUs is below its hot-plug floor of ${liveSockets * perSocket} (CPU sockets are hot-plugged, never unplugged); stop the VM first to shrink it`,
      );
  }

  const patch = {
    spec: {
      template: {
        spec: {
          domain: {
            cpu: { sockets: target.sockets, cores: target.cores, threads: target.threads },
            memory: { guest: bytesQuantity(memoryBytes) },
          },
        },
      },
    },
  };
  const summary = `${vcpus} vCPU(s), ${bytesQuantity(memoryBytes)}`;
  const target_ = `${namespace}/${name}`;
  if (unchanged) {
    const task = deps.journal.start('scale', target_, caller.identity.login);
    task.done(`already ${summary}`);
    return result(task.id, 'unchanged', `${id} already has ${summary}`);
  }
  if (!active) {
    const task = await runAsTask(deps.journal, 'scale', target_, caller.identity.login, async (t) => {
      await deps.cluster.patch('VirtualMachine', namespace, name, patch);
      t.done(`saved ${summary}; applies at the next start`);
      return t.id;
    });
    return result(task, 'offline', `${id} is ${status}: the new size applies when it next starts`);
  }
  const task = deps.journal.start('scale', target_, caller.identity.login);
  if (live) {
    // A RestartRequired already there (an earlier change waiting for a restart) is not this change's refusal.
    const earlier = restartRequired(vm);
    try {
      await deps.cluster.patch('VirtualMachine', namespace, name, patch);
    } catch (err) {
      task.fail(err);
      throw err;
    }
    task.log(`saved ${summary}; KubeVirt hot-plugs it through a live-update migration`);
    void followLiveScale(deps, namespace, name, target, memoryBytes, task, earlier);
    return result(task.id, 'live', `${id} is live-migratable and within its hot-plug ceilings`);
  }
  void coldScale(deps, caller, namespace, name, patch, summary, task);
  return result(task.id, 'restart', `${id} cannot take it live: ${liveWhy}; it is stopped, changed and started again`);
}

/** KubeVirt's RestartRequired message on the VM, undefined when it has none. */
function restartRequired(vm: KObject | undefined): string | undefined {
  const c = asArray(asDict(vm?.status).conditions)
    .map(asDict)
    .find((x) => x.type === 'RestartRequired' && x.status === 'True');
  return c ? asString(c.message) || 'a restart is required' : undefined;
}

/** Ends the live scale's task when the instance reports the new topology and memory (or KubeVirt asks for a restart). */
async function followLiveScale(
  deps: DomainDeps,
  namespace: string,
  name: string,
  target: Topology,
  memoryBytes: number,
  task: TaskHandle,
  earlier: string | undefined,
): Promise<void> {
  try {
    await waitFor(
      deps,
      namespace,
      ['VirtualMachine', 'VirtualMachineInstance'],
      () => {
        const vm = deps.cluster.cache.get('VirtualMachine', namespace, name);
        const vmi = deps.cluster.cache.get('VirtualMachineInstance', namespace, name);
        if (!vm || !vmiActive(vmi)) return `VM ${namespace}/${name} stopped while its new size was being hot-plugged`;
        const restart = restartRequired(vm);
        if (restart !== undefined && restart !== earlier)
          return `KubeVirt could not apply it live (${restart}); the new size is saved and pending: it applies at the next restart`;
        const st = asDict(vmi?.status);
        const topo = asDict(st.currentCPUTopology);
        const cpuOk = Object.keys(topo).length === 0 || num(topo.sockets, 0) === target.sockets;
        const memNow = quantityToNumber(
          asString(asDict(st.memory).guestCurrent) || asString(asDict(asDict(asDict(vmi?.spec).domain).memory).guest),
        );
        const memOk = !Number.isFinite(memNow) || memNow === memoryBytes;
        const specOk = num(asDict(asDict(asDict(vmi?.spec).domain).cpu).sockets, 0) === target.sockets;
        return cpuOk && memOk && specOk;
      },
      `hot-plugging ${namespace}/${name}`,
    );
    task.done(
      `the guest now has ${target.sockets * target.cores * target.threads} vCPU(s) and ${bytesQuantity(memoryBytes)}`,
    );
  } catch (err) {
    task.fail(err);
  }
}

/** stop → patch → start, one task; a failure names what was done and what to do. */
async function coldScale(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
  patch: unknown,
  summary: string,
  task: TaskHandle,
): Promise<void> {
  const id = `VM ${namespace}/${name}`;
  const step = async (action: 'shutdown' | 'start'): Promise<void> => {
    const sub = await powerAction(deps, caller, namespace, name, action);
    task.log(`${action === 'shutdown' ? 'stop' : 'start'}: task ${sub}`);
    const ended = await taskEnded(deps, sub);
    if (ended.status === 'error') throw new Error(ended.error);
  };
  try {
    await step('shutdown');
  } catch (err) {
    task.fail(new Error(`stopping ${id} failed: ${describeError(err)}; nothing was changed`));
    return;
  }
  task.progress(40);
  task.log('stopped');
  try {
    await deps.cluster.patch('VirtualMachine', namespace, name, patch);
  } catch (err) {
    const again = await step('start').then(
      () => 'it was started again',
      (e: unknown) => `starting it again failed too (${describeError(e)}): start it with POST …/start`,
    );
    task.fail(new Error(`saving ${summary} for ${id} failed: ${describeError(err)}; nothing was changed and ${again}`));
    return;
  }
  task.progress(60);
  task.log(`saved ${summary}`);
  try {
    await step('start');
  } catch (err) {
    task.fail(
      new Error(
        `${id} was stopped and now has ${summary}, but starting it again failed: ${describeError(err)}; start it (POST /api/vms/${namespace}/${name}/start) once the cause is fixed, or scale it back`,
      ),
    );
    return;
  }
  task.done(`${id} restarted with ${summary}`);
}
