/**
 * KubeVirt's VirtualMachineClone controller (clone.kubevirt.io/v1beta1): a temporary VirtualMachineSnapshot of the
 * source VM (skipped when the source is a snapshot), then a temporary VirtualMachineRestore into the new VM with
 * JSON patches that give it new MAC addresses and a new firmware UUID and apply the label/annotation filters —
 * phases SnapshotInProgress → CreatingTargetVM → RestoreInProgress → Succeeded; the temporaries are deleted.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { KObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { featureGateEnabled } from './feature-gates.js';
import { S } from './keys.js';
import { objId, type Runtime } from './runtime.js';
import { arr, nowTimestamp, ownerRef, rec, setCondition, spec, status, statusOf, str } from './util.js';

const COMPONENT = 'virt-controller';

export function startCloneController(rt: Runtime): void {
  if (!rt.serves(S.vmClones)) return;
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`vmclone:${ns ?? ''}/${name}`, () => reconcile(rt, ns, name));
  rt.on(S.vmClones, (ev) => {
    if (ev.type === 'DELETED') rt.cancelAll(objId('vmclone', ev.object));
    else enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  // The temporaries report back to the clone that owns them; a source VM appearing unblocks a waiting clone.
  for (const key of [S.vmSnapshots, S.vmRestores]) {
    rt.on(key, (ev) => {
      const owner = ev.object.metadata.ownerReferences?.find((r) => r.kind === 'VirtualMachineClone');
      if (owner) enqueue(ev.object.metadata.namespace, owner.name);
    });
  }
  rt.on(S.vms, (ev) => {
    for (const c of rt.list(S.vmClones, ev.object.metadata.namespace)) {
      if (status(c).phase !== 'Succeeded' && status(c).phase !== 'Failed')
        enqueue(c.metadata.namespace, c.metadata.name);
    }
  });
  for (const c of rt.list(S.vmClones)) enqueue(c.metadata.namespace, c.metadata.name);
}

function patchStatus(rt: Runtime, clone: KObject, change: (st: Record<string, unknown>) => void): void {
  rt.store.mutate(S.vmClones, clone.metadata.namespace, clone.metadata.name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function setPhase(
  rt: Runtime,
  clone: KObject,
  phase: string,
  extra: (st: Record<string, unknown>) => void = () => {},
): void {
  patchStatus(rt, clone, (st) => {
    st.phase = phase;
    st.creationTime ??= nowTimestamp();
    extra(st);
    setCondition(st, { type: 'Progressing', status: 'True', reason: phase }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: phase }, { probe: true });
  });
}

function fail(rt: Runtime, clone: KObject, message: string): void {
  patchStatus(rt, clone, (st) => {
    st.phase = 'Failed';
    setCondition(st, { type: 'Progressing', status: 'False', reason: 'Failed', message }, { probe: true });
    setCondition(st, { type: 'Ready', status: 'False', reason: 'Failed', message }, { probe: true });
  });
  recordEvent(rt.store, clone, 'CloneFailed', message, { type: 'Warning', component: COMPONENT });
  cleanup(rt, clone);
}

function cleanup(rt: Runtime, clone: KObject): void {
  const ns = clone.metadata.namespace;
  const restore = str(status(clone).restoreName);
  if (restore && rt.get(S.vmRestores, ns, restore)) rt.store.delete(S.vmRestores, ns, restore);
  const snapshot = str(status(clone).snapshotName);
  if (snapshot && snapshot.startsWith('tmp-snapshot-') && rt.get(S.vmSnapshots, ns, snapshot))
    rt.store.delete(S.vmSnapshots, ns, snapshot);
}

/** `*`, exact keys and `prefix/*` patterns, with `!pattern` exclusions — KubeVirt's clone filter language. */
export function filterMap(input: Record<string, string> | undefined, filters: unknown): Record<string, string> {
  const list = arr(filters).filter((f): f is string => typeof f === 'string');
  const patterns = list.length ? list : ['*'];
  const matches = (pattern: string, key: string) =>
    pattern === '*' || pattern === key || (pattern.endsWith('*') && key.startsWith(pattern.slice(0, -1)));
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(input ?? {})) {
    let keep = false;
    for (const p of patterns) {
      if (p.startsWith('!')) {
        if (matches(p.slice(1), key)) keep = false;
      } else if (matches(p, key)) keep = true;
    }
    if (keep) out[key] = value;
  }
  return out;
}

/** A locally administered unicast MAC derived from the clone and interface, so repeated reconciles agree. */
function newMac(seed: string): string {
  const bytes = createHash('sha256').update(seed).digest();
  return ['02', ...[...bytes.subarray(0, 5)].map((b) => b.toString(16).padStart(2, '0'))].join(':');
}

/** The restore patches that turn a copy of `vm` into the clone target. */
export function clonePatches(
  clone: KObject,
  vm: { metadata: Record<string, unknown>; spec: Record<string, unknown> },
): string[] {
  const cloneSpec = spec(clone);
  const patches: unknown[] = [
    {
      op: 'add',
      path: '/metadata/labels',
      value: filterMap(rec(vm.metadata.labels) as Record<string, string>, cloneSpec.labelFilters),
    },
    {
      op: 'add',
      path: '/metadata/annotations',
      value: filterMap(rec(vm.metadata.annotations) as Record<string, string>, cloneSpec.annotationFilters),
    },
  ];
  const template = rec(vm.spec.template);
  const templateMeta = rec(template.metadata);
  const templateFilters = rec(cloneSpec.template);
  if (Object.keys(templateMeta).length) {
    patches.push({
      op: 'add',
      path: '/spec/template/metadata/labels',
      value: filterMap(rec(templateMeta.labels) as Record<string, string>, templateFilters.labelFilters),
    });
    patches.push({
      op: 'add',
      path: '/spec/template/metadata/annotations',
      value: filterMap(rec(templateMeta.annotations) as Record<string, string>, templateFilters.annotationFilters),
    });
  }
  const domain = rec(rec(template.spec).domain);
  const requested = rec(cloneSpec.newMacAddresses);
  arr(rec(domain.devices).interfaces).forEach((iface, i) => {
    const name = str(rec(iface).name) ?? String(i);
    const mac = str(requested[name]) ?? newMac(`${clone.metadata.uid}/${name}`);
    patches.push({ op: 'add', path: `/spec/template/spec/domain/devices/interfaces/${i}/macAddress`, value: mac });
  });
  const firmware = { ...rec(domain.firmware), uuid: randomUUID() };
  if (str(cloneSpec.newSMBiosSerial)) Object.assign(firmware, { serial: cloneSpec.newSMBiosSerial });
  else delete (firmware as Record<string, unknown>).serial;
  if (Object.keys(domain).length)
    patches.push({ op: 'add', path: '/spec/template/spec/domain/firmware', value: firmware });
  return patches.map((p) => JSON.stringify(p));
}

function reconcile(rt: Runtime, ns: string | undefined, name: string): void {
  const clone = rt.get(S.vmClones, ns, name);
  if (!clone || clone.metadata.deletionTimestamp) return;
  const phase = str(status(clone).phase);
  if (phase === 'Succeeded' || phase === 'Failed') return;
  if (!featureGateEnabled(rt, 'Snapshot')) {
    fail(rt, clone, 'clone requires the Snapshot feature gate');
    return;
  }
  const source = rec(spec(clone).source);
  const target = rec(spec(clone).target);
  const targetVm = str(target.name) ?? `clone-${clone.metadata.uid.slice(0, 8)}`;
  if (target.kind !== undefined && target.kind !== 'VirtualMachine') {
    fail(rt, clone, 'spec.target.kind: Unsupported value: only VirtualMachine targets are supported');
    return;
  }
  const fromSnapshot = source.kind === 'VirtualMachineSnapshot';
  if (!fromSnapshot && source.kind !== 'VirtualMachine') {
    fail(rt, clone, 'spec.source.kind: Unsupported value: must be VirtualMachine or VirtualMachineSnapshot');
    return;
  }
  const sourceName = str(source.name) ?? '';
  if (!phase) {
    const exists = fromSnapshot ? rt.get(S.vmSnapshots, ns, sourceName) : rt.get(S.vms, ns, sourceName);
    if (!exists) {
      patchStatus(rt, clone, (st) => {
        setCondition(
          st,
          {
            type: 'Ready',
            status: 'False',
            reason: 'Source does not exist',
            message: `${String(source.kind)} ${sourceName} does not exist`,
          },
          { probe: true },
        );
      });
      recordEvent(rt.store, clone, 'SourceDoesNotExist', `${String(source.kind)} ${sourceName} does not exist`, {
        type: 'Warning',
        component: COMPONENT,
      });
      return;
    }
    if (rt.get(S.vms, ns, targetVm)) {
      fail(rt, clone, `target VirtualMachine ${targetVm} already exists`);
      return;
    }
    if (fromSnapshot) {
      setPhase(rt, clone, 'CreatingTargetVM', (st) => {
        st.snapshotName = sourceName;
      });
      return;
    }
    const snapshotName = `tmp-snapshot-${clone.metadata.uid}`;
    if (!rt.get(S.vmSnapshots, ns, snapshotName)) {
      rt.store.create(S.vmSnapshots, {
        apiVersion: 'snapshot.kubevirt.io/v1beta1',
        kind: 'VirtualMachineSnapshot',
        metadata: { name: snapshotName, namespace: ns, ownerReferences: [ownerRef(clone)] },
        spec: { source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: sourceName } },
      });
    }
    setPhase(rt, clone, 'SnapshotInProgress', (st) => {
      st.snapshotName = snapshotName;
    });
    recordEvent(
      rt.store,
      clone,
      'SnapshotCreated',
      `Created snapshot ${snapshotName} of VirtualMachine ${sourceName}`,
      { component: COMPONENT },
    );
    return;
  }
  const snapshotName = str(status(clone).snapshotName) ?? '';
  const snapshot = rt.get(S.vmSnapshots, ns, snapshotName);
  if (!snapshot) {
    fail(rt, clone, `VirtualMachineSnapshot ${snapshotName} disappeared`);
    return;
  }
  if (phase === 'SnapshotInProgress') {
    if (status(snapshot).phase === 'Failed')
      fail(rt, clone, `snapshot ${snapshotName} failed: ${str(rec(status(snapshot).error).message) ?? ''}`);
    else if (status(snapshot).readyToUse === true) setPhase(rt, clone, 'CreatingTargetVM');
    return;
  }
  if (phase === 'CreatingTargetVM') {
    if (status(snapshot).readyToUse !== true) return;
    const content = rt.get(S.vmSnapshotContents, ns, str(status(snapshot).virtualMachineSnapshotContentName) ?? '');
    const sourceVm = rec(rec(spec(content ?? ({} as KObject)).source).virtualMachine);
    if (!content) {
      fail(rt, clone, `snapshot ${snapshotName} has no content`);
      return;
    }
    const restoreName = `tmp-restore-${clone.metadata.uid}`;
    if (!rt.get(S.vmRestores, ns, restoreName)) {
      rt.store.create(S.vmRestores, {
        apiVersion: 'snapshot.kubevirt.io/v1beta1',
        kind: 'VirtualMachineRestore',
        metadata: { name: restoreName, namespace: ns, ownerReferences: [ownerRef(clone)] },
        spec: {
          target: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: targetVm },
          virtualMachineSnapshotName: snapshotName,
          patches: clonePatches(clone, { metadata: rec(sourceVm.metadata), spec: rec(sourceVm.spec) }),
        },
      });
    }
    patchStatus(rt, clone, (st) => {
      st.restoreName = restoreName;
      st.targetName = targetVm;
    });
    // The restore creates the target VM; from then on it is restoring its disks.
    if (rt.get(S.vms, ns, targetVm)) setPhase(rt, clone, 'RestoreInProgress');
    return;
  }
  if (phase === 'RestoreInProgress') {
    const restore = rt.get(S.vmRestores, ns, str(status(clone).restoreName) ?? '');
    if (!restore) {
      fail(rt, clone, 'the temporary VirtualMachineRestore disappeared');
      return;
    }
    const failure = arr(status(restore).conditions).find((c) => rec(c).type === 'Failure' && rec(c).status === 'True');
    if (failure) {
      fail(rt, clone, `restore failed: ${str(rec(failure).message) ?? ''}`);
      return;
    }
    if (status(restore).complete !== true) return;
    patchStatus(rt, clone, (st) => {
      st.phase = 'Succeeded';
      setCondition(st, { type: 'Progressing', status: 'False', reason: 'Succeeded' }, { probe: true });
      setCondition(st, { type: 'Ready', status: 'True', reason: 'Succeeded' }, { probe: true });
    });
    recordEvent(
      rt.store,
      clone,
      'CloneSucceeded',
      `Successfully cloned ${String(source.kind)} ${sourceName} into VirtualMachine ${targetVm}`,
      {
        component: COMPONENT,
      },
    );
    cleanup(rt, clone);
  }
}
