/**
 * VM rollout of template edits to a running VMI (`vmRolloutStrategy: LiveUpdate`): CPU sockets and guest
 * memory are hot-plugged within the VMI's maxSockets/maxGuest; anything else — or any edit under `Stage` —
 * sets the VM's `RestartRequired` condition, which lives until the next VMI is created.
 */
import type { SimContext } from '../module.js';
import { recordEvent } from '../events.js';
import type { KObject } from '../store/types.js';
import { ApiError } from '../store/errors.js';
import { kubevirtConfig } from './config.js';
import { K } from './keys.js';
import type { Json } from './objects.js';
import { dig, digArray, digRecord, hash32, isConditionTrue, removeCondition, setCondition, status } from './objects.js';
import { formatBytes, memoryBytes } from './quantity.js';
import { sizingOf } from './sizing.js';
import type { VolumeMigrator } from './volume-migration.js';
import { claimSwaps, volumeMigrationGateOff, wantsVolumeMigration, withoutClaims } from './volume-migration.js';

const HOTPLUG_BLOCK = 128 * 2 ** 20;
const NON_LIVE = 'a non-live-updatable field was changed in the template spec';

interface Baseline {
  /** The VM generation the running VMI reflects (status.observedGeneration). */
  generation: number;
  /** The template last evaluated, so the same edit is not judged twice. */
  template: string;
  /** An evaluated edit needs a restart: observedGeneration stays behind until the next VMI. */
  restartPending?: boolean;
}

/** The template with the live-updatable parts removed: what must stay equal for an edit to apply live. */
function frozenPart(templateSpec: Json | undefined): string {
  const spec = structuredClone(templateSpec ?? {});
  const cpu = digRecord(spec, 'domain', 'cpu');
  if (cpu) delete cpu.sockets;
  const memory = digRecord(spec, 'domain', 'memory');
  if (memory) delete memory.guest;
  const hotplugged = new Set(
    digArray(spec, 'volumes')
      .filter(
        (v) =>
          dig(v, 'persistentVolumeClaim', 'hotpluggable') === true || dig(v, 'dataVolume', 'hotpluggable') === true,
      )
      .map((v) => v.name),
  );
  spec.volumes = digArray(spec, 'volumes').filter((v) => !hotplugged.has(v.name));
  const devices = digRecord(spec, 'domain', 'devices');
  if (devices) devices.disks = digArray(devices, 'disks').filter((d) => !hotplugged.has(d.name));
  return JSON.stringify(spec);
}

export class LiveUpdater {
  private readonly baselines = new Map<string, Baseline>();

  constructor(
    private readonly ctx: SimContext,
    private readonly volumes: VolumeMigrator,
  ) {}

  /** The template a new VMI was just created from (or that a verb applied live). */
  baseline(vm: KObject): void {
    this.baselines.set(vm.metadata.uid, {
      generation: vm.metadata.generation ?? 1,
      template: JSON.stringify(digRecord(vm, 'spec', 'template', 'spec') ?? {}),
    });
  }

  clear(vm: KObject): void {
    this.baselines.delete(vm.metadata.uid);
  }

  observedGeneration(vm: KObject, vmi: KObject | undefined): number {
    if (!vmi) return vm.metadata.generation ?? 1;
    const known = this.baselines.get(vm.metadata.uid)?.generation;
    return known ?? Number(vmi.metadata.annotations?.['kubevirt.io/vm-generation'] ?? vm.metadata.generation ?? 1);
  }

  sync(vm: KObject, vmi: KObject): void {
    this.syncHotplugVolumes(vm, vmi);
    const base = this.baselines.get(vm.metadata.uid);
    if (!base) {
      this.baseline(vm); // a VMI that predates this controller (seeded fleet): its template is the baseline
      return;
    }
    const generation = vm.metadata.generation ?? 1;
    if (generation === base.generation) return;
    const before = JSON.parse(base.template) as Json;
    const after = digRecord(vm, 'spec', 'template', 'spec') ?? {};
    const changed = JSON.stringify(after) !== base.template;
    if (!changed) {
      // e.g. a runStrategy edit: nothing to roll out, unless an earlier edit is still waiting for a restart.
      if (!base.restartPending) this.baselines.set(vm.metadata.uid, { ...base, generation });
      return;
    }
    const reasons: string[] = [];
    const onlyClaims =
      frozenPart(before) !== frozenPart(after) &&
      JSON.stringify(withoutClaims(before)) === JSON.stringify(withoutClaims(after));
    if (onlyClaims && wantsVolumeMigration(vm)) {
      // updateVolumesStrategy: Migration — the swapped claims are moved by a volume migration, no restart.
      const why = volumeMigrationGateOff(this.ctx) ?? this.volumes.apply(vm, vmi, after, claimSwaps(vmi, after));
      if (!why) {
        this.baselines.set(vm.metadata.uid, { generation, template: JSON.stringify(after) });
        return;
      }
      reasons.push(`${NON_LIVE}: volume migration refused, ${why}`);
    } else if (
      kubevirtConfig(this.ctx.store).rolloutStrategy !== 'LiveUpdate' ||
      frozenPart(before) !== frozenPart(after)
    ) {
      reasons.push(NON_LIVE);
    } else {
      let cpu: number | string | undefined;
      let memory: number | string | undefined;
      try {
        cpu = this.planCpu(vmi, after);
        memory = this.planMemory(vmi, before, after);
      } catch (err) {
        // A malformed quantity in the edited template cannot be applied live; say why instead of failing the sync.
        if (!(err instanceof ApiError)) throw err;
        cpu = err.message;
      }
      if (typeof cpu === 'string') reasons.push(cpu);
      if (typeof memory === 'string') reasons.push(memory);
      if (!reasons.length) {
        if (typeof cpu === 'number') this.hotplugCpu(vmi, cpu);
        if (typeof memory === 'number') this.hotplugMemory(vmi, memory);
      }
    }
    if (reasons.length) {
      const updated = this.ctx.store.mutate(K.vms, vm.metadata.namespace, vm.metadata.name, (v) =>
        setCondition(v, { type: 'RestartRequired', status: 'True', message: reasons.join('; '), probe: true }),
      );
      if (updated) recordEvent(this.ctx.store, updated, 'RestartRequired', reasons.join('; '));
      this.baselines.set(vm.metadata.uid, {
        generation: base.generation,
        template: JSON.stringify(after),
        restartPending: true,
      });
      return;
    }
    this.baselines.set(vm.metadata.uid, {
      generation: base.restartPending ? base.generation : generation,
      template: JSON.stringify(after),
      restartPending: base.restartPending,
    });
  }

  /** New socket count to hot-plug, a RestartRequired message, or undefined when sockets did not change. */
  private planCpu(vmi: KObject, after: Json): number | string | undefined {
    const current = sizingOf(digRecord(vmi, 'spec', 'domain'));
    const wanted = sizingOf(digRecord(after, 'domain')).sockets;
    if (wanted === current.sockets) return undefined;
    if (wanted > current.maxSockets)
      return "CPU sockets updated in template spec to a value higher than what's available";
    if (wanted < current.sockets) return 'Reduction of CPU socket count requires a restart';
    return wanted;
  }

  private planMemory(vmi: KObject, before: Json, after: Json): number | string | undefined {
    const wantedText = dig(after, 'domain', 'memory', 'guest') as string | undefined;
    if (wantedText === dig(before, 'domain', 'memory', 'guest')) return undefined;
    const current = sizingOf(digRecord(vmi, 'spec', 'domain'));
    const wanted = wantedText ? sizingOf({ memory: { guest: wantedText } }).guestBytes : 0;
    if (wanted === current.guestBytes) return undefined;
    if (!isConditionTrue(vmi, 'LiveMigratable'))
      return 'memory updated in template spec. Memory-hotplug is only available for migratable VMs';
    if (
      !wantedText ||
      wanted < memoryBytes(String(dig(vmi, 'status', 'memory', 'guestAtBoot') ?? current.guestBytes))
    ) {
      return 'memory hotplug not supported, the requested guest memory is lower than the guest memory at boot';
    }
    if (wanted > current.maxGuestBytes)
      return "memory updated in template spec to a value higher than what's available";
    if (wanted % HOTPLUG_BLOCK !== 0)
      return 'memory hotplug not supported, the requested guest memory is not a multiple of 128Mi';
    return wanted;
  }

  private hotplugCpu(vmi: KObject, sockets: number): void {
    const store = this.ctx.store;
    const { namespace, name, uid } = vmi.metadata;
    store.mutate(K.vmis, namespace, name, (v) => {
      ((v.spec as Json).domain as Json).cpu = { ...(dig(v, 'spec', 'domain', 'cpu') as Json), sockets };
      setCondition(v, { type: 'HotVCPUChange', status: 'True', transition: false });
    });
    this.ctx.clock.after(5000 + (hash32(uid) % 5000), () => {
      store.mutate(K.vmis, namespace, name, (v) => {
        if (v.metadata.uid !== uid) return false;
        const size = sizingOf(digRecord(v, 'spec', 'domain'));
        status(v).currentCPUTopology = { sockets: size.sockets, cores: size.cores, threads: size.threads };
        removeCondition(v, 'HotVCPUChange');
      });
    });
  }

  private hotplugMemory(vmi: KObject, bytes: number): void {
    const store = this.ctx.store;
    const { namespace, name, uid } = vmi.metadata;
    const guest = formatBytes(bytes);
    store.mutate(K.vmis, namespace, name, (v) => {
      ((v.spec as Json).domain as Json).memory = { ...(dig(v, 'spec', 'domain', 'memory') as Json), guest };
      setCondition(v, { type: 'HotMemoryChange', status: 'True', transition: false });
      status(v).memory = { ...((dig(v, 'status', 'memory') as Json | undefined) ?? {}), guestRequested: guest };
    });
    this.ctx.clock.after(8000 + (hash32(uid) % 8000), () => {
      store.mutate(K.vmis, namespace, name, (v) => {
        if (v.metadata.uid !== uid) return false;
        status(v).memory = {
          ...((dig(v, 'status', 'memory') as Json | undefined) ?? {}),
          guestCurrent: guest,
          guestRequested: guest,
        };
        removeCondition(v, 'HotMemoryChange');
      });
    });
  }

  /**
   * Declarative volume hot-plug: hotpluggable volumes in the VM template appear on (or leave) the running VMI.
   * The addvolume/removevolume verbs edit the template, so both paths end here.
   */
  private syncHotplugVolumes(vm: KObject, vmi: KObject): void {
    const wanted = digArray(vm, 'spec', 'template', 'spec', 'volumes').filter(isHotpluggable);
    const wantedDisks = digArray(vm, 'spec', 'template', 'spec', 'domain', 'devices', 'disks');
    const present = digArray(vmi, 'spec', 'volumes').filter(isHotpluggable);
    const wantedNames = new Set(wanted.map((v) => String(v.name)));
    const presentNames = new Set(present.map((v) => String(v.name)));
    const toAdd = wanted.filter((v) => !presentNames.has(String(v.name)));
    const toRemove = new Set([...presentNames].filter((n) => !wantedNames.has(n)));
    if (!toAdd.length && !toRemove.size) return;
    this.ctx.store.mutate(K.vmis, vmi.metadata.namespace, vmi.metadata.name, (v) => {
      const spec = v.spec as Json;
      spec.volumes = [...digArray(spec, 'volumes').filter((x) => !toRemove.has(String(x.name))), ...toAdd];
      const devices = (digRecord(spec, 'domain', 'devices') ?? {}) as Json;
      const addDisks = toAdd.map(
        (vol) => wantedDisks.find((d) => d.name === vol.name) ?? { name: vol.name, disk: { bus: 'scsi' } },
      );
      devices.disks = [...digArray(devices, 'disks').filter((d) => !toRemove.has(String(d.name))), ...addDisks];
      (spec.domain as Json).devices = devices;
    });
  }
}

export function isHotpluggable(volume: Json): boolean {
  return (
    dig(volume, 'persistentVolumeClaim', 'hotpluggable') === true || dig(volume, 'dataVolume', 'hotpluggable') === true
  );
}
