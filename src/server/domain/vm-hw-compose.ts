/**
 * Compose a VM from an explicit hardware description (several disks and CD-ROMs, NICs with fixed MACs,
 * labels/annotations). Written for the Proxmox translator, whose clients describe VMs disk by disk and NIC by NIC.
 */
import { CorralError, describeError } from '../errors';
import type { Kind, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { type TaskHandle } from './tasks';
import { asArray, asDict, asString } from './vm-facts';
import { requireNetworks } from './vm-networks';
import { buildDataVolume, ownedLabels, type DataVolumeSource } from './vm-spec';
import { bytesQuantity, type DiskBusName } from './vm-hw-facts';

export type DiskBacking =
  /** A new blank DataVolume `<vm>-<disk>` on the StorageClass ('' = the cluster default). */
  | { blank: { sizeBytes: number; storageClass: string } }
  /** A DataVolume imported from an http(s) URL. */
  | { import: { url: string; sizeBytes: number; storageClass: string } }
  /** A DataVolume cloned from a PVC in the VM's namespace. */
  | { clone: { pvc: string; sizeBytes: number; storageClass: string } }
  /** An existing claim used as is (e.g. a shared ISO library PVC). */
  | { claim: string };

export interface DiskPlan {
  name: string;
  bus: DiskBusName;
  cdrom: boolean;
  bootOrder?: number;
  backing: DiskBacking;
  /** A hot-plug volume (`hotpluggable: true`): attached to a running VM without a restart, detachable the same way. */
  hotplug?: boolean;
}

export interface NicPlan {
  name: string;
  model: string;
  mac: string;
  /** 'pod' or a Multus NetworkAttachmentDefinition name. */
  network: string;
}

export interface VmBlueprint {
  name: string;
  namespace: string;
  sockets: number;
  cores: number;
  memoryBytes: number;
  disks: DiskPlan[];
  nics: NicPlan[];
  labels: Record<string, string>;
  annotations: Record<string, string>;
  start: boolean;
  /**
   * false: run strategy Manual (never starts by itself; `start` then sends one start request). Otherwise Always
   * when started, else Halted (which KubeVirt's start turns into Always).
   */
  startOnBoot?: boolean;
  /** A cloud-init drive (vm-cloudinit.ts `cloudInitForCreate`): its Secret is written before the VM. */
  cloudInit?: { secret: KObject; drive?: { disk: Record<string, unknown>; volume: Record<string, unknown> } };
}

/** The claim name a planned disk will have. */
export function plannedClaim(vm: string, disk: DiskPlan): string {
  return 'claim' in disk.backing ? disk.backing.claim : `${vm}-${disk.name}`;
}

export function dataVolumeFor(bp: VmBlueprint, disk: DiskPlan): KObject | undefined {
  const b = disk.backing;
  if ('claim' in b) return undefined;
  let source: DataVolumeSource;
  let size: number;
  let storageClass: string;
  if ('blank' in b) [source, size, storageClass] = [{ blank: {} }, b.blank.sizeBytes, b.blank.storageClass];
  else if ('import' in b)
    [source, size, storageClass] = [{ http: { url: b.import.url } }, b.import.sizeBytes, b.import.storageClass];
  else
    [source, size, storageClass] = [
      { pvc: { namespace: bp.namespace, name: b.clone.pvc } },
      b.clone.sizeBytes,
      b.clone.storageClass,
    ];
  const dv = buildDataVolume(bp.name, bp.namespace, plannedClaim(bp.name, disk), bytesQuantity(size), source);
  if (storageClass) (asDict(dv.spec).storage as Record<string, unknown>).storageClassName = storageClass;
  return dv;
}

export function buildComposedVm(bp: VmBlueprint): KObject {
  const disks = bp.disks.map((d) => ({
    name: d.name,
    ...(d.cdrom ? { cdrom: { bus: d.bus === 'virtio' ? 'sata' : d.bus, readonly: true } } : { disk: { bus: d.bus } }),
    ...(d.bootOrder !== undefined ? { bootOrder: d.bootOrder } : {}),
  }));
  const volumes = bp.disks.map((d) =>
    'claim' in d.backing
      ? { name: d.name, persistentVolumeClaim: { claimName: d.backing.claim, ...(d.cdrom ? { readOnly: true } : {}) } }
      : { name: d.name, dataVolume: { name: plannedClaim(bp.name, d), ...(d.hotplug ? { hotpluggable: true } : {}) } },
  );
  const interfaces = bp.nics.map((n) => ({
    name: n.name,
    model: n.model,
    macAddress: n.mac,
    ...(n.network === 'pod' ? { masquerade: {} } : { bridge: {} }),
  }));
  if (bp.cloudInit?.drive) {
    disks.push(bp.cloudInit.drive.disk as (typeof disks)[number]);
    volumes.push(bp.cloudInit.drive.volume as (typeof volumes)[number]);
  }
  const networks = bp.nics.map((n) =>
    n.network === 'pod' ? { name: n.name, pod: {} } : { name: n.name, multus: { networkName: n.network } },
  );
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name: bp.name,
      namespace: bp.namespace,
      labels: { ...bp.labels, ...ownedLabels(bp.name) },
      annotations: { ...bp.annotations },
    },
    spec: {
      runStrategy: bp.startOnBoot === false ? 'Manual' : bp.start ? 'Always' : 'Halted',
      template: {
        metadata: { labels: { 'kubevirt.io/domain': bp.name, 'corral.dev/vm': bp.name } },
        spec: {
          domain: {
            cpu: { sockets: bp.sockets, cores: bp.cores, threads: 1 },
            memory: { guest: bytesQuantity(bp.memoryBytes) },
            devices: { disks, interfaces, ...(interfaces.length === 0 ? { autoattachPodInterface: false } : {}) },
          },
          networks,
          volumes,
        },
      },
    },
  };
}

/**
 * Writes the DataVolumes and the VM. The task stays `running` until every new DataVolume has finished importing
 * (or failed), because Proxmox clients treat the create task's end as "disks are ready". Anything written is
 * removed again if a write fails. Resolves with the task id once the objects exist.
 */
export async function composeVm(
  deps: DomainDeps,
  caller: Caller,
  bp: VmBlueprint,
  onTask?: (task: TaskHandle) => void,
): Promise<string> {
  if (deps.cluster.cache.get('VirtualMachine', bp.namespace, bp.name))
    throw new CorralError(
      'CONFLICT',
      `VM ${bp.namespace}/${bp.name} already exists; pick another name or delete it first`,
    );
  await requireNetworks(deps, bp.namespace, bp.nics);
  const target = `${bp.namespace}/${bp.name}`;
  const task = deps.journal.start('create', target, caller.identity.login);
  onTask?.(task);
  const written: { kind: Kind; name: string }[] = [];
  try {
    if (!(await deps.cluster.fetch('Namespace', undefined, bp.namespace))) {
      await deps.cluster
        .create('Namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: bp.namespace } })
        .catch((err: unknown) => {
          if (!(err instanceof CorralError && err.code === 'CONFLICT')) throw err;
        });
    }
    for (const disk of bp.disks) {
      const dv = dataVolumeFor(bp, disk);
      if (!dv) continue;
      await deps.cluster.create('DataVolume', dv);
      written.push({ kind: 'DataVolume', name: dv.metadata.name ?? '' });
      task.log(`created DataVolume ${dv.metadata.name} for ${disk.name}`);
    }
    if (bp.cloudInit) {
      await deps.cluster.create('Secret', bp.cloudInit.secret);
      written.push({ kind: 'Secret', name: bp.cloudInit.secret.metadata.name ?? '' });
      task.log(`created Secret ${bp.cloudInit.secret.metadata.name} (cloud-init)`);
    }
    await deps.cluster.create('VirtualMachine', buildComposedVm(bp));
    written.push({ kind: 'VirtualMachine', name: bp.name });
    task.log(`created VirtualMachine ${target}`);
    if (bp.startOnBoot === false && bp.start) {
      await deps.cluster.subresource('virtualmachines', bp.namespace, bp.name, 'start');
      task.log(`asked ${target} to start (run strategy Manual)`);
    }
    task.progress(50);
  } catch (err) {
    const leftovers: string[] = [];
    for (const w of written.reverse()) {
      await deps.cluster
        .remove(w.kind, bp.namespace, w.name)
        .catch((e: unknown) => leftovers.push(`${w.kind} ${w.name} (${describeError(e)})`));
    }
    const tail = leftovers.length
      ? `; rollback could not remove: ${leftovers.join(', ')}`
      : written.length
        ? '; everything created so far was removed again'
        : '';
    const failure = new CorralError(
      err instanceof CorralError ? err.code : 'BAD_GATEWAY',
      `creating VM ${target} failed: ${describeError(err)}${tail}`,
      { cause: err },
    );
    task.fail(failure);
    throw failure;
  }
  const claims = written.filter((w) => w.kind === 'DataVolume').map((w) => w.name);
  void followDataVolumes(deps, bp.namespace, claims, task);
  return task.id;
}

/** Ends `task` when every DataVolume has Succeeded (OK) or one Failed (its message), following cache events. */
export function followDataVolumes(
  deps: DomainDeps,
  namespace: string,
  names: string[],
  task: TaskHandle,
): Promise<void> {
  return new Promise((resolve) => {
    const seen = new Map<string, string>();
    const check = (): boolean => {
      let done = 0;
      for (const n of names) {
        const dv = deps.cluster.cache.get('DataVolume', namespace, n);
        const status = asDict(dv?.status);
        const phase = asString(status.phase);
        if (phase && seen.get(n) !== phase) {
          seen.set(n, phase);
          task.log(`DataVolume ${n}: ${phase}${status.progress ? ` ${asString(status.progress)}` : ''}`);
        }
        if (phase === 'Succeeded') done++;
        else if (phase === 'Failed') {
          const cond = asArray(status.conditions)
            .map(asDict)
            .find((c) => asString(c.message));
          task.fail(new Error(`DataVolume ${n} failed${cond ? `: ${asString(cond.message)}` : ''}`));
          return true;
        }
      }
      if (done === names.length) {
        task.done(names.length ? 'all disks ready' : 'VM created');
        return true;
      }
      task.progress(50 + Math.round((done / Math.max(1, names.length)) * 45));
      return false;
    };
    if (check()) return resolve();
    const timer = setTimeout(() => {
      unsubscribe();
      if (!task.finished)
        task.fail(new Error(`disks were not ready after ${Math.round(deps.config.waitTimeoutMs / 1000)}s`));
      resolve();
    }, deps.config.waitTimeoutMs);
    const unsubscribe = deps.cluster.onChange((e) => {
      if (
        (e.kind === 'DataVolume' || e.kind === 'PersistentVolumeClaim') &&
        e.object.metadata.namespace === namespace &&
        check()
      ) {
        clearTimeout(timer);
        unsubscribe();
        resolve();
      }
    });
  });
}
