/**
 * Cross-cluster move (ADR-0010), the preflight: reads both clusters (never writes) and answers every refusal with
 * its remedy, the warnings (a moved VM always gets new MACs and IP addresses) and what will not carry over, plus
 * the plan the commit follows. A refused preflight is an answer, not an error; only bad input (400) and an unknown
 * ref or context (404) throw. The commit runs the same function again before it touches anything.
 */
import type { MoveInput, MovePlan, MovePreflight } from '../schemas/move';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import {
  answerLists,
  busyRefusals,
  claimDisk,
  clusterDestination,
  clusterRefusals,
  namespaceRefusal,
  planSource,
  snapshotsLeft,
  storageClassRefusal,
} from './move-checks';
import { resolveSource } from './move-destinations';
import { multusNetworks, nodePins } from './move-spec';
import { KUBEVIRT_BACKEND, formatRef } from './pools-path';
import { renameFor } from './vm-clone-namespace';
import { asArray, asDict, asString, claimSize, rootVolume, vmiActive, vmSecretRefs, vmVolumes } from './vm-facts';

export interface MoveDisk {
  volume: string;
  claim: string;
  size: string;
  storageClass: string;
  to: string;
}

/** The preflight's answer and what the commit needs beside it (both clusters, the source object). */
export interface MovePlanned {
  preflight: MovePreflight;
  source: DomainDeps;
  target: DomainDeps;
  vm: KObject;
  disks: MoveDisk[];
  /** Source Secret → name at the destination. */
  secrets: Map<string, string>;
  /** Networks (their name in the VM spec) whose NAD the destination lacks. */
  dropNetworks: Set<string>;
}

const CLUSTER_KINDS = {
  instancetype: 'VirtualMachineClusterInstancetype',
  preference: 'VirtualMachineClusterPreference',
} as const;

export async function planMove(deps: DomainDeps, input: MoveInput): Promise<MovePlanned> {
  const { ref, deps: source, vm } = resolveSource(deps, input.ref);
  const { toContext, target, toNamespace, name, at } = clusterDestination(deps, input, ref);
  const { refusals, warnings, dropped, refuse } = answerLists();

  const targetDown = await clusterRefusals(source, target, ref, toNamespace, refuse);
  busyRefusals(source, ref, 'VM', 'move', !!vm.metadata.deletionTimestamp, refuse);

  // The destination: namespace, name, instancetype/preference.
  const reachable = !targetDown;
  if (reachable) await namespaceRefusal(target, toNamespace, refuse);
  if (target.cluster.cache.get('VirtualMachine', toNamespace, name))
    refuse(
      `a VM ${toNamespace}/${name} already exists in ${at}`,
      'give the moved VM another name (name), or delete that VM first',
    );
  const spec = asDict(vm.spec);
  for (const key of ['instancetype', 'preference'] as const) {
    const matcher = asDict(spec[key]);
    const wanted = asString(matcher.name);
    if (!wanted) continue;
    const kind = asString(matcher.kind) || CLUSTER_KINDS[key];
    if (kind !== CLUSTER_KINDS[key]) {
      refuse(
        `the VM's ${key} ${wanted} is a namespaced ${kind}, which Corral does not copy between clusters`,
        `switch the VM to a ${CLUSTER_KINDS[key]} present in both clusters`,
      );
      continue;
    }
    if (reachable && !(await target.cluster.fetch(kind, undefined, wanted).catch(() => undefined)))
      refuse(
        `${key} ${wanted} (${kind}) is not present in ${at}`,
        `create ${kind} ${wanted} in ${toContext} (the common-instancetypes bundle has it), or change the VM's ${key}`,
      );
    else warnings.push(`${key} ${wanted} is resolved again by ${toContext}: its own ${kind} ${wanted} applies`);
  }

  // The disks: each on a claim that can be exported, onto a class the destination has, under a free name.
  const disks: MoveDisk[] = [];
  const root = rootVolume(vm);
  const volumes = vmVolumes(vm);
  const claims = volumes.filter((v) => v.kind === 'dataVolume' || v.kind === 'persistentVolumeClaim');
  if (claims.length > 0 && root && root.kind !== 'dataVolume' && root.kind !== 'persistentVolumeClaim')
    refuse(
      `the boot disk ${root.volume} is a ${root.kind} while other disks are on claims: KubeVirt's export of this VM is refused`,
      'make the boot disk a DataVolume, or detach the claim disks first',
    );
  const classesSeen = new Map<string, boolean>();
  for (const v of volumes) {
    if (v.kind === 'containerDisk') {
      warnings.push(`disk ${v.volume} is a containerDisk: it starts from its image again at the destination`);
      continue;
    }
    if (v.kind === 'cloudInit') continue;
    if (v.kind === 'other') {
      const raw = asDict(asArray(asDict(asDict(spec.template).spec).volumes).find((x) => asDict(x).name === v.volume));
      const kind = Object.keys(raw).find((k) => k !== 'name') ?? 'unknown';
      if (kind === 'emptyDisk') warnings.push(`disk ${v.volume} is an emptyDisk: it starts empty at the destination`);
      else
        refuse(
          `disk ${v.volume} is a ${kind} volume, which cannot be exported`,
          `remove disk ${v.volume} from the VM (Hardware tab), then move it`,
        );
      continue;
    }
    const pvc = claimDisk(source, ref.namespace, v, refuse);
    if (!pvc) continue;
    if (v.hotpluggable) dropped.push(`hot-plug flag of disk ${v.volume}: it becomes an ordinary disk`);
    const storageClass = asString(asDict(pvc.spec).storageClassName);
    if (reachable)
      await storageClassRefusal(
        target,
        storageClass,
        `disk ${v.volume}`,
        'move the disk to a class both clusters have (Hardware tab → Move) first',
        refuse,
        classesSeen,
      );
    const to = name === ref.name ? v.claim : renameFor(ref.name, name, v.claim, v.volume);
    if (
      target.cluster.cache.get('DataVolume', toNamespace, to) ||
      target.cluster.cache.get('PersistentVolumeClaim', toNamespace, to)
    )
      refuse(
        `a disk ${toNamespace}/${to} already exists in ${at} (for disk ${v.volume})`,
        'give the moved VM another name (name), or delete that disk first',
      );
    const size = asString(asDict(asDict(pvc.status).capacity).storage) || claimSize(pvc);
    disks.push({ volume: v.volume, claim: v.claim, size, storageClass, to });
  }
  if (disks.length > 0 && disks.length !== new Set(disks.map((d) => d.to)).size)
    refuse('two disks would get the same name at the destination', 'rename one of them first');

  // Cloud-init Secrets travel along under the moved VM's names.
  const secrets = new Map<string, string>();
  for (const s of vmSecretRefs(vm)) secrets.set(s, name === ref.name ? s : renameFor(ref.name, name, s, s));
  for (const [from, to] of secrets) {
    if (!(await source.cluster.fetch('Secret', ref.namespace, from).catch(() => undefined)))
      refuse(`cloud-init Secret ${ref.namespace}/${from} is missing`, 'recreate it (Cloud-Init tab → Regenerate)');
    if (reachable && (await target.cluster.fetch('Secret', toNamespace, to).catch(() => undefined)))
      refuse(`a Secret ${toNamespace}/${to} already exists in ${at}`, 'give the moved VM another name (name)');
  }

  // What changes and what stays behind.
  const dropNetworks = new Set<string>();
  for (const n of multusNetworks(vm)) {
    const [nadNs, nadName] = n.nad.includes('/') ? n.nad.split('/', 2) : [toNamespace, n.nad];
    const found = reachable
      ? await target.cluster.fetch('NetworkAttachmentDefinition', nadNs, nadName ?? '').catch(() => undefined)
      : undefined;
    if (!found) {
      dropNetworks.add(n.network);
      dropped.push(`NIC ${n.network}: NetworkAttachmentDefinition ${n.nad} is missing in ${at}`);
    }
  }
  dropped.push(...nodePins(vm));
  const snapshots = await snapshotsLeft(source, ref);
  if (snapshots) dropped.push(snapshots);
  warnings.unshift('MAC addresses change: the destination gives every NIC a new one');
  warnings.unshift('IP addresses change: the VM gets addresses from the destination network');
  const isRunning = vmiActive(source.cluster.cache.get('VirtualMachineInstance', ref.namespace, ref.name));
  if (isRunning) warnings.push('the VM is running: it is stopped for the move and started again at the destination');
  if (input.deleteSource) warnings.push('the source VM and its disks are deleted once the moved VM is verified');

  const plan: MovePlan = {
    source: planSource(ref, isRunning),
    destination: { backend: KUBEVIRT_BACKEND, context: toContext, namespace: toNamespace, name },
    disks: disks.map((d) => ({ ...d })),
    secrets: [...secrets.values()],
    scratch: input.scratch ?? false,
    deleteSource: input.deleteSource ?? false,
    steps: [
      ...(isRunning ? [`stop ${ref.namespace}/${ref.name}`] : []),
      ...(disks.length > 0 ? [`export ${disks.length} disk${disks.length === 1 ? '' : 's'} from ${ref.context}`] : []),
      ...disks.map((d) => `upload ${d.volume} (${d.size}) into DataVolume ${toNamespace}/${d.to} in ${toContext}`),
      ...[...secrets.values()].map((s) => `copy Secret ${s}`),
      `create VM ${toNamespace}/${name} in ${toContext}`,
      'verify: every DataVolume Succeeded, the VM exists',
      ...(isRunning ? [`start ${toNamespace}/${name}`] : []),
      input.deleteSource ? `delete ${ref.namespace}/${ref.name} in ${ref.context}` : `keep ${formatRef(ref)} (stopped)`,
    ],
  };
  return {
    preflight: { ok: refusals.length === 0, refusals, warnings, dropped, plan },
    source,
    target,
    vm,
    disks,
    secrets,
    dropNetworks,
  };
}
