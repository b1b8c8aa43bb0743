/**
 * Delete with cascade: stop the VM, delete it, then everything created for it — objects labelled
 * corral.dev/vm=<vm>, volumes and secrets its spec references, objects it owns (snapshots, restores, clones,
 * exports, hot-plugged disks, build Jobs). Every failed step is reported; success is never claimed over one.
 */
import type { DeletionPlan } from '../schemas/vms';
import { CorralError, describeError } from '../errors';
import type { Kind, KObject } from './cluster-port';
import type { Caller, DomainDeps } from './deps';
import { sleep } from './deps';
import { LABEL_VM } from './labels';
import { isLibraryImage } from './library-image';
import { runAsTask } from './tasks';
import { requireVm } from './vm-actions';
import { asDict, asString, vmiActive, vmSecretRefs, vmVolumes } from './vm-facts';

/** Namespaced kinds that may hold objects made for a VM, in deletion order (dependents before their sources). */
const ORDER: Kind[] = [
  'VirtualMachineExport',
  'VirtualMachineClone',
  'VirtualMachineRestore',
  'VirtualMachineSnapshot',
  'Job',
  'Service',
  'Pod',
  'DataVolume',
  'PersistentVolumeClaim',
  'Secret',
  'ConfigMap',
];

const LABELLED_KINDS = ORDER.filter((k) => k !== 'Pod');

/** Kinds whose objects point at their VM through spec.source/target rather than a label. */
const SOURCE_FIELD: Partial<Record<Kind, (o: KObject) => string[]>> = {
  VirtualMachineSnapshot: (o) => [asString(asDict(asDict(o.spec).source).name)],
  VirtualMachineRestore: (o) => [asString(asDict(asDict(o.spec).target).name)],
  VirtualMachineExport: (o) => [asString(asDict(asDict(o.spec).source).name)],
  VirtualMachineClone: (o) => [asString(asDict(asDict(o.spec).source).name)],
};

type Item = DeletionPlan['objects'][number] & { kindKey: Kind };

async function listCandidates(
  deps: DomainDeps,
  kind: Kind,
  namespace: string,
  vm: string,
): Promise<{ object: KObject; why: string }[]> {
  const cached = kind === 'DataVolume' || kind === 'PersistentVolumeClaim';
  const labelled = cached
    ? deps.cluster.cache.withLabel(kind, LABEL_VM, vm).filter((o) => o.metadata.namespace === namespace)
    : await deps.cluster.fetchList(kind, { namespace, labelSelector: `${LABEL_VM}=${vm}` });
  const out = labelled.map((object) => ({ object, why: `labelled ${LABEL_VM}=${vm}` }));
  const bySource = SOURCE_FIELD[kind];
  if (bySource) {
    // These kinds are rarely labelled by other tools: also match on the VM they reference.
    const all = await deps.cluster.fetchList(kind, { namespace });
    for (const object of all) if (bySource(object).includes(vm)) out.push({ object, why: 'refers to the VM' });
  }
  if (cached) {
    for (const object of deps.cluster.cache.list(kind, namespace)) {
      if (object.metadata.ownerReferences?.some((r) => r.kind === 'VirtualMachine' && r.name === vm))
        out.push({ object, why: 'owned by the VM' });
    }
  }
  return out;
}

/** `Kind/name` of every Secret, DataVolume and PVC the namespace's other VMs reference. */
function referencedByOtherVms(deps: DomainDeps, namespace: string, name: string): Set<string> {
  const out = new Set<string>();
  for (const other of deps.cluster.cache.list('VirtualMachine', namespace)) {
    if (other.metadata.name === name) continue;
    for (const s of vmSecretRefs(other)) out.add(`Secret/${s}`);
    for (const v of vmVolumes(other)) {
      if (v.kind === 'dataVolume') out.add(`DataVolume/${v.claim}`);
      if (v.kind === 'dataVolume' || v.kind === 'persistentVolumeClaim') out.add(`PersistentVolumeClaim/${v.claim}`);
    }
  }
  return out;
}

export async function deletionPlan(
  deps: DomainDeps,
  namespace: string,
  name: string,
): Promise<DeletionPlan & { items: Item[] }> {
  const vm = requireVm(deps, namespace, name);
  const items = new Map<string, Item>();
  // A disk or Secret that another VM in the namespace also uses is not this VM's to delete: a clone made by
  // KubeVirt's VirtualMachineClone keeps referencing its source's cloud-init Secret, for one.
  const usedElsewhere = referencedByOtherVms(deps, namespace, name);
  const add = (kind: Kind, objName: string, why: string) => {
    const key = `${kind}/${objName}`;
    if (!objName || items.has(key) || usedElsewhere.has(key)) return;
    // An image of the library (an installer ISO the VM boots from, say) is shared: detached with the VM, never deleted.
    if ((kind === 'DataVolume' || kind === 'PersistentVolumeClaim') && isLibraryImage(deps, kind, namespace, objName))
      return;
    items.set(key, { kind, kindKey: kind, namespace, name: objName, why });
  };
  for (const v of vmVolumes(vm)) {
    if (v.kind === 'dataVolume') add('DataVolume', v.claim, `volume ${v.volume} of the VM`);
    if (v.kind === 'dataVolume' || v.kind === 'persistentVolumeClaim') {
      // The PVC behind a DataVolume has the same name; include it explicitly in case CDI does not GC it.
      if (v.kind === 'persistentVolumeClaim' || deps.cluster.cache.get('PersistentVolumeClaim', namespace, v.claim)) {
        add('PersistentVolumeClaim', v.claim, `${v.hotpluggable ? 'hot-plugged ' : ''}volume ${v.volume} of the VM`);
      }
    }
  }
  for (const s of vmSecretRefs(vm)) add('Secret', s, 'cloud-init secret of the VM');
  const lists = await Promise.all(
    LABELLED_KINDS.map(async (kind) => ({ kind, found: await listCandidates(deps, kind, namespace, name) })),
  );
  for (const { kind, found } of lists) for (const f of found) add(kind, f.object.metadata.name ?? '', f.why);
  // CDI worker pods (importer, uploader, cloner) hold their PVC open (pvc-protection); CDI removes them with the
  // DataVolume, but one left behind would keep the disk Terminating forever, so they go first.
  const claims = new Set(
    [...items.values()]
      .filter((i) => i.kindKey === 'PersistentVolumeClaim' || i.kindKey === 'DataVolume')
      .map((i) => i.name),
  );
  if (claims.size) {
    for (const pod of await deps.cluster.fetchList('Pod', { namespace })) {
      const owner = pod.metadata.ownerReferences?.find((r) => r.kind === 'PersistentVolumeClaim' && claims.has(r.name));
      if (owner) add('Pod', pod.metadata.name ?? '', `CDI worker pod of ${owner.name}`);
    }
  }
  const order = (k: Kind) => ORDER.indexOf(k);
  const sorted = [...items.values()].sort(
    (a, b) => order(a.kindKey) - order(b.kindKey) || a.name.localeCompare(b.name),
  );
  const running = vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name));
  return {
    vm: { namespace, name },
    running,
    objects: [
      { kind: 'VirtualMachine', namespace, name, why: 'the VM itself' },
      ...sorted.map(({ kindKey: _k, ...rest }) => rest),
    ],
    items: sorted,
  };
}

export async function deleteVm(
  deps: DomainDeps,
  caller: Caller,
  namespace: string,
  name: string,
): Promise<{ task: string; removed: string[] }> {
  const vm = requireVm(deps, namespace, name); // 404 before a task is recorded
  if (vm.metadata.deletionTimestamp) {
    // Deleting again is only useful to retry a delete that failed part-way; otherwise it would claim a second time
    // to have deleted what is merely still terminating.
    const last = deps.journal.latest('delete', `${namespace}/${name}`);
    if (last?.status !== 'error')
      throw new CorralError(
        'CONFLICT',
        `VM ${namespace}/${name} is already being deleted${last ? ` (task ${last.id})` : ''}; it disappears once KubeVirt has finished`,
      );
  }
  return runAsTask(deps.journal, 'delete', `${namespace}/${name}`, caller.identity.login, async (task) => {
    const plan = await deletionPlan(deps, namespace, name);
    const removed: string[] = [];
    const failed: string[] = [];
    const total = plan.items.length + 2;
    let step = 0;
    const tick = () => task.progress((++step / total) * 100);

    if (plan.running || vmiActive(deps.cluster.cache.get('VirtualMachineInstance', namespace, name))) {
      try {
        await deps.cluster.patch('VirtualMachine', namespace, name, { spec: { runStrategy: 'Halted', running: null } });
        task.log('stopped the VM');
      } catch (err) {
        failed.push(`stop VM (${describeError(err)})`);
      }
    }
    tick();
    try {
      await deps.cluster.remove('VirtualMachine', namespace, name);
      removed.push(`VirtualMachine/${namespace}/${name}`);
      task.log(`deleted VirtualMachine ${name}`);
    } catch (err) {
      failed.push(`VirtualMachine ${name} (${describeError(err)})`);
    }
    tick();
    for (const item of plan.items) {
      try {
        const existed = await deps.cluster.remove(item.kindKey, namespace, item.name);
        if (existed) {
          removed.push(`${item.kind}/${namespace}/${item.name}`);
          task.log(`deleted ${item.kind} ${item.name}`);
        }
      } catch (err) {
        failed.push(`${item.kind} ${item.name} (${describeError(err)})`);
      }
      tick();
    }
    // A DataVolume deleted while CDI was still setting it up can get its worker pod after the plan was made; that
    // pod would pin the PVC (pvc-protection). Sweep once more for such pods.
    const claims = new Set(
      plan.items.filter((i) => i.kindKey === 'PersistentVolumeClaim' || i.kindKey === 'DataVolume').map((i) => i.name),
    );
    if (claims.size) {
      await sleep(Math.min(1000, deps.config.pollMs * 5));
      let pods: Awaited<ReturnType<typeof deps.cluster.fetchList>> = [];
      try {
        pods = await deps.cluster.fetchList('Pod', { namespace });
      } catch (err) {
        failed.push(`checking for CDI worker pods (${describeError(err)})`);
      }
      for (const pod of pods) {
        if (!pod.metadata.ownerReferences?.some((r) => r.kind === 'PersistentVolumeClaim' && claims.has(r.name)))
          continue;
        try {
          if (await deps.cluster.remove('Pod', namespace, pod.metadata.name ?? ''))
            removed.push(`Pod/${namespace}/${pod.metadata.name}`);
        } catch (err) {
          failed.push(`Pod ${pod.metadata.name} (${describeError(err)})`);
        }
      }
    }
    if (failed.length) {
      throw new CorralError(
        'BAD_GATEWAY',
        `VM ${namespace}/${name} was only partly deleted; failed: ${failed.join('; ')}. Deleted: ${removed.length ? removed.join(', ') : 'nothing'}. Retry the delete.`,
      );
    }
    task.done(`deleted ${removed.length} objects`);
    return { task: task.id, removed };
  });
}
