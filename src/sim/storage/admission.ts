/**
 * The admission checks real webhooks make on storage objects, run by the HTTP layer before a write is stored:
 * the apiserver's PVC resize rules, CDI's DataVolume webhook and KubeVirt's snapshot / restore / clone / export
 * admitters (feature gates, source kinds). The controllers keep equivalent fallbacks for objects written straight
 * into the store (fleets, tests), which never pass through admission.
 */
import type { AdmissionHook, AdmissionRequest, SimContext } from '../module.js';
import { invalid } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { featureGateEnabled } from './feature-gates.js';
import { S } from './keys.js';
import { admitPvcUpdate, capacityStorage, requestedStorage } from './pvc-controller.js';
import { storeView } from './runtime.js';
import { probeHttpSource, probeRegistrySource } from './sources.js';
import { rec, spec, status, storageBytes, str } from './util.js';

function gates(ctx: SimContext): { enabled(gate: string): boolean } {
  const view = storeView(ctx.store);
  return { enabled: (gate) => featureGateEnabled(view, gate) };
}

function field(kind: string, group: string, obj: KObject, path: string, message: string, reason?: string): never {
  throw invalid(kind, group, obj.metadata.name, [{ field: path, message, ...(reason ? { reason } : {}) }]);
}

/** KubeVirt's admitters refuse a create while the feature gate the kind needs is off. */
function requireGate(ctx: SimContext, gate: string, kind: string, group: string, obj: KObject, message: string): void {
  if (!gates(ctx).enabled(gate)) field(kind, group, obj, 'spec', `Forbidden: ${message}`, 'FieldValueForbidden');
}

/** Snapshot and restore specs are immutable once created. */
function refuseSpecChange(kind: string, group: string, request: AdmissionRequest, obj: KObject): void {
  if (request.operation !== 'UPDATE' || !request.oldObject) return;
  if (JSON.stringify(spec(request.oldObject)) === JSON.stringify(spec(obj))) return;
  field(kind, group, obj, 'spec', 'Forbidden: spec in progress and cannot be modified', 'FieldValueForbidden');
}

const pvcResize: AdmissionHook = {
  kinds: [{ group: '', kind: 'PersistentVolumeClaim' }],
  admit(ctx, request: AdmissionRequest) {
    if (request.operation !== 'UPDATE' || request.subresource || !request.object || !request.oldObject) return;
    const view = storeView(ctx.store);
    admitPvcUpdate((name) => view.get(S.storageClasses, undefined, name), request.oldObject, request.object);
  },
};

const SOURCE_KINDS = ['http', 'registry', 'blank', 'pvc', 'upload', 'snapshot', 's3', 'gcs', 'imageio', 'vddk'];

/** CDI's DataVolume webhook: exactly one source, well-formed URLs, a size unless cloning, a known content type. */
const dataVolumes: AdmissionHook = {
  kinds: [{ group: 'cdi.kubevirt.io', kind: 'DataVolume' }],
  admit(ctx, request) {
    const dv = request.object;
    if (request.operation !== 'CREATE' || request.subresource || !dv) return;
    const source = rec(spec(dv).source);
    const kinds = Object.keys(source).filter((k) => SOURCE_KINDS.includes(k));
    const fail = (path: string, message: string) => field('DataVolume', 'cdi.kubevirt.io', dv, path, message);
    if (!spec(dv).sourceRef && kinds.length !== 1) {
      fail('spec.source', kinds.length ? `Multiple data sources: ${kinds.join(', ')}` : 'Missing data source');
    }
    const probe = source.http
      ? probeHttpSource(str(rec(source.http).url) ?? '')
      : source.registry
        ? probeRegistrySource(str(rec(source.registry).url) ?? '')
        : undefined;
    if (probe && !probe.ok && probe.fatal) {
      const [path, ...rest] = probe.message.split(': ');
      fail(path ?? 'spec.source', rest.join(': '));
    }
    // A content type CDI knows; a registry image is a disk image, never files to unpack.
    const contentType = spec(dv).contentType;
    if (contentType !== undefined && contentType !== '' && contentType !== 'kubevirt' && contentType !== 'archive')
      fail('spec.contentType', 'ContentType not one of: kubevirt, archive');
    if (source.registry && contentType === 'archive')
      fail('spec.contentType', 'ContentType must be kubevirt when Source is Registry');
    const storage = rec(spec(dv).pvc).resources ? rec(spec(dv).pvc) : rec(spec(dv).storage);
    const size = rec(rec(storage.resources).requests).storage;
    const sizePath = spec(dv).pvc ? 'spec.pvc.resources.requests.storage' : 'spec.storage.resources.requests.storage';
    if (!source.pvc && !spec(dv).sourceRef && size === undefined) fail(sizePath, 'missing storage size');
    if (size !== undefined && storageBytes(size) === undefined)
      fail(
        sizePath,
        `Invalid value: "${String(size)}": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      );
    if (source.pvc && size !== undefined) {
      const from = rec(source.pvc);
      const sourcePvc = storeView(ctx.store).get(
        S.pvcs,
        str(from.namespace) ?? request.namespace,
        str(from.name) ?? '',
      );
      const sourceBytes = sourcePvc
        ? storageBytes(capacityStorage(sourcePvc) ?? requestedStorage(sourcePvc))
        : undefined;
      if (sourceBytes !== undefined && (storageBytes(size) ?? 0) < sourceBytes) {
        fail(sizePath, 'target resources requests storage size is smaller than the source');
      }
    }
  },
};

function requireVmSource(
  kind: string,
  group: string,
  obj: KObject,
  path: string,
  source: Record<string, unknown>,
): void {
  if (source.kind !== 'VirtualMachine' || (source.apiGroup !== undefined && source.apiGroup !== 'kubevirt.io')) {
    field(
      kind,
      group,
      obj,
      `${path}.kind`,
      `Unsupported value: "${String(source.kind)}": supported values: "VirtualMachine"`,
      'FieldValueNotSupported',
    );
  }
}

/** KubeVirt's VirtualMachineSnapshot admitter. */
const snapshots: AdmissionHook = {
  kinds: [{ group: 'snapshot.kubevirt.io', kind: 'VirtualMachineSnapshot' }],
  admit(ctx, request) {
    const snap = request.object;
    if (request.subresource || !snap) return;
    const group = 'snapshot.kubevirt.io';
    refuseSpecChange('VirtualMachineSnapshot', group, request, snap);
    if (request.operation !== 'CREATE') return;
    requireGate(ctx, 'Snapshot', 'VirtualMachineSnapshot', group, snap, 'snapshot feature gate not enabled');
    requireVmSource('VirtualMachineSnapshot', group, snap, 'spec.source', rec(spec(snap).source));
  },
};

/** KubeVirt's VirtualMachineRestore admitter: gate, target kind, snapshot exists, one restore per VM at a time. */
const restores: AdmissionHook = {
  kinds: [{ group: 'snapshot.kubevirt.io', kind: 'VirtualMachineRestore' }],
  admit(ctx, request) {
    const restore = request.object;
    if (request.subresource || !restore) return;
    const group = 'snapshot.kubevirt.io';
    refuseSpecChange('VirtualMachineRestore', group, request, restore);
    if (request.operation !== 'CREATE') return;
    requireGate(ctx, 'Snapshot', 'VirtualMachineRestore', group, restore, 'Snapshot/Restore feature gate not enabled');
    requireVmSource('VirtualMachineRestore', group, restore, 'spec.target', rec(spec(restore).target));
    for (const [i, patch] of (Array.isArray(spec(restore).patches)
      ? (spec(restore).patches as unknown[])
      : []
    ).entries()) {
      let op: unknown;
      try {
        op = typeof patch === 'string' ? JSON.parse(patch) : undefined;
      } catch {
        op = undefined;
      }
      const ok =
        ['add', 'replace', 'remove', 'test'].includes(String(rec(op).op)) && String(rec(op).path ?? '').startsWith('/');
      if (!ok)
        field(
          'VirtualMachineRestore',
          group,
          restore,
          `spec.patches[${i}]`,
          `Invalid value: ${JSON.stringify(patch)}: not a JSON patch operation (add, replace, remove, test)`,
        );
    }
    const snapshotName = str(spec(restore).virtualMachineSnapshotName) ?? '';
    const view = storeView(ctx.store);
    if (!view.get(S.vmSnapshots, request.namespace, snapshotName)) {
      field(
        'VirtualMachineRestore',
        group,
        restore,
        'spec.virtualMachineSnapshotName',
        `Invalid value: "${snapshotName}": VirtualMachineSnapshot "${snapshotName}" does not exist`,
      );
    }
    const vm = view.get(S.vms, request.namespace, str(rec(spec(restore).target).name) ?? '');
    const busy = vm && str(status(vm).restoreInProgress);
    if (busy && busy !== restore.metadata.name) {
      field(
        'VirtualMachineRestore',
        group,
        restore,
        'spec.target',
        `Forbidden: VirtualMachineRestore "${busy}" in progress`,
        'FieldValueForbidden',
      );
    }
  },
};

/** KubeVirt's clone admitter: gate and supported source/target kinds. */
const clones: AdmissionHook = {
  kinds: [{ group: 'clone.kubevirt.io', kind: 'VirtualMachineClone' }],
  admit(ctx, request) {
    const clone = request.object;
    if (request.operation !== 'CREATE' || request.subresource || !clone) return;
    const group = 'clone.kubevirt.io';
    requireGate(ctx, 'Snapshot', 'VirtualMachineClone', group, clone, 'clone requires the Snapshot feature gate');
    const source = rec(spec(clone).source);
    if (source.kind !== 'VirtualMachine' && source.kind !== 'VirtualMachineSnapshot') {
      field(
        'VirtualMachineClone',
        group,
        clone,
        'spec.source.kind',
        `Unsupported value: "${String(source.kind)}": supported values: "VirtualMachine", "VirtualMachineSnapshot"`,
        'FieldValueNotSupported',
      );
    }
    const target = rec(spec(clone).target);
    if (target.kind !== undefined && target.kind !== 'VirtualMachine') {
      field(
        'VirtualMachineClone',
        group,
        clone,
        'spec.target.kind',
        `Unsupported value: "${String(target.kind)}": supported values: "VirtualMachine"`,
        'FieldValueNotSupported',
      );
    }
  },
};

/** KubeVirt's export admitter: the VMExport gate and the three supported source kinds. */
const exportsHook: AdmissionHook = {
  kinds: [{ group: 'export.kubevirt.io', kind: 'VirtualMachineExport' }],
  admit(ctx, request) {
    const exp = request.object;
    if (request.operation !== 'CREATE' || request.subresource || !exp) return;
    const group = 'export.kubevirt.io';
    requireGate(ctx, 'VMExport', 'VirtualMachineExport', group, exp, 'vm export feature gate not enabled');
    const source = rec(spec(exp).source);
    const ok =
      (source.kind === 'PersistentVolumeClaim' && !source.apiGroup) ||
      (source.kind === 'VirtualMachine' && source.apiGroup === 'kubevirt.io') ||
      (source.kind === 'VirtualMachineSnapshot' && source.apiGroup === 'snapshot.kubevirt.io');
    if (!ok) {
      field(
        'VirtualMachineExport',
        group,
        exp,
        'spec.source',
        `Invalid value: "${String(source.apiGroup ?? '')}/${String(source.kind)}": export source must be a PersistentVolumeClaim, a kubevirt.io VirtualMachine or a snapshot.kubevirt.io VirtualMachineSnapshot`,
      );
    }
  },
};

export const storageAdmission: AdmissionHook[] = [pvcResize, dataVolumes, snapshots, restores, clones, exportsHook];
