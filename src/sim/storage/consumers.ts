/** Who uses a PVC: pods (by claimName) and VMIs (by persistentVolumeClaim or dataVolume volume). */
import type { KObject } from '../store/types.js';
import { S } from './keys.js';
import type { Runtime } from './runtime.js';
import { arr, rec, spec, status, str } from './util.js';

/** Claim names a pod mounts. */
export function podClaims(pod: KObject): string[] {
  return arr(spec(pod).volumes)
    .map((v) => str(rec(rec(v).persistentVolumeClaim).claimName))
    .filter((n): n is string => Boolean(n));
}

/** Claim names a VM template or VMI spec uses (a DataVolume's PVC has the DataVolume's name). */
export function vmSpecClaims(vmiSpec: Record<string, unknown>): { volume: string; claim: string }[] {
  const out: { volume: string; claim: string }[] = [];
  for (const v of arr(vmiSpec.volumes)) {
    const volume = rec(v);
    const claim = str(rec(volume.persistentVolumeClaim).claimName) ?? str(rec(volume.dataVolume).name);
    const name = str(volume.name);
    if (claim && name) out.push({ volume: name, claim });
  }
  return out;
}

export function vmiClaims(vmi: KObject): string[] {
  return vmSpecClaims(spec(vmi)).map((c) => c.claim);
}

function isFinished(obj: KObject): boolean {
  const phase = status(obj).phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** The VMI of a VM when it exists and has not finished (KubeVirt: the VM is running or on its way). */
export function activeVmi(rt: Runtime, vm: KObject): KObject | undefined {
  const vmi = rt.get(S.vmis, vm.metadata.namespace, vm.metadata.name);
  return vmi && !isFinished(vmi) && !vmi.metadata.deletionTimestamp ? vmi : undefined;
}

/**
 * A consumer that lets a WaitForFirstConsumer claim bind: a pod using it that has been scheduled, or a VMI using
 * it (its virt-launcher pod is what the real scheduler places). Returns the node to provision on, or '' when the
 * consumer has no node yet.
 */
export function firstConsumerNode(rt: Runtime, pvc: KObject): string | undefined {
  const ns = pvc.metadata.namespace;
  const name = pvc.metadata.name;
  for (const pod of rt.list(S.pods, ns)) {
    if (isFinished(pod) || !podClaims(pod).includes(name)) continue;
    const node = str(spec(pod).nodeName);
    if (node) return node;
  }
  for (const vmi of rt.list(S.vmis, ns)) {
    if (isFinished(vmi) || !vmiClaims(vmi).includes(name)) continue;
    return str(status(vmi).nodeName) ?? '';
  }
  return undefined;
}
