/**
 * Small pure selectors over KubeVirt objects (the kubevirt-plugin "selectors" idea): one fact per function, so the
 * row mapping, the Proxmox translator and the tests share one reading of each field.
 */
import type { KObject } from './cluster-port';
import { LABEL_TAG_PREFIX, LABEL_TEMPLATE } from './labels';

type Dict = Record<string, unknown>;
const obj = (v: unknown): Dict => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Dict) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function templateSpec(vm: KObject): Dict {
  return obj(obj(obj(vm.spec).template).spec);
}

/** The label every node carries with its own name; a `nodeSelector` on it pins a VM to that node. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';

/** The node a VM's template pins it to (`nodeSelector` kubernetes.io/hostname), '' when it may start anywhere. */
export function pinnedNode(vm: KObject | undefined): string {
  return str(obj(templateSpec(vm ?? { metadata: {} }).nodeSelector)[HOSTNAME_LABEL]);
}

/** status.printableStatus as KubeVirt writes it; `Stopped` (the CRD default) before the controller's first sync. */
export function printableStatus(vm: KObject): string {
  return str(obj(vm.status).printableStatus) || 'Stopped';
}

export function vmReady(vm: KObject): boolean {
  return obj(vm.status).ready === true;
}

/** A VM instance exists and has not finished: what "powered on" means for the UI's buttons. */
export function vmiActive(vmi: KObject | undefined): boolean {
  if (!vmi || vmi.metadata.deletionTimestamp) return false;
  const phase = str(obj(vmi.status).phase);
  return phase !== 'Succeeded' && phase !== 'Failed';
}

export function vmiPhase(vmi: KObject | undefined): string {
  return vmi ? str(obj(vmi.status).phase) : '';
}

export function vmiPaused(vmi: KObject | undefined): boolean {
  return arr(obj(vmi?.status).conditions).some((c) => obj(c).type === 'Paused' && obj(c).status === 'True');
}

export function runStrategy(vm: KObject): string {
  const spec = obj(vm.spec);
  if (typeof spec.runStrategy === 'string') return spec.runStrategy;
  if (spec.running === true) return 'Always';
  if (spec.running === false) return 'Halted';
  return '';
}

/** vCPUs: the running topology when live, else the template's sockets × cores × threads. */
export function vmCpu(vm: KObject, vmi?: KObject): number {
  const live = obj(obj(vmi?.status).currentCPUTopology);
  const cpu = Object.keys(live).length ? live : obj(obj(templateSpec(vm).domain).cpu);
  if (Object.keys(cpu).length === 0) {
    const req = obj(obj(obj(templateSpec(vm).domain).resources).requests).cpu;
    return typeof req === 'string' || typeof req === 'number' ? Math.max(1, Math.round(Number(req))) || 0 : 0;
  }
  return (num(cpu.sockets) ?? 1) * (num(cpu.cores) ?? 1) * (num(cpu.threads) ?? 1);
}

/** Guest memory: the template's, else (instancetype-sized VMs) what the running instance reports. */
export function vmMem(vm: KObject, vmi?: KObject): string {
  const domain = obj(templateSpec(vm).domain);
  const live = obj(obj(vmi?.status).memory);
  return (
    str(obj(domain.memory).guest) ||
    str(obj(obj(domain.resources).requests).memory) ||
    str(live.guestCurrent) ||
    str(live.guestAtBoot)
  );
}

export interface VolumeRef {
  volume: string;
  kind: 'dataVolume' | 'persistentVolumeClaim' | 'containerDisk' | 'cloudInit' | 'other';
  claim: string;
  hotpluggable: boolean;
}

export function vmVolumes(vm: KObject): VolumeRef[] {
  return arr(templateSpec(vm).volumes).map((raw) => {
    const v = obj(raw);
    const name = str(v.name);
    if (v.dataVolume)
      return {
        volume: name,
        kind: 'dataVolume',
        claim: str(obj(v.dataVolume).name),
        hotpluggable: obj(v.dataVolume).hotpluggable === true,
      };
    if (v.persistentVolumeClaim) {
      const p = obj(v.persistentVolumeClaim);
      return {
        volume: name,
        kind: 'persistentVolumeClaim',
        claim: str(p.claimName),
        hotpluggable: p.hotpluggable === true,
      };
    }
    if (v.containerDisk) return { volume: name, kind: 'containerDisk', claim: '', hotpluggable: false };
    if (v.cloudInitNoCloud || v.cloudInitConfigDrive)
      return { volume: name, kind: 'cloudInit', claim: '', hotpluggable: false };
    return { volume: name, kind: 'other', claim: '', hotpluggable: false };
  });
}

/** Secrets the VM's cloud-init volumes reference. */
export function vmSecretRefs(vm: KObject): string[] {
  const out: string[] = [];
  for (const raw of arr(templateSpec(vm).volumes)) {
    const v = obj(raw);
    for (const ci of [obj(v.cloudInitNoCloud), obj(v.cloudInitConfigDrive)]) {
      for (const key of ['secretRef', 'networkDataSecretRef']) {
        const n = str(obj(ci[key]).name);
        if (n) out.push(n);
      }
    }
  }
  return out;
}

/** The boot disk: the disk with the lowest bootOrder, else the first disk (not a cdrom), mapped to its volume. */
export function rootVolume(vm: KObject): VolumeRef | undefined {
  const disks = arr(obj(obj(templateSpec(vm).domain).devices).disks).map(obj);
  const candidates = disks.filter((d) => !d.cdrom);
  const boot = [...candidates].sort((a, b) => (num(a.bootOrder) ?? 1e9) - (num(b.bootOrder) ?? 1e9))[0];
  const volumes = vmVolumes(vm);
  return volumes.find((v) => v.volume === str(boot?.name)) ?? volumes.find((v) => v.kind !== 'cloudInit');
}

/** Size requested by a DataVolume template/object or PVC. */
export function claimSize(o: KObject | Dict | undefined): string {
  const spec = obj(obj(o).spec);
  const fromStorage = str(obj(obj(obj(spec.storage).resources).requests).storage);
  const fromPvc = str(obj(obj(obj(spec.pvc).resources).requests).storage);
  const fromClaim = str(obj(obj(spec.resources).requests).storage);
  return fromStorage || fromPvc || fromClaim;
}

/** dataVolumeTemplates entry for a claim name, if the VM carries one. */
export function dataVolumeTemplate(vm: KObject, name: string): Dict | undefined {
  return arr(obj(vm.spec).dataVolumeTemplates)
    .map(obj)
    .find((t) => str(obj(t.metadata).name) === name);
}

/** The first interface address the VMI reports (pod network via masquerade, else guest-agent data). */
export function vmiAddress(vmi: KObject | undefined): string {
  for (const raw of arr(obj(vmi?.status).interfaces)) {
    const ip = str(obj(raw).ipAddress);
    if (ip) return ip;
  }
  return '';
}

export function vmiNode(vmi: KObject | undefined): string {
  return str(obj(vmi?.status).nodeName);
}

export function vmTags(vm: KObject): string[] {
  const labels = vm.metadata.labels ?? {};
  return Object.keys(labels)
    .filter((k) => k.startsWith(LABEL_TAG_PREFIX) && labels[k] !== 'false')
    .map((k) => k.slice(LABEL_TAG_PREFIX.length))
    .sort();
}

export function isTemplate(vm: KObject): boolean {
  return vm.metadata.labels?.[LABEL_TEMPLATE] === 'true';
}

export function refName(ref: unknown): string {
  return str(obj(ref).name);
}

export function guestOs(vmi: KObject | undefined): string {
  return str(obj(obj(vmi?.status).guestOSInfo).prettyName);
}

export function isLiveMigratable(vmi: KObject | undefined): { ok: boolean; reason: string } {
  const cond = arr(obj(vmi?.status).conditions)
    .map(obj)
    .find((c) => c.type === 'LiveMigratable');
  if (!cond) return { ok: true, reason: '' };
  return { ok: cond.status === 'True', reason: str(cond.message) || str(cond.reason) };
}

export { obj as asDict, arr as asArray, str as asString };
