/**
 * KubeVirt's VirtualMachineExport controller and export server (spec §12.11): for a PVC, a VM or a VM snapshot it
 * creates the token Secret, the exporter pod and Service `virt-export-<name>`, waits while a running VM holds the
 * disks (Pending, `PVCReady=False reason InUse`), then goes Ready with `links.internal`/`links.external` pointing
 * at this embedded cluster's own HTTP server (export-server.ts). Each volume's formats follow what it holds, as
 * KubeVirt's controller sets them on the exporter pod [src: KubeVirt pkg/storage/export/export/export.go
 * addVolumeEnvironmentVariables, links.go]: a disk image (kubevirt content: block, or CDI's contentType kubevirt)
 * offers `raw` and `gzip`, a plain filesystem (a CT's claim, an archive DataVolume) `dir` and `tar.gz`. Past
 * `ttlExpirationTime` the export is deleted.
 */
import { randomBytes } from 'node:crypto';
import type { SimContext } from '../module.js';
import type { KObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { activeVmi, podClaims, vmSpecClaims } from './consumers.js';
import { featureGateEnabled } from './feature-gates.js';
import { S } from './keys.js';
import { ensurePod, whenNoKubelet } from './pods.js';
import { objId, type Runtime } from './runtime.js';
import { arr, ownerRef, parseDuration, rec, setCondition, spec, status, statusOf, str, timestampIn } from './util.js';
import { isKubevirtContent } from './volume-files.js';

const COMPONENT = 'virt-controller';
const EXPORT_SERVER_IMAGE = 'quay.io/kubevirt/virt-exportserver:v1.6.0';
const DEFAULT_TTL_MS = 2 * 3_600_000;
export const EXPORT_PATH_PREFIX = '/sim-export/';
export const TOKEN_HEADER = 'x-kubevirt-export-token';

interface ExportVolume {
  /** Volume name in the links: the PVC name, as KubeVirt names them. */
  name: string;
  claim?: KObject;
  /** For snapshot exports: the VolumeSnapshot the data comes from. */
  snapshot?: KObject;
  /** A disk image (raw, gzip) rather than a plain filesystem (dir, tar.gz). */
  kubevirt: boolean;
}

type SourceState =
  | { ok: true; volumes: ExportVolume[]; vmName?: string }
  | { ok: false; reason: string; message: string; skipped?: boolean };

function exportServiceName(exp: KObject): string {
  return `virt-export-${exp.metadata.name}`;
}

export function tokenSecretName(exp: KObject): string {
  return str(spec(exp).tokenSecretRef) ?? `export-token-${exp.metadata.name}`;
}

export function startExportController(rt: Runtime): void {
  if (!rt.serves(S.vmExports)) return;
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`vmexport:${ns ?? ''}/${name}`, () => reconcile(rt, ns, name));
  rt.on(S.vmExports, (ev) => {
    if (ev.type === 'DELETED') rt.cancelAll(objId('vmexport', ev.object));
    else enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  // VMs stopping/starting, claims binding, snapshots readying and the exporter pod starting all matter.
  for (const key of [S.vms, S.vmis, S.pvcs, S.vmSnapshots, S.pods]) {
    rt.on(key, (ev) => {
      for (const e of rt.list(S.vmExports, ev.object.metadata.namespace))
        enqueue(e.metadata.namespace, e.metadata.name);
    });
  }
  for (const e of rt.list(S.vmExports)) enqueue(e.metadata.namespace, e.metadata.name);
}

function patchStatus(rt: Runtime, exp: KObject, change: (st: Record<string, unknown>) => void): void {
  rt.store.mutate(S.vmExports, exp.metadata.namespace, exp.metadata.name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function claimState(
  rt: Runtime,
  ns: string | undefined,
  claimName: string,
): { claim?: KObject; problem?: { reason: string; message: string } } {
  const claim = rt.get(S.pvcs, ns, claimName);
  if (!claim) return { problem: { reason: 'NotFound', message: `pvc ${ns ?? ''}/${claimName} not found` } };
  if (status(claim).phase !== 'Bound')
    return { problem: { reason: 'Pending', message: `pvc ${ns ?? ''}/${claimName} is not bound` } };
  const inUse = rt.list(S.vmis, ns).some((vmi) => {
    if (status(vmi).phase === 'Succeeded' || status(vmi).phase === 'Failed') return false;
    return vmSpecClaims(spec(vmi)).some((c) => c.claim === claimName);
  });
  // A pod mounting it counts too (a CT's pod, a job's), except the export's own exporter pod [src: KubeVirt
  // pkg/storage/export/export/export.go isPVCInUse: PodsUsingPVCs not controlled by the VirtualMachineExport].
  const podUses = rt.list(S.pods, ns).some((pod) => {
    if (status(pod).phase === 'Succeeded' || status(pod).phase === 'Failed') return false;
    if (pod.metadata.ownerReferences?.some((r) => r.controller && r.kind === 'VirtualMachineExport')) return false;
    return podClaims(pod).includes(claimName);
  });
  const rwx = arr(spec(claim).accessModes).includes('ReadWriteMany');
  if ((inUse || podUses) && !rwx)
    return { claim, problem: { reason: 'InUse', message: `pvc ${ns ?? ''}/${claimName} is in use` } };
  return { claim };
}

function sourceState(rt: Runtime, exp: KObject): SourceState {
  const ns = exp.metadata.namespace;
  const source = rec(spec(exp).source);
  const name = str(source.name) ?? '';
  const kind = str(source.kind);
  if (kind === 'PersistentVolumeClaim' && !source.apiGroup) {
    const state = claimState(rt, ns, name);
    if (state.problem) return { ok: false, ...state.problem };
    return { ok: true, volumes: [{ name, claim: state.claim, kubevirt: isKubevirtContent(rt.store, state.claim!) }] };
  }
  if (kind === 'VirtualMachine' && source.apiGroup === 'kubevirt.io') {
    const vm = rt.get(S.vms, ns, name);
    if (!vm) return { ok: false, reason: 'NotFound', message: `VirtualMachine ${name} not found` };
    const claims = vmSpecClaims(rec(rec(spec(vm).template).spec));
    if (!claims.length)
      return {
        ok: false,
        skipped: true,
        reason: 'NoVolumes',
        message: `VirtualMachine ${name} has no exportable volumes`,
      };
    if (activeVmi(rt, vm)) {
      // A running VM holds its ReadWriteOnce disks: report that first, whatever else is pending.
      const busy = claims.map((c) => claimState(rt, ns, c.claim).problem).find((p) => p?.reason === 'InUse');
      if (busy) return { ok: false, ...busy };
    }
    const volumes: ExportVolume[] = [];
    for (const c of claims) {
      const state = claimState(rt, ns, c.claim);
      if (state.problem) return { ok: false, ...state.problem };
      volumes.push({ name: c.claim, claim: state.claim, kubevirt: isKubevirtContent(rt.store, state.claim!) });
    }
    return { ok: true, volumes, vmName: name };
  }
  if (kind === 'VirtualMachineSnapshot' && source.apiGroup === 'snapshot.kubevirt.io') {
    const snapshot = rt.get(S.vmSnapshots, ns, name);
    if (!snapshot) return { ok: false, reason: 'NotFound', message: `VirtualMachineSnapshot ${name} not found` };
    if (status(snapshot).readyToUse !== true)
      return { ok: false, reason: 'NotReady', message: `VirtualMachineSnapshot ${name} is not ready` };
    const content = rt.get(S.vmSnapshotContents, ns, str(status(snapshot).virtualMachineSnapshotContentName) ?? '');
    const volumes = arr(spec(content ?? ({} as KObject)).volumeBackups).map((b) => {
      const backup = rec(b);
      const saved = rec(backup.persistentVolumeClaim);
      const name = str(rec(saved.metadata).name) ?? str(backup.volumeName) ?? 'disk';
      // The claim KubeVirt restores from the snapshot to serve it carries the backed-up claim's annotations.
      const annotations = rec(rec(saved.metadata).annotations) as Record<string, string>;
      const restored = { metadata: { namespace: ns, annotations }, spec: saved.spec };
      return {
        name,
        snapshot: rt.get(S.volumeSnapshots, ns, str(backup.volumeSnapshotName) ?? ''),
        kubevirt: isKubevirtContent(rt.store, restored),
      };
    });
    if (!volumes.length)
      return {
        ok: false,
        skipped: true,
        reason: 'NoVolumes',
        message: `VirtualMachineSnapshot ${name} has no volumes`,
      };
    return { ok: true, volumes, vmName: str(rec(spec(snapshot).source).name) };
  }
  return {
    ok: false,
    skipped: true,
    reason: 'InvalidSource',
    message: `unsupported export source ${String(source.apiGroup ?? '')}/${String(kind)}`,
  };
}

function ensureToken(rt: Runtime, exp: KObject): void {
  const ns = exp.metadata.namespace ?? 'default';
  const name = tokenSecretName(exp);
  if (rt.get(S.secrets, ns, name)) return;
  rt.store.create(S.secrets, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: ns, ownerReferences: [ownerRef(exp)] },
    type: 'Opaque',
    data: { token: Buffer.from(randomBytes(24).toString('base64url')).toString('base64') },
  });
}

/** The token clients must present, from the Secret's `data.token` (base64) or `stringData.token`. */
export function exportToken(ctx: Pick<SimContext, 'store'>, exp: KObject): string | undefined {
  const secret = ctx.store.get(S.secrets, exp.metadata.namespace, tokenSecretName(exp));
  if (!secret) return undefined;
  const data = str(rec(secret.data).token);
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  return str(rec(secret.stringData).token);
}

function reconcile(rt: Runtime, ns: string | undefined, name: string): void {
  const exp = rt.get(S.vmExports, ns, name);
  if (!exp || exp.metadata.deletionTimestamp) return;
  const id = objId('vmexport', exp);
  if (!featureGateEnabled(rt, 'VMExport')) {
    patchStatus(rt, exp, (st) => {
      st.phase = 'Skipped';
      setCondition(st, {
        type: 'Ready',
        status: 'False',
        reason: 'FeatureGateDisabled',
        message: 'VMExport feature gate not enabled',
      });
    });
    return;
  }
  const ttl = spec(exp).ttlDuration === undefined ? DEFAULT_TTL_MS : parseDuration(spec(exp).ttlDuration);
  if (ttl === undefined) {
    patchStatus(rt, exp, (st) => {
      st.phase = 'Skipped';
      setCondition(st, {
        type: 'Ready',
        status: 'False',
        reason: 'InvalidTTL',
        message: `spec.ttlDuration: Invalid value: "${String(spec(exp).ttlDuration)}"`,
      });
    });
    return;
  }
  // The TTL runs from when the controller first sees the export (creationTimestamp has only second resolution,
  // too coarse once time is sped up); ttlExpirationTime is the wall-clock moment the export will be deleted.
  let expiresAt = str(status(exp).ttlExpirationTime);
  if (!rt.hasTimer(`${id}:ttl`)) {
    expiresAt = timestampIn(ttl / rt.ctx.clock.speed);
    rt.after(`${id}:ttl`, ttl, () => {
      const current = rt.get(S.vmExports, ns, name);
      if (current && current.metadata.uid === exp.metadata.uid) {
        recordEvent(rt.store, current, 'ExportExpired', `VirtualMachineExport ${name} reached its TTL and is deleted`, {
          component: COMPONENT,
        });
        rt.store.delete(S.vmExports, ns, name);
      }
    });
  }
  ensureToken(rt, exp);
  const state = sourceState(rt, exp);
  const base = (st: Record<string, unknown>) => {
    st.tokenSecretRef = tokenSecretName(exp);
    st.serviceName = exportServiceName(exp);
    st.ttlExpirationTime = expiresAt;
  };
  if (!state.ok) {
    rt.cancel(`${id}:ready`);
    patchStatus(rt, exp, (st) => {
      base(st);
      st.phase = state.skipped ? 'Skipped' : 'Pending';
      delete st.links;
      setCondition(st, { type: 'Ready', status: 'False', reason: state.skipped ? state.reason : 'PodPending' });
      setCondition(st, { type: 'PVCReady', status: 'False', reason: state.reason, message: state.message });
    });
    return;
  }
  const pod = ensureExporter(rt, exp, state.volumes);
  if (status(exp).phase === 'Ready') return;
  patchStatus(rt, exp, (st) => {
    base(st);
    st.phase = 'Pending';
    if (state.vmName) st.virtualMachineName = state.vmName;
    setCondition(st, { type: 'Ready', status: 'False', reason: 'PodPending' });
    setCondition(st, { type: 'PVCReady', status: 'True', reason: 'Bound' });
  });
  if (status(pod).phase !== 'Running') {
    whenNoKubelet(rt, pod);
    return;
  }
  // The export server needs a few seconds to come up and publish its links (5–10 s end to end).
  rt.after(`${id}:ready`, rt.between(2000, 5000), () => {
    const current = rt.get(S.vmExports, ns, name);
    if (!current || current.metadata.deletionTimestamp) return;
    const now = sourceState(rt, current);
    if (!now.ok) return;
    const links = linksFor(rt, current, now.volumes);
    patchStatus(rt, current, (st) => {
      st.phase = 'Ready';
      st.links = { internal: links, external: links };
      setCondition(st, { type: 'Ready', status: 'True', reason: 'PodReady' });
    });
    recordEvent(rt.store, current, 'ExportReady', `VirtualMachineExport ${name} is ready`, { component: COMPONENT });
  });
}

function ensureExporter(rt: Runtime, exp: KObject, volumes: ExportVolume[]): KObject {
  const ns = exp.metadata.namespace ?? 'default';
  const service = exportServiceName(exp);
  if (rt.serves(S.services) && !rt.get(S.services, ns, service)) {
    rt.store.create(S.services, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: service, namespace: ns, ownerReferences: [ownerRef(exp)] },
      spec: {
        type: 'ClusterIP',
        selector: { 'kubevirt.io.virt-export-service': service },
        ports: [{ name: 'export', port: 443, protocol: 'TCP', targetPort: 8443 }],
      },
    });
  }
  return ensurePod(rt, {
    namespace: ns,
    name: service,
    driver: 'virt-exportserver',
    labels: { 'kubevirt.io': 'virt-exporter', 'kubevirt.io.virt-export-service': service },
    owner: ownerRef(exp),
    podSpec: {
      restartPolicy: 'OnFailure',
      containers: [{ name: 'exporter', image: EXPORT_SERVER_IMAGE, ports: [{ containerPort: 8443, name: 'export' }] }],
      volumes: volumes
        .filter((v) => v.claim)
        .map((v) => ({ name: v.name, persistentVolumeClaim: { claimName: v.name, readOnly: true } })),
    },
  });
}

function linksFor(rt: Runtime, exp: KObject, volumes: ExportVolume[]): Record<string, unknown> {
  const ns = exp.metadata.namespace ?? 'default';
  const base = `${rt.ctx.baseUrl().replace(/\/$/, '')}${EXPORT_PATH_PREFIX}${encodeURIComponent(ns)}/${encodeURIComponent(exp.metadata.name)}/volumes`;
  // The URLs as KubeVirt's links.go joins them (path.Join drops dirURI's trailing slash).
  return {
    volumes: volumes.map((v) => {
      const at = `${base}/${encodeURIComponent(v.name)}`;
      return {
        name: v.name,
        formats: v.kubevirt
          ? [
              { format: 'raw', url: `${at}/disk.img` },
              { format: 'gzip', url: `${at}/disk.img.gz` },
            ]
          : [
              { format: 'dir', url: `${at}/dir` },
              { format: 'tar.gz', url: `${at}/disk.tar.gz` },
            ],
      };
    }),
  };
}
