/**
 * The CSI provisioner + persistentvolume-controller + external-resizer for the embedded cluster: binds claims per
 * StorageClass `volumeBindingMode` (creating a PV `pvc-<uid>`), expands bound claims where the class allows it,
 * and releases PVs when their claim goes. The `kubernetes.io/pvc-protection` finalizer belongs to the GC module.
 */
import { ApiError, invalid } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { firstConsumerNode, podClaims, vmiClaims } from './consumers.js';
import { S } from './keys.js';
import { objId, type Runtime } from './runtime.js';
import {
  allowsExpansion,
  defaultStorageClass,
  isWaitForFirstConsumer,
  provisioner,
  storageClass,
} from './storage-classes.js';
import { arr, formatStorage, rec, setCondition, spec, status, statusOf, storageBytes, str } from './util.js';

const PV_CONTROLLER = 'persistentvolume-controller';

export function requestedStorage(pvc: KObject): string | undefined {
  return str(rec(rec(spec(pvc).resources).requests).storage);
}

export function capacityStorage(pvc: KObject): string | undefined {
  return str(rec(status(pvc).capacity).storage);
}

/**
 * Admission for PVC updates, as the apiserver's PersistentVolumeClaimResize plugin and validation do it:
 * growing needs a bound claim whose class has `allowVolumeExpansion: true` (403), shrinking below the current
 * capacity is invalid (422). Throws the ApiError the apiserver would answer; the HTTP layer may call it before
 * writing. Without that, the controller below reverts the write and records a Warning event instead.
 */
export function admitPvcUpdate(lookupClass: (name: string) => KObject | undefined, old: KObject, next: KObject): void {
  const before = storageBytes(requestedStorage(old));
  const after = storageBytes(requestedStorage(next));
  if (before === undefined || after === undefined || after === before) return;
  const name = next.metadata.name;
  const capacity = storageBytes(capacityStorage(old));
  if (after < before) {
    if (capacity !== undefined && after < capacity) {
      throw invalid('PersistentVolumeClaim', '', name, [
        {
          field: 'spec.resources.requests.storage',
          message: 'Forbidden: field can not be less than status.capacity',
          reason: 'FieldValueForbidden',
        },
      ]);
    }
    return;
  }
  const className = str(spec(old).storageClassName);
  const sc = className ? lookupClass(className) : undefined;
  if (status(old).phase !== 'Bound' || !allowsExpansion(sc)) {
    throw new ApiError(
      403,
      'Forbidden',
      `persistentvolumeclaims "${name}" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize`,
      { name, kind: 'persistentvolumeclaims' },
    );
  }
}

export function startPvcController(rt: Runtime): void {
  /** The last request size each claim was allowed to have, so a refused change can be put back. */
  const accepted = new Map<string, string>();
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`pvc:${ns ?? ''}/${name}`, () => reconcile(rt, accepted, ns, name));

  rt.on(S.pvcs, (ev) => {
    if (ev.type === 'DELETED') {
      accepted.delete(ev.object.metadata.uid);
      rt.cancelAll(objId('pvc', ev.object));
      rt.enqueue(`pv-release:${ev.object.metadata.uid}`, () => releaseVolume(rt, ev.object));
      return;
    }
    enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  // A new consumer lets WaitForFirstConsumer claims bind.
  rt.on(S.pods, (ev) => {
    if (ev.type !== 'DELETED') for (const claim of podClaims(ev.object)) enqueue(ev.object.metadata.namespace, claim);
  });
  rt.on(S.vmis, (ev) => {
    if (ev.type !== 'DELETED') for (const claim of vmiClaims(ev.object)) enqueue(ev.object.metadata.namespace, claim);
  });
  rt.on(S.storageClasses, () => {
    for (const pvc of rt.list(S.pvcs))
      if (status(pvc).phase !== 'Bound') enqueue(pvc.metadata.namespace, pvc.metadata.name);
  });
  for (const pvc of rt.list(S.pvcs)) enqueue(pvc.metadata.namespace, pvc.metadata.name);
}

function reconcile(rt: Runtime, accepted: Map<string, string>, ns: string | undefined, name: string): void {
  const pvc = rt.get(S.pvcs, ns, name);
  if (!pvc || pvc.metadata.deletionTimestamp) return;
  const className = str(spec(pvc).storageClassName);
  if (className === undefined) {
    // The DefaultStorageClass admission plugin fills the class in on create; the sim does it on first sight.
    const fallback = defaultStorageClass(rt);
    if (fallback) {
      rt.store.mutate(S.pvcs, ns, name, (o) => {
        rec(o.spec).storageClassName = fallback.metadata.name;
      });
      return;
    }
  }
  if (!status(pvc).phase) {
    rt.store.mutate(S.pvcs, ns, name, (o) => {
      statusOf(o).phase = 'Pending';
    });
    return;
  }
  if (status(pvc).phase === 'Bound') {
    reconcileSize(rt, accepted, pvc);
    return;
  }
  accepted.set(pvc.metadata.uid, requestedStorage(pvc) ?? '');
  if (!className) {
    recordEvent(
      rt.store,
      pvc,
      'FailedBinding',
      'no persistent volumes available for this claim and no storage class is set',
      {
        component: PV_CONTROLLER,
      },
    );
    return;
  }
  const sc = storageClass(rt, className);
  if (!sc) {
    recordEvent(rt.store, pvc, 'ProvisioningFailed', `storageclass.storage.k8s.io "${className}" not found`, {
      type: 'Warning',
      component: PV_CONTROLLER,
    });
    return;
  }
  if (storageBytes(requestedStorage(pvc)) === undefined) {
    recordEvent(
      rt.store,
      pvc,
      'ProvisioningFailed',
      'failed to provision volume: spec.resources.requests.storage is missing or invalid',
      {
        type: 'Warning',
        component: provisioner(sc),
      },
    );
    return;
  }
  if (!snapshotSourceReady(rt, pvc)) return;
  const selectedNode = pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'];
  if (isWaitForFirstConsumer(sc) && !selectedNode) {
    const node = firstConsumerNode(rt, pvc);
    if (node === undefined) {
      recordEvent(rt.store, pvc, 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding', {
        component: PV_CONTROLLER,
      });
      return;
    }
    if (node) {
      rt.store.mutate(S.pvcs, ns, name, (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, 'volume.kubernetes.io/selected-node': node };
      });
    }
  }
  rt.after(`${objId('pvc', pvc)}:bind`, rt.between(500, 2000), () => bind(rt, ns, name));
}

/** A claim restored from a VolumeSnapshot provisions only once that snapshot is ready to use. */
function snapshotSourceReady(rt: Runtime, pvc: KObject): boolean {
  const source = rec(spec(pvc).dataSource);
  if (source.kind !== 'VolumeSnapshot') return true;
  const snapshotName = str(source.name) ?? '';
  const vs = rt.get(S.volumeSnapshots, pvc.metadata.namespace, snapshotName);
  if (vs && status(vs).readyToUse === true) return true;
  recordEvent(
    rt.store,
    pvc,
    'ProvisioningFailed',
    vs ? `VolumeSnapshot ${snapshotName} is not ready to use` : `VolumeSnapshot ${snapshotName} not found`,
    { type: 'Warning', component: PV_CONTROLLER },
  );
  return false;
}

function bind(rt: Runtime, ns: string | undefined, name: string): void {
  const pvc = rt.get(S.pvcs, ns, name);
  if (!pvc || pvc.metadata.deletionTimestamp || status(pvc).phase === 'Bound') return;
  const sc = storageClass(rt, str(spec(pvc).storageClassName));
  const size = requestedStorage(pvc) ?? '1Gi';
  const pvName = `pvc-${pvc.metadata.uid}`;
  const accessModes = arr(spec(pvc).accessModes).length ? arr(spec(pvc).accessModes) : ['ReadWriteOnce'];
  const driver = provisioner(sc);
  recordEvent(rt.store, pvc, 'Provisioning', `External provisioner is provisioning volume for claim "${ns}/${name}"`, {
    component: driver,
  });
  if (rt.serves(S.pvs) && !rt.get(S.pvs, undefined, pvName)) {
    rt.store.create(S.pvs, {
      apiVersion: 'v1',
      kind: 'PersistentVolume',
      metadata: {
        name: pvName,
        annotations: {
          'pv.kubernetes.io/provisioned-by': driver,
          'volume.kubernetes.io/provisioner-deletion-secret-name': '',
        },
        finalizers: ['kubernetes.io/pv-protection'],
      },
      spec: {
        capacity: { storage: size },
        accessModes,
        persistentVolumeReclaimPolicy: str(sc?.reclaimPolicy) ?? 'Delete',
        storageClassName: str(spec(pvc).storageClassName),
        volumeMode: str(spec(pvc).volumeMode) ?? 'Filesystem',
        claimRef: { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name, uid: pvc.metadata.uid },
        csi: { driver, volumeHandle: pvName, fsType: 'ext4' },
      },
      status: { phase: 'Bound' },
    });
  }
  rt.store.mutate(S.pvcs, ns, name, (o) => {
    rec(o.spec).volumeName = pvName;
    o.metadata.annotations = {
      ...o.metadata.annotations,
      'pv.kubernetes.io/bind-completed': 'yes',
      'pv.kubernetes.io/bound-by-controller': 'yes',
      'volume.kubernetes.io/storage-provisioner': driver,
      'volume.beta.kubernetes.io/storage-provisioner': driver,
    };
    const st = statusOf(o);
    st.phase = 'Bound';
    st.accessModes = accessModes;
    st.capacity = { storage: size };
  });
  recordEvent(rt.store, pvc, 'ProvisioningSucceeded', `Successfully provisioned volume ${pvName}`, {
    component: driver,
  });
}

/** Refuse (revert) disallowed size changes; run the Resizing → FileSystemResizePending → done sequence on growth. */
function reconcileSize(rt: Runtime, accepted: Map<string, string>, pvc: KObject): void {
  const ns = pvc.metadata.namespace;
  const name = pvc.metadata.name;
  const requested = requestedStorage(pvc);
  const previous = accepted.get(pvc.metadata.uid);
  if (previous !== undefined && requested !== previous) {
    try {
      const old = structuredClone(pvc);
      rec(rec(old.spec).resources).requests = { ...rec(rec(rec(old.spec).resources).requests), storage: previous };
      admitPvcUpdate((n) => storageClass(rt, n), old, pvc);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      rt.store.mutate(S.pvcs, ns, name, (o) => {
        rec(rec(rec(o.spec).resources).requests).storage = previous;
      });
      recordEvent(rt.store, pvc, 'ExternalExpanding', `resize refused: ${err.message}`, {
        type: 'Warning',
        component: 'volume_expand',
      });
      return;
    }
  }
  if (requested !== undefined) accepted.set(pvc.metadata.uid, requested);
  const want = storageBytes(requested);
  const have = storageBytes(capacityStorage(pvc));
  if (want === undefined || have === undefined || want <= have) return;
  const id = `${objId('pvc', pvc)}:resize`;
  if (rt.hasTimer(id) || rt.hasTimer(`${id}:fs`)) return;
  const driver = provisioner(storageClass(rt, str(spec(pvc).storageClassName)));
  const pvName = str(spec(pvc).volumeName);
  rt.store.mutate(S.pvcs, ns, name, (o) => {
    const st = statusOf(o);
    st.allocatedResources = { storage: requested };
    setCondition(st, { type: 'Resizing', status: 'True' }, { probe: true });
  });
  recordEvent(rt.store, pvc, 'Resizing', `External resizer is resizing volume ${pvName ?? name}`, {
    component: `external-resizer ${driver}`,
  });
  rt.after(id, rt.between(1000, 2500), () => {
    if (pvName && rt.get(S.pvs, undefined, pvName)) {
      rt.store.mutate(S.pvs, undefined, pvName, (pv) => {
        rec(pv.spec).capacity = { storage: formatStorage(want) };
      });
    }
    rt.store.mutate(S.pvcs, ns, name, (o) => {
      const st = statusOf(o);
      st.conditions = arr(st.conditions).filter((c) => rec(c).type !== 'Resizing');
      setCondition(
        st,
        {
          type: 'FileSystemResizePending',
          status: 'True',
          message: 'Waiting for user to (re-)start a pod to finish file system resize of volume on node.',
        },
        { probe: true },
      );
    });
    rt.after(`${id}:fs`, rt.between(1000, 2500), () => {
      const current = rt.get(S.pvcs, ns, name);
      if (!current) return;
      rt.store.mutate(S.pvcs, ns, name, (o) => {
        const st = statusOf(o);
        st.conditions = arr(st.conditions).filter((c) => rec(c).type !== 'FileSystemResizePending');
        if (!arr(st.conditions).length) delete st.conditions;
        st.capacity = { ...rec(st.capacity), storage: requested };
      });
      recordEvent(
        rt.store,
        current,
        'FileSystemResizeSuccessful',
        `MountVolume.NodeExpandVolume succeeded for volume "${pvName ?? name}"`,
        {
          component: 'kubelet',
        },
      );
      // The user may have asked for more while this round ran.
      rt.enqueue(`pvc:${ns ?? ''}/${name}`, () => reconcile(rt, accepted, ns, name));
    });
  });
}

/** Reclaim: `Delete` removes the PV once its claim is gone; `Retain` leaves it Released. */
function releaseVolume(rt: Runtime, pvc: KObject): void {
  const pvName = str(spec(pvc).volumeName);
  if (!pvName || !rt.get(S.pvs, undefined, pvName)) return;
  const pv = rt.store.mutate(S.pvs, undefined, pvName, (o) => {
    statusOf(o).phase = 'Released';
  });
  if (!pv || rec(pv.spec).persistentVolumeReclaimPolicy === 'Retain') return;
  rt.after(`pv:${pvName}:reclaim`, rt.between(500, 1500), () => {
    if (!rt.get(S.pvs, undefined, pvName)) return;
    rt.store.removeFinalizer(S.pvs, undefined, pvName, 'kubernetes.io/pv-protection');
    if (rt.get(S.pvs, undefined, pvName)) rt.store.delete(S.pvs, undefined, pvName);
  });
}
