/**
 * Cross-cluster move (ADR-0010), the preflight: reads both clusters (never writes) and answers every refusal with
 * its remedy, the warnings (a moved VM always gets new MACs and IP addresses) and what will not carry over, plus
 * the plan the commit follows. A refused preflight is an answer, not an error; only bad input (400) and an unknown
 * ref or context (404) throw. The commit runs the same function again before it touches anything.
 */
import type { MoveInput, MovePlan, MovePreflight, MoveRefusal } from '../schemas/move';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import {
  clusterOf,
  exportProblem,
  resolveSource,
  servedClusters,
  unreachable,
  uploadProblem,
} from './move-destinations';
import { multusNetworks, nodePins } from './move-spec';
import { KUBEVIRT_BACKEND, formatRef, type MemberRef } from './pools-path';
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

type Refuse = (reason: string, remedy: string) => void;

/**
 * What every move between served clusters checks first (VM or CT): both clusters answering, the source able to
 * export (KubeVirt's VMExport gate), the destination able to receive (CDI's upload proxy), and not the source's own
 * cluster and namespace. Answers why the destination does not answer ('' when it does).
 */
export async function clusterRefusals(
  source: DomainDeps,
  target: DomainDeps,
  ref: MemberRef,
  toNamespace: string,
  refuse: Refuse,
): Promise<string> {
  const toContext = target.cluster.info.context;
  const sourceDown = unreachable(source);
  if (sourceDown) refuse(sourceDown, `wait until ${ref.context} answers again (GET /api/contexts says why)`);
  const targetDown = target === source ? '' : unreachable(target);
  if (targetDown) refuse(targetDown, `wait until ${toContext} answers again, or pick another destination`);
  if (!sourceDown) {
    const why = await exportProblem(source);
    if (why) refuse(why, 'turn the gate on (Health page: gate-vmexport → Fix), then try again');
  }
  if (!targetDown) {
    const why = await uploadProblem(target);
    if (why) refuse(why, `install CDI in ${toContext} or set spec.uploadProxyURLOverride on its CDIConfig`);
  }
  if (target === source && toNamespace === ref.namespace)
    refuse(
      `same cluster and namespace as the source (${ref.context}, ${ref.namespace})`,
      'pick another cluster, or another namespace (toNamespace) to move within this one',
    );
  return targetDown;
}

/** Refuses a destination namespace that does not exist (only asked of a destination that answers). */
export async function namespaceRefusal(target: DomainDeps, toNamespace: string, refuse: Refuse): Promise<void> {
  const toContext = target.cluster.info.context;
  if (!(await target.cluster.fetch('Namespace', undefined, toNamespace).catch(() => undefined)))
    refuse(
      `namespace ${toNamespace} does not exist in context ${toContext}`,
      `create it (kubectl --context ${toContext} create namespace ${toNamespace}) or pick another (toNamespace)`,
    );
}

export async function planMove(deps: DomainDeps, input: MoveInput): Promise<MovePlanned> {
  const { ref, deps: source, vm } = resolveSource(deps, input.ref);
  const toContext = input.toContext ?? servedClusters(deps)[0]!.cluster.info.context;
  const target = clusterOf(deps, toContext, 'toContext');
  const toNamespace = input.toNamespace ?? ref.namespace;
  const name = input.name ?? ref.name;
  const refusals: MoveRefusal[] = [];
  const warnings: string[] = [];
  const dropped: string[] = [];
  const refuse = (reason: string, remedy: string) => refusals.push({ reason, remedy });
  const at = `context ${toContext}`;

  const targetDown = await clusterRefusals(source, target, ref, toNamespace, refuse);
  if (vm.metadata.deletionTimestamp)
    refuse(`VM ${ref.namespace}/${ref.name} is being deleted`, 'nothing to move; wait until it is gone');
  const running = source.journal.latest('move', `${ref.namespace}/${ref.name}`);
  if (running?.status === 'running')
    refuse(`a move of ${ref.namespace}/${ref.name} is already running (task ${running.id})`, 'wait until it ends');

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
    const pvc = source.cluster.cache.get('PersistentVolumeClaim', ref.namespace, v.claim);
    if (!pvc || asDict(pvc.status).phase !== 'Bound') {
      refuse(
        `disk ${v.volume} (claim ${v.claim}) is ${pvc ? 'not bound yet' : 'missing'}: nothing to export`,
        pvc ? 'wait until its claim is Bound' : `remove disk ${v.volume} from the VM`,
      );
      continue;
    }
    const dvPhase = asString(asDict(source.cluster.cache.get('DataVolume', ref.namespace, v.claim)?.status).phase);
    if (v.kind === 'dataVolume' && dvPhase && dvPhase !== 'Succeeded')
      refuse(`disk ${v.volume} (DataVolume ${v.claim}) is ${dvPhase}`, 'wait until it has Succeeded');
    if (v.hotpluggable) dropped.push(`hot-plug flag of disk ${v.volume}: it becomes an ordinary disk`);
    const storageClass = asString(asDict(pvc.spec).storageClassName);
    if (storageClass && reachable) {
      if (!classesSeen.has(storageClass))
        classesSeen.set(
          storageClass,
          !!(await target.cluster.fetch('StorageClass', undefined, storageClass).catch(() => undefined)),
        );
      if (!classesSeen.get(storageClass))
        refuse(
          `StorageClass ${storageClass} (disk ${v.volume}) is missing in ${at}`,
          `create StorageClass ${storageClass} in ${toContext}, or move the disk to a class both clusters have (Hardware tab → Move) first`,
        );
    }
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
  const snapshots = (
    await source.cluster.fetchList('VirtualMachineSnapshot', { namespace: ref.namespace }).catch(() => [] as KObject[])
  ).filter((s) => asString(asDict(asDict(s.spec).source).name) === ref.name);
  if (snapshots.length > 0)
    dropped.push(`${snapshots.length} snapshot${snapshots.length === 1 ? '' : 's'}: they stay with the source`);
  warnings.unshift('MAC addresses change: the destination gives every NIC a new one');
  warnings.unshift('IP addresses change: the VM gets addresses from the destination network');
  const isRunning = vmiActive(source.cluster.cache.get('VirtualMachineInstance', ref.namespace, ref.name));
  if (isRunning) warnings.push('the VM is running: it is stopped for the move and started again at the destination');
  if (input.deleteSource) warnings.push('the source VM and its disks are deleted once the moved VM is verified');

  const plan: MovePlan = {
    source: {
      backend: KUBEVIRT_BACKEND,
      context: ref.context,
      namespace: ref.namespace,
      name: ref.name,
      running: isRunning,
    },
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
