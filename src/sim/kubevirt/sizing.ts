/**
 * How big a VM is: CPU topology and guest memory from the template or its instancetype, the hot-plug ceilings
 * KubeVirt derives (maxSockets = sockets × maxHotplugRatio, maxGuest = guest × ratio), and what its
 * virt-launcher pod requests from the scheduler.
 */
import { ApiError } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { K } from './keys.js';
import type { Json } from './objects.js';
import { dig, digRecord, digString } from './objects.js';
import { cpuMillis, formatBytes, memoryBytes } from './quantity.js';

export const MAX_HOTPLUG_RATIO = 4;
/** virt-launcher's own footprint on top of guest memory (qemu, libvirt, virt-launcher). */
export const LAUNCHER_OVERHEAD_BYTES = 250 * 2 ** 20;
/** KubeVirt's default cpuAllocationRatio of 10: each vCPU requests 100m. */
const MILLIS_PER_VCPU = 100;
const DEFAULT_GUEST_MEMORY = 2 ** 30;

export interface Sizing {
  sockets: number;
  cores: number;
  threads: number;
  vcpus: number;
  maxSockets: number;
  guestBytes: number;
  maxGuestBytes: number;
}

function positiveInt(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Parse a quantity of the domain, naming the field when it is malformed (the VM then reports a Failure). */
function quantityAt(field: string, value: string | number, parse: (v: string | number) => number): number {
  try {
    return parse(value);
  } catch (err) {
    throw new ApiError(
      422,
      'Invalid',
      `spec.template.spec.domain.${field}: Invalid value: "${value}": ${(err as Error).message}`,
    );
  }
}

/** Sizing of a domain spec (VMI spec.domain or VM template's). Throws a 422 ApiError for malformed quantities. */
export function sizingOf(domain: Json | undefined): Sizing {
  const cpu = digRecord(domain, 'cpu');
  const sockets = positiveInt(cpu?.sockets, 1);
  const cores = positiveInt(cpu?.cores, 1);
  const threads = positiveInt(cpu?.threads, 1);
  const memory = digRecord(domain, 'memory');
  const guestField = memory?.guest !== undefined ? 'memory.guest' : 'resources.requests.memory';
  const guestText = (memory?.guest ?? dig(domain, 'resources', 'requests', 'memory')) as string | number | undefined;
  const guestBytes = guestText === undefined ? DEFAULT_GUEST_MEMORY : quantityAt(guestField, guestText, memoryBytes);
  const maxGuestText = memory?.maxGuest as string | undefined;
  const cpuRequest = dig(domain, 'resources', 'requests', 'cpu') as string | number | undefined;
  if (cpuRequest !== undefined) quantityAt('resources.requests.cpu', cpuRequest, cpuMillis);
  return {
    sockets,
    cores,
    threads,
    vcpus: sockets * cores * threads,
    maxSockets: positiveInt(cpu?.maxSockets, sockets * MAX_HOTPLUG_RATIO),
    guestBytes,
    maxGuestBytes: maxGuestText
      ? quantityAt('memory.maxGuest', maxGuestText, memoryBytes)
      : guestBytes * MAX_HOTPLUG_RATIO,
  };
}

/** Requests of a virt-launcher `compute` container for a VMI domain. */
export function launcherRequests(domain: Json | undefined): { cpu: string; memory: string } {
  const size = sizingOf(domain);
  const explicitCpu = dig(domain, 'resources', 'requests', 'cpu') as string | number | undefined;
  const millis = explicitCpu !== undefined ? cpuMillis(explicitCpu) : size.vcpus * MILLIS_PER_VCPU;
  return { cpu: `${millis}m`, memory: formatBytes(size.guestBytes + LAUNCHER_OVERHEAD_BYTES) };
}

export interface InstancetypeRef {
  kind: string;
  name: string;
}

/** The instancetype object a VM refers to, or a 404-style ApiError naming it like KubeVirt's webhook does. */
export function resolveInstancetype(store: ObjectStore, vm: KObject): KObject | undefined {
  const ref = digRecord(vm, 'spec', 'instancetype');
  const name = digString(ref, 'name');
  if (!name) return undefined;
  const kind = digString(ref, 'kind') ?? 'VirtualMachineClusterInstancetype';
  const namespaced = kind === 'VirtualMachineInstancetype' || kind === 'virtualmachineinstancetype';
  const found = namespaced
    ? store.get(K.instancetypes, vm.metadata.namespace, name)
    : store.get(K.clusterInstancetypes, undefined, name);
  if (!found) {
    const plural = namespaced ? 'virtualmachineinstancetypes' : 'virtualmachineclusterinstancetypes';
    throw new ApiError(404, 'NotFound', `${plural}.instancetype.kubevirt.io "${name}" not found`);
  }
  return found;
}

/**
 * The VMI domain a VM's template becomes: instancetype CPU/memory applied (guest vCPUs as sockets, KubeVirt's
 * default preferred topology) and the hot-plug ceilings filled in, as virt-controller does on start.
 */
export function expandDomain(store: ObjectStore, vm: KObject, template: Json): Json {
  // JSON round-trip: much cheaper than structuredClone for the 10,000 domains a generated fleet expands.
  const domain = JSON.parse(JSON.stringify(digRecord(template, 'spec', 'domain') ?? {})) as Json;
  const instancetype = resolveInstancetype(store, vm);
  if (instancetype) {
    const guestCpus = positiveInt(dig(instancetype, 'spec', 'cpu', 'guest'), 1);
    const guestMemory = digString(instancetype, 'spec', 'memory', 'guest') ?? '1Gi';
    const maxSockets = dig(instancetype, 'spec', 'cpu', 'maxSockets');
    domain.cpu = {
      sockets: guestCpus,
      cores: 1,
      threads: 1,
      ...(typeof maxSockets === 'number' ? { maxSockets } : {}),
    };
    domain.memory = { guest: guestMemory };
  }
  const size = sizingOf(domain);
  const cpu = (domain.cpu ?? {}) as Json;
  domain.cpu = { ...cpu, sockets: size.sockets, cores: size.cores, threads: size.threads, maxSockets: size.maxSockets };
  const memory = (domain.memory ?? {}) as Json;
  domain.memory = {
    ...memory,
    guest: memory.guest ?? formatBytes(size.guestBytes),
    maxGuest: memory.maxGuest ?? formatBytes(size.maxGuestBytes),
  };
  domain.machine ??= { type: 'q35' };
  return domain;
}
