/**
 * Clone a VM into another namespace. KubeVirt's VirtualMachineClone only copies within one namespace, so this is
 * done the way CDI allows across namespaces: each disk becomes a DataVolume in the target namespace whose source
 * is the PVC in the source namespace (`spec.source.pvc: {namespace, name}`, a host-assisted clone that needs
 * `create` on `datavolumes/source` in the source namespace), and the VM spec is copied under new names (disks,
 * cloud-init Secrets, MACs, firmware UUID). The new VM is created first and owns every copy, so a failure removes
 * the lot by deleting the VM, and deleting the clone later never touches the source.
 */
import { randomBytes } from 'node:crypto';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { LABEL_TEMPLATE, LABEL_VM, LABEL_VMID } from './labels';
import type { CloneOptions } from './vm-clone';
import { requireVm } from './vm-actions';
import { asArray, asDict, asString, claimSize, printableStatus, vmiActive, vmVolumes } from './vm-facts';
import type { TaskHandle } from './tasks';

/** Labels that give a VM its identity in Corral (or a Proxmox vmid): never carried over to a copy. */
const IDENTITY_LABELS = new Set([LABEL_VMID, LABEL_TEMPLATE, LABEL_VM]);
/** Labels in the VM template that name the VM itself; they get the clone's name. */
const NAME_LABELS = ['kubevirt.io/domain', 'vm.kubevirt.io/name', LABEL_VM];

/** One disk to copy: the source claim and the DataVolume that copies it in the target namespace. */
export interface DiskCopy {
  volume: string;
  from: string;
  to: string;
  size: string;
  storageClass?: string;
  hotpluggable: boolean;
}

/** What a copy consists of: disks, cloud-init Secrets (old → new name) and Multus networks (old → new ref). */
export interface CopyPlan {
  vm: KObject;
  disks: DiskCopy[];
  secrets: Map<string, string>;
  networks: Map<string, string>;
}

/** `orig-disk` → `copy-disk` when the name starts with the source VM's, else `<target>-<volume>`. */
export function renameFor(source: string, target: string, name: string, fallback: string): string {
  if (name === source || name.startsWith(`${source}-`)) return `${target}${name.slice(source.length)}`;
  return `${target}-${fallback}`;
}

/** A locally administered unicast MAC (02:…), as KubeVirt's clone controller gives a copy without one asked for. */
function freshMac(): string {
  return ['02', ...[...randomBytes(5)].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** What the copy will consist of; throws the 4xx a caller can act on before anything is created. */
async function planCopy(
  deps: DomainDeps,
  namespace: string,
  source: string,
  targetNamespace: string,
  target: string,
): Promise<CopyPlan> {
  const vm = requireVm(deps, namespace, source);
  if (vm.metadata.deletionTimestamp) throw new CorralError('CONFLICT', `VM ${namespace}/${source} is being deleted`);
  if (vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, source)))
    throw new CorralError(
      'CONFLICT',
      `VM ${namespace}/${source} is ${printableStatus(vm)}: stop it first (a clone into another namespace copies its disks while nothing writes to them)`,
    );
  if (!(await deps.cluster.fetch('Namespace', undefined, targetNamespace)))
    throw new CorralError(
      'BAD_REQUEST',
      `namespace: there is no namespace '${targetNamespace}' in the cluster (create it first, e.g. kubectl create namespace ${targetNamespace})`,
    );
  if (deps.cluster.cache.get('VirtualMachine', targetNamespace, target))
    throw new CorralError('CONFLICT', `VM ${targetNamespace}/${target} already exists`);
  const disks: DiskCopy[] = [];
  for (const v of vmVolumes(vm)) {
    if (v.kind !== 'dataVolume' && v.kind !== 'persistentVolumeClaim') continue;
    const pvc = deps.cluster.cache.get('PersistentVolumeClaim', namespace, v.claim);
    if (!pvc || asDict(pvc.status).phase !== 'Bound')
      throw new CorralError(
        'CONFLICT',
        `disk ${v.volume} of VM ${namespace}/${source} (PVC ${v.claim}) is ${pvc ? 'not bound yet' : 'missing'}: nothing to copy`,
      );
    const dvPhase = asString(asDict(deps.cluster.cache.get('DataVolume', namespace, v.claim)?.status).phase);
    if (v.kind === 'dataVolume' && dvPhase && dvPhase !== 'Succeeded')
      throw new CorralError(
        'CONFLICT',
        `disk ${v.volume} of VM ${namespace}/${source} (DataVolume ${v.claim}) is ${dvPhase}: wait until it has Succeeded`,
      );
    const size = asString(asDict(asDict(pvc.status).capacity).storage) || claimSize(pvc);
    const storageClass = asString(asDict(pvc.spec).storageClassName);
    disks.push({
      volume: v.volume,
      from: v.claim,
      to: renameFor(source, target, v.claim, v.volume),
      size,
      ...(storageClass ? { storageClass } : {}),
      hotpluggable: v.hotpluggable,
    });
  }
  const secrets = new Map<string, string>();
  for (const raw of asArray(asDict(asDict(asDict(vm.spec).template).spec).volumes)) {
    const v = asDict(raw);
    for (const ci of [asDict(v.cloudInitNoCloud), asDict(v.cloudInitConfigDrive)])
      for (const key of ['secretRef', 'networkDataSecretRef']) {
        const name = asString(asDict(ci[key]).name);
        if (name) secrets.set(name, renameFor(source, target, name, name));
      }
  }
  const taken = new Set<string>();
  for (const d of disks) {
    if (taken.has(d.to)) throw new CorralError('CONFLICT', `two disks of ${source} would both be copied to ${d.to}`);
    taken.add(d.to);
    if (
      deps.cluster.cache.get('DataVolume', targetNamespace, d.to) ||
      deps.cluster.cache.get('PersistentVolumeClaim', targetNamespace, d.to)
    )
      throw new CorralError('CONFLICT', `disk ${targetNamespace}/${d.to} already exists (for the copy of ${d.volume})`);
  }
  for (const to of secrets.values())
    if (await deps.cluster.fetch('Secret', targetNamespace, to))
      throw new CorralError('CONFLICT', `Secret ${targetNamespace}/${to} already exists (for the copy of cloud-init)`);
  // A Multus network named without a namespace is looked up in the VM's own namespace; when the target has no
  // NetworkAttachmentDefinition of that name, the copy keeps the source's by naming it `<namespace>/<name>`.
  const networks = new Map<string, string>();
  for (const raw of asArray(asDict(asDict(asDict(vm.spec).template).spec).networks)) {
    const name = asString(asDict(asDict(raw).multus).networkName);
    if (!name || name.includes('/') || networks.has(name)) continue;
    const here = await deps.cluster.fetch('NetworkAttachmentDefinition', targetNamespace, name).catch(() => undefined);
    networks.set(name, here ? name : `${namespace}/${name}`);
  }
  return { vm, disks, secrets, networks };
}

/** The source VM's spec under the clone's names: Halted, new disks, Secrets, MACs and firmware identity. */
export function copiedVm(plan: CopyPlan, targetNamespace: string, target: string, options: CloneOptions): KObject {
  const { vm, disks, secrets, networks } = plan;
  const source = vm.metadata.name ?? '';
  const spec = structuredClone(asDict(vm.spec));
  delete spec.running;
  delete spec.dataVolumeTemplates;
  spec.runStrategy = 'Halted';
  const template = asDict(spec.template);
  const meta = asDict(template.metadata);
  const tLabels = asDict(meta.labels) as Record<string, string>;
  for (const key of NAME_LABELS) if (tLabels[key] === source) tLabels[key] = target;
  const podSpec = asDict(template.spec);
  const byVolume = new Map(disks.map((d) => [d.volume, d]));
  podSpec.volumes = asArray(podSpec.volumes).map((raw) => {
    const v = structuredClone(asDict(raw));
    const disk = byVolume.get(asString(v.name));
    if (disk) {
      delete v.persistentVolumeClaim;
      v.dataVolume = { name: disk.to, ...(disk.hotpluggable ? { hotpluggable: true } : {}) };
    }
    for (const ci of [asDict(v.cloudInitNoCloud), asDict(v.cloudInitConfigDrive)])
      for (const key of ['secretRef', 'networkDataSecretRef']) {
        const ref = asDict(ci[key]);
        const renamed = secrets.get(asString(ref.name));
        if (renamed) ref.name = renamed;
      }
    return v;
  });
  for (const raw of asArray(podSpec.networks)) {
    const multus = asDict(asDict(raw).multus);
    const renamed = networks.get(asString(multus.networkName));
    if (renamed) multus.networkName = renamed;
  }
  const domain = asDict(podSpec.domain);
  for (const raw of asArray(asDict(domain.devices).interfaces)) {
    const iface = asDict(raw);
    const mac = options.macs?.[asString(iface.name)];
    if (mac) iface.macAddress = mac;
    else if (iface.macAddress) iface.macAddress = freshMac();
  }
  const firmware = asDict(domain.firmware);
  delete firmware.uuid;
  delete firmware.serial;
  const labels = Object.fromEntries(Object.entries(vm.metadata.labels ?? {}).filter(([k]) => !IDENTITY_LABELS.has(k)));
  const annotations = Object.fromEntries(
    Object.entries(vm.metadata.annotations ?? {}).filter(
      ([k]) => !k.startsWith('kubevirt.io/') && k !== 'kubectl.kubernetes.io/last-applied-configuration',
    ),
  );
  return {
    apiVersion: vm.apiVersion ?? 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: target,
      namespace: targetNamespace,
      labels: { ...labels, [LABEL_VM]: target, ...(options.labels ?? {}) },
      annotations: { ...annotations, ...(options.annotations ?? {}) },
    },
    spec,
  };
}

function ownedBy(owner: KObject): NonNullable<KObject['metadata']['ownerReferences']> {
  return [
    {
      apiVersion: owner.apiVersion ?? 'kubevirt.io/v1',
      kind: 'VirtualMachine',
      name: owner.metadata.name ?? '',
      uid: owner.metadata.uid ?? '',
    },
  ];
}

/** CDI's host-assisted clone of one PVC into the target namespace. */
export function cloneDataVolume(owner: KObject, sourceNamespace: string, disk: DiskCopy): KObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: {
      name: disk.to,
      namespace: owner.metadata.namespace ?? '',
      labels: { [LABEL_VM]: owner.metadata.name ?? '' },
      ownerReferences: ownedBy(owner),
    },
    spec: {
      source: { pvc: { namespace: sourceNamespace, name: disk.from } },
      storage: {
        ...(disk.storageClass ? { storageClassName: disk.storageClass } : {}),
        resources: { requests: { storage: disk.size } },
      },
    },
  };
}

/** Percent (0–100) of a DataVolume's `status.progress` ("45.20%", "100.0%", "N/A"). */
function dvPercent(dv: KObject | undefined): number {
  const st = asDict(dv?.status);
  if (st.phase === 'Succeeded') return 100;
  const p = Number.parseFloat(asString(st.progress));
  return Number.isFinite(p) ? p : 0;
}

export async function cloneVmToNamespace(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  source: string,
  targetNamespace: string,
  target: string,
  options: CloneOptions = {},
  onTask?: (task: TaskHandle) => void,
): Promise<string> {
  const plan = await planCopy(deps, namespace, source, targetNamespace, target);
  const { disks, secrets } = plan;
  const created = await deps.cluster.create('VirtualMachine', copiedVm(plan, targetNamespace, target, options));
  const where = `${targetNamespace}/${target}`;
  try {
    for (const [from, to] of secrets) {
      const secret = await deps.cluster.fetch('Secret', namespace, from);
      if (!secret) throw new CorralError('NOT_FOUND', `cloud-init Secret ${namespace}/${from} of ${source} is missing`);
      await deps.cluster.create('Secret', {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: to,
          namespace: targetNamespace,
          labels: { [LABEL_VM]: target },
          ownerReferences: ownedBy(created),
        },
        ...(secret.type ? { type: secret.type } : {}),
        ...(secret.data ? { data: secret.data } : {}),
      });
    }
    for (const disk of disks) await deps.cluster.create('DataVolume', cloneDataVolume(created, namespace, disk));
  } catch (err) {
    // Nothing half-applied: the VM owns whatever was created, so deleting it takes the copies with it.
    await deps.cluster.remove('VirtualMachine', targetNamespace, target).catch(() => false);
    throw err;
  }
  const task = deps.journal.start('clone', `${namespace}/${source}`, caller.identity.login);
  onTask?.(task);
  task.log(`clone ${namespace}/${source} → ${where}: VM spec copied (Halted)`);
  for (const d of disks) task.log(`DataVolume ${targetNamespace}/${d.to} ← PVC ${namespace}/${d.from} (${d.size})`);
  for (const [from, to] of secrets) task.log(`Secret ${targetNamespace}/${to} ← ${namespace}/${from}`);
  task.progress(5);
  void (async () => {
    const deadline = Date.now() + deps.config.waitTimeoutMs;
    const phases = new Map<string, string>();
    for (;;) {
      const dvs = disks.map((d) => deps.cluster.cache.get('DataVolume', targetNamespace, d.to));
      // Absent from the cache is either the watch lagging behind our create or someone deleting it: ask the cluster.
      for (const [i, d] of disks.entries())
        if (!dvs[i] && !(await deps.cluster.fetch('DataVolume', targetNamespace, d.to)))
          throw new CorralError('CONFLICT', `DataVolume ${targetNamespace}/${d.to} was deleted while it was copying`);
      dvs.forEach((dv, i) => {
        const phase = asString(asDict(dv?.status).phase);
        const name = disks[i]?.to ?? '';
        if (phase && phases.get(name) !== phase) {
          phases.set(name, phase);
          task.log(`${name}: ${phase}`);
        }
      });
      const failed = dvs.findIndex((dv) => asDict(dv?.status).phase === 'Failed');
      if (failed >= 0) {
        const dv = dvs[failed];
        const why = asArray(asDict(dv?.status).conditions)
          .map(asDict)
          .map((c) => asString(c.message))
          .find(Boolean);
        throw new CorralError('BAD_GATEWAY', `DataVolume ${disks[failed]?.to} failed${why ? `: ${why}` : ''}`);
      }
      const percent = disks.length ? dvs.reduce((s, dv) => s + dvPercent(dv), 0) / disks.length : 100;
      task.progress(5 + percent * 0.9);
      if (dvs.every((dv) => asDict(dv?.status).phase === 'Succeeded')) break;
      if (Date.now() > deadline)
        throw new CorralError(
          'TIMEOUT',
          `the disks of ${where} were not copied in ${Math.round(deps.config.waitTimeoutMs / 1000)}s`,
        );
      await sleep(Math.min(deps.config.pollMs, 500));
    }
    if (options.start) {
      await deps.cluster.patch('VirtualMachine', targetNamespace, target, {
        spec: { runStrategy: 'Always', running: null },
      });
      task.log(`started ${target}`);
    }
    task.done(`cloned ${namespace}/${source} to ${where}`);
  })().catch(async (err: unknown) => {
    const removed = await deps.cluster.remove('VirtualMachine', targetNamespace, target).catch(() => false);
    task.log(
      removed
        ? `removed the partial clone ${where} (its disks and Secrets go with it); fix the cause and clone again`
        : `could not remove the partial clone ${where}: delete it before cloning again`,
    );
    task.fail(err);
  });
  return task.id;
}
