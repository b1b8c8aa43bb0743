/**
 * kube-controller-manager's garbage collector, namespace controller and PVC-protection controller as one SimModule
 * (kube-sim-spec §3): dependents of vanished owners are deleted (background), owners deleted in the foreground wait
 * for their blocking dependents, orphaning strips owner references, terminating namespaces are emptied and then
 * removed, and a deleted PVC goes once no pod or VMI uses it.
 *
 * It sweeps the whole store a short (simulated) while after a write that can matter — a real GC also reacts
 * asynchronously, and batching keeps a 10,000-object store cheap.
 */
import type { SimContext, SimModule } from '../module.js';
import { ApiError } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject, OwnerReference, ResourceType, StoreEvent } from '../store/types.js';
import { resourceKey } from '../store/types.js';

export const FOREGROUND = 'foregroundDeletion';
export const ORPHAN = 'orphan';
export const NAMESPACE_FINALIZER = 'kubernetes';
export const PVC_PROTECTION = 'kubernetes.io/pvc-protection';

const NAMESPACES = resourceKey('', 'namespaces');
const PVCS = resourceKey('', 'persistentvolumeclaims');
const PODS = resourceKey('', 'pods');
const VMIS = resourceKey('kubevirt.io', 'virtualmachineinstances');

interface Located {
  key: string;
  type: ResourceType;
  object: KObject;
}

/** Ignore "already gone" / "already changed" races: the next sweep sees the new state. */
function tolerant(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
  }
}

function needsSweep(ev: StoreEvent): boolean {
  if (ev.type === 'DELETED') return true;
  if (ev.object.metadata.deletionTimestamp) return true;
  return ev.type === 'ADDED' && !!ev.object.metadata.ownerReferences?.length;
}

export function sweep(store: ObjectStore): void {
  const all: Located[] = [];
  const byUid = new Map<string, Located>();
  for (const type of store.allTypes()) {
    const key = resourceKey(type.group, type.plural);
    for (const object of store.list(key)) {
      const loc = { key, type, object };
      all.push(loc);
      byUid.set(object.metadata.uid, loc);
    }
  }
  const ownerKnown = (ref: OwnerReference) => {
    const group = ref.apiVersion.includes('/') ? ref.apiVersion.split('/')[0]! : '';
    return !!store.typeOf(group, ref.kind);
  };

  const blockingDependents = new Map<string, number>();
  for (const dep of all) {
    const refs = dep.object.metadata.ownerReferences;
    if (!refs?.length) continue;
    const { namespace, name } = dep.object.metadata;
    const orphanFrom = refs.filter(
      (r) =>
        byUid.get(r.uid)?.object.metadata.finalizers?.includes(ORPHAN) &&
        byUid.get(r.uid)?.object.metadata.deletionTimestamp,
    );
    const dangling = refs.filter((r) => !byUid.has(r.uid) && ownerKnown(r));
    if (orphanFrom.length) {
      // Synchronous store: once this write is done the owner's `orphan` finalizer can go in the same sweep.
      tolerant(() =>
        store.mutate(dep.key, namespace, name, (o) => {
          o.metadata.ownerReferences = (o.metadata.ownerReferences ?? []).filter(
            (r) => !orphanFrom.some((x) => x.uid === r.uid),
          );
          if (!o.metadata.ownerReferences.length) delete o.metadata.ownerReferences;
        }),
      );
      continue;
    }
    const live = refs.filter((r) => byUid.has(r.uid) || !ownerKnown(r));
    if (dangling.length && !live.length) {
      if (!dep.object.metadata.deletionTimestamp)
        tolerant(() => store.delete(dep.key, namespace, name, { propagationPolicy: 'Background' }));
      continue;
    }
    if (dangling.length) {
      tolerant(() =>
        store.mutate(dep.key, namespace, name, (o) => {
          o.metadata.ownerReferences = (o.metadata.ownerReferences ?? []).filter(
            (r) => !dangling.some((d) => d.uid === r.uid),
          );
        }),
      );
    }
    for (const r of refs) {
      const owner = byUid.get(r.uid)?.object;
      if (!owner?.metadata.deletionTimestamp || !owner.metadata.finalizers?.includes(FOREGROUND)) continue;
      if (r.blockOwnerDeletion) blockingDependents.set(r.uid, (blockingDependents.get(r.uid) ?? 0) + 1);
      if (!dep.object.metadata.deletionTimestamp)
        tolerant(() => store.delete(dep.key, namespace, name, { propagationPolicy: 'Foreground' }));
    }
  }

  for (const owner of all) {
    const meta = owner.object.metadata;
    if (!meta.deletionTimestamp) continue;
    if (meta.finalizers?.includes(FOREGROUND) && !blockingDependents.get(meta.uid)) {
      tolerant(() => store.removeFinalizer(owner.key, meta.namespace, meta.name, FOREGROUND));
    }
    if (meta.finalizers?.includes(ORPHAN)) {
      tolerant(() => store.removeFinalizer(owner.key, meta.namespace, meta.name, ORPHAN));
    }
  }

  terminateNamespaces(store, all);
  releaseUnusedClaims(store);
}

function terminateNamespaces(store: ObjectStore, all: Located[]): void {
  for (const ns of store.list(NAMESPACES)) {
    if (!ns.metadata.deletionTimestamp) continue;
    const name = ns.metadata.name;
    const contents = all.filter((l) => l.type.namespaced && l.object.metadata.namespace === name);
    for (const c of contents) {
      if (!c.object.metadata.deletionTimestamp)
        tolerant(() => store.delete(c.key, name, c.object.metadata.name, { propagationPolicy: 'Background' }));
    }
    const remaining = store
      .allTypes()
      .some((t) => t.namespaced && store.list(resourceKey(t.group, t.plural), name).length > 0);
    if (!remaining) {
      tolerant(() =>
        store.mutate(NAMESPACES, undefined, name, (o) => {
          o.spec = { ...(o.spec as object | undefined), finalizers: [] };
          o.metadata.finalizers = (o.metadata.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
        }),
      );
    }
  }
}

interface Volume {
  persistentVolumeClaim?: { claimName?: string };
  dataVolume?: { name?: string };
}

/** Pod and VMI volumes; built-in kinds are not schema-validated, so anything but an array of objects is none. */
function volumesOf(obj: KObject): Volume[] {
  const volumes = (obj.spec as { volumes?: unknown } | undefined)?.volumes;
  return Array.isArray(volumes) ? volumes.filter((v): v is Volume => typeof v === 'object' && v !== null) : [];
}

/** Claims in use: referenced by a pod that has not finished, or by a VMI (as PVC or DataVolume). */
function claimsInUse(store: ObjectStore): Set<string> {
  const used = new Set<string>();
  for (const pod of store.list(PODS)) {
    const phase = (pod.status as { phase?: string } | undefined)?.phase;
    if (phase === 'Succeeded' || phase === 'Failed') continue;
    for (const v of volumesOf(pod)) {
      if (v.persistentVolumeClaim?.claimName)
        used.add(`${pod.metadata.namespace}/${v.persistentVolumeClaim.claimName}`);
    }
  }
  if (store.typeOf('kubevirt.io', 'VirtualMachineInstance')) {
    for (const vmi of store.list(VMIS)) {
      for (const v of volumesOf(vmi)) {
        const claim = v.persistentVolumeClaim?.claimName ?? v.dataVolume?.name;
        if (claim) used.add(`${vmi.metadata.namespace}/${claim}`);
      }
    }
  }
  return used;
}

function releaseUnusedClaims(store: ObjectStore): void {
  const deleting = store
    .list(PVCS)
    .filter((p) => p.metadata.deletionTimestamp && p.metadata.finalizers?.includes(PVC_PROTECTION));
  if (!deleting.length) return;
  const used = claimsInUse(store);
  for (const pvc of deleting) {
    if (used.has(`${pvc.metadata.namespace}/${pvc.metadata.name}`)) continue;
    tolerant(() => store.removeFinalizer(PVCS, pvc.metadata.namespace, pvc.metadata.name, PVC_PROTECTION));
  }
}

export function garbageCollectorModule(): SimModule {
  let unsubscribe = () => {};
  let cancelPending: (() => void) | undefined;
  return {
    name: 'garbage-collector',
    start(ctx: SimContext) {
      const schedule = () => {
        if (cancelPending) return;
        cancelPending = ctx.clock.after(ctx.clock.between(500, 1500), () => {
          cancelPending = undefined;
          sweep(ctx.store);
        });
      };
      unsubscribe = ctx.store.subscribe((ev) => {
        if (needsSweep(ev)) schedule();
      });
      schedule();
    },
    stop() {
      unsubscribe();
      cancelPending?.();
    },
  };
}
