/**
 * Cross-cluster move (ADR-0010), the VM definition: what the source's spec becomes at the destination. The same
 * spec minus what cannot carry over — node pins (the destination has other nodes), Multus networks whose
 * NetworkAttachmentDefinition the destination lacks, hot-plug flags (the disks become ordinary ones), the
 * instancetype/preference revision (the destination resolves its own) — with MACs cleared so the destination
 * hands out its own, every disk on the DataVolume its bytes were uploaded into, and labels, tags and annotations
 * kept (except the vmid, which is per cluster, and KubeVirt's own).
 */
import type { KObject } from './cluster-port';
import { LABEL_VM, LABEL_VMID } from './labels';
import { asArray, asDict, asString } from './vm-facts';

/** Where a moved VM came from: `kubevirt/<context>/<namespace>/<name>` (set on the moved VM). */
export const ANNOTATION_MOVED_FROM = 'corral.dev/moved-from';
/** Labels in the VM template that name the VM itself; they get the moved VM's name. */
const NAME_LABELS = ['kubevirt.io/domain', 'vm.kubevirt.io/name', LABEL_VM];
const HOSTNAME = 'kubernetes.io/hostname';

export interface MoveSpecInput {
  namespace: string;
  name: string;
  /** Volume name → the DataVolume it becomes. */
  disks: Map<string, string>;
  /** Source Secret name → name at the destination. */
  secrets: Map<string, string>;
  /** Networks (by their name in the VM spec) dropped because the destination lacks their NAD. */
  dropNetworks: Set<string>;
  movedFrom: string;
}

/** Node pins in the source spec (dropped by the move), described for the preflight. */
export function nodePins(vm: KObject): string[] {
  const pod = asDict(asDict(asDict(vm.spec).template).spec);
  const out: string[] = [];
  const selector = asDict(pod.nodeSelector);
  if (asString(selector[HOSTNAME])) out.push(`node pin: nodeSelector ${HOSTNAME}=${asString(selector[HOSTNAME])}`);
  if (asString(pod.nodeName)) out.push(`node pin: nodeName ${asString(pod.nodeName)}`);
  if (pinsByAffinity(pod)) out.push('node pin: a nodeAffinity on kubernetes.io/hostname');
  return out;
}

function pinsByAffinity(pod: Record<string, unknown>): boolean {
  return JSON.stringify(asDict(asDict(pod.affinity).nodeAffinity)).includes(HOSTNAME);
}

/** Multus networks of the spec: network name in the VM → NetworkAttachmentDefinition reference. */
export function multusNetworks(vm: KObject): { network: string; nad: string }[] {
  return asArray(asDict(asDict(asDict(vm.spec).template).spec).networks)
    .map(asDict)
    .filter((n) => asString(asDict(n.multus).networkName))
    .map((n) => ({ network: asString(n.name), nad: asString(asDict(n.multus).networkName) }));
}

/** The destination's VM object (Halted: the commit starts it once its disks are verified). */
export function movedVm(vm: KObject, to: MoveSpecInput): KObject {
  const source = vm.metadata.name ?? '';
  const spec = structuredClone(asDict(vm.spec));
  delete spec.running;
  delete spec.dataVolumeTemplates;
  spec.runStrategy = 'Halted';
  for (const key of ['instancetype', 'preference']) {
    const matcher = asDict(spec[key]);
    if (spec[key]) delete matcher.revisionName;
  }
  const template = asDict(spec.template);
  const tLabels = asDict(asDict(template.metadata).labels) as Record<string, string>;
  for (const key of NAME_LABELS) if (tLabels[key] === source) tLabels[key] = to.name;
  const pod = asDict(template.spec);
  pod.volumes = asArray(pod.volumes).map((raw) => {
    const v = structuredClone(asDict(raw));
    const dv = to.disks.get(asString(v.name));
    if (dv) {
      delete v.persistentVolumeClaim;
      v.dataVolume = { name: dv };
    }
    for (const ci of [asDict(v.cloudInitNoCloud), asDict(v.cloudInitConfigDrive)])
      for (const key of ['secretRef', 'networkDataSecretRef']) {
        const ref = asDict(ci[key]);
        const renamed = to.secrets.get(asString(ref.name));
        if (renamed) ref.name = renamed;
      }
    return v;
  });
  pod.networks = asArray(pod.networks).filter((n) => !to.dropNetworks.has(asString(asDict(n).name)));
  const devices = asDict(asDict(pod.domain).devices);
  devices.interfaces = asArray(devices.interfaces)
    .filter((i) => !to.dropNetworks.has(asString(asDict(i).name)))
    .map((raw) => {
      const iface = structuredClone(asDict(raw));
      delete iface.macAddress;
      return iface;
    });
  const selector = asDict(pod.nodeSelector);
  if (pod.nodeSelector) {
    delete selector[HOSTNAME];
    if (Object.keys(selector).length === 0) delete pod.nodeSelector;
  }
  delete pod.nodeName;
  if (pinsByAffinity(pod)) {
    const affinity = asDict(pod.affinity);
    delete affinity.nodeAffinity;
    if (Object.keys(affinity).length === 0) delete pod.affinity;
  }
  const labels = Object.fromEntries(Object.entries(vm.metadata.labels ?? {}).filter(([k]) => k !== LABEL_VMID));
  const annotations = Object.fromEntries(
    Object.entries(vm.metadata.annotations ?? {}).filter(
      ([k]) => !k.startsWith('kubevirt.io/') && k !== 'kubectl.kubernetes.io/last-applied-configuration',
    ),
  );
  return {
    apiVersion: vm.apiVersion ?? 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: to.name,
      namespace: to.namespace,
      labels: { ...labels, [LABEL_VM]: to.name },
      annotations: { ...annotations, [ANNOTATION_MOVED_FROM]: to.movedFrom },
    },
    spec,
  };
}
