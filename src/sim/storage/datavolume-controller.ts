/**
 * CDI's DataVolume controller: creates the DataVolume's PVC, runs the importer / clone / upload flow and reports
 * phase, `progress`, `restartCount` and the Bound/Ready/Running conditions the way CDI does (spec §12.13, §13.5).
 * Nothing is downloaded: sources.ts decides reachability and size, progress advances on the SimClock.
 */
import type { KObject } from '../store/types.js';
import { recordEvent } from '../events.js';
import { CDI_ANN, DISK_CONTENT_ANNOTATION, EXPORT_BYTES_ANNOTATION, S, SIM_CONTROLLED_POD_ANNOTATION } from './keys.js';
import { podClaims, vmiClaims } from './consumers.js';
import {
  appendPodLog,
  deletePod,
  ensurePod,
  isContainerRunning,
  pickNode,
  setPodRunning,
  setPodTerminated,
  whenNoKubelet,
} from './pods.js';
import { capacityStorage, requestedStorage } from './pvc-controller.js';
import { objId, type Runtime } from './runtime.js';
import { probeHttpSource, probeRegistrySource, stableFraction, type SourceProbe } from './sources.js';
import { defaultStorageClass, isWaitForFirstConsumer, storageClass } from './storage-classes.js';
import { arr, formatProgress, ownerRef, rec, setCondition, spec, status, statusOf, storageBytes, str } from './util.js';

const CDI = 'datavolume-import-controller';
const IMPORTER_IMAGE = 'quay.io/kubevirt/cdi-importer:v1.62.0';
const UPLOAD_IMAGE = 'quay.io/kubevirt/cdi-uploadserver:v1.62.0';
const MiB = 2 ** 20;
/** Importer restarts back off like a kubelet CrashLoopBackOff: 10 s doubling to 5 min. */
const BACKOFF_MS = (restarts: number) => Math.min(300_000, 10_000 * 2 ** Math.max(0, restarts - 1));

type Source =
  | { kind: 'http'; url: string }
  | { kind: 'registry'; url: string }
  | { kind: 'blank' }
  | { kind: 'upload' }
  | { kind: 'pvc'; namespace: string; name: string }
  | { kind: 'unsupported'; what: string };

function sourceOf(dv: KObject): Source {
  const source = rec(spec(dv).source);
  if (source.http) return { kind: 'http', url: str(rec(source.http).url) ?? '' };
  if (source.registry) return { kind: 'registry', url: str(rec(source.registry).url) ?? '' };
  if (source.blank) return { kind: 'blank' };
  if (source.upload) return { kind: 'upload' };
  if (source.pvc) {
    const pvc = rec(source.pvc);
    return {
      kind: 'pvc',
      namespace: str(pvc.namespace) ?? dv.metadata.namespace ?? 'default',
      name: str(pvc.name) ?? '',
    };
  }
  const what = Object.keys(source)[0] ?? (spec(dv).sourceRef ? 'sourceRef' : 'none');
  return { kind: 'unsupported', what };
}

/** The import source annotation CDI puts on the PVC (`http`, `registry`, `none` for blank, `upload`). */
function importSourceName(source: Source): string {
  return source.kind === 'blank' ? 'none' : source.kind;
}

function probe(source: Source): SourceProbe {
  if (source.kind === 'http') return probeHttpSource(source.url);
  if (source.kind === 'registry') return probeRegistrySource(source.url);
  return { ok: true, virtualBytes: 0, content: 'blank' };
}

/** Seconds an import takes at 40–150 MiB/s of the virtual size, or at the settings' importMiBps (blank: 1–2 s). */
function importSeconds(source: Source, probed: SourceProbe, fixedMiBps: number | undefined): number {
  if (!probed.ok || source.kind === 'blank') return 1 + stableFraction('blank');
  const key = source.kind === 'http' || source.kind === 'registry' ? source.url : '';
  const rate = (fixedMiBps ?? 40 + stableFraction(`${key}#rate`) * 110) * MiB;
  return probed.virtualBytes / rate;
}

export function startDataVolumeController(rt: Runtime): void {
  if (!rt.serves(S.dataVolumes)) return;
  const enqueue = (ns: string | undefined, name: string) =>
    rt.enqueue(`dv:${ns ?? ''}/${name}`, () => reconcile(rt, ns, name));
  rt.on(S.dataVolumes, (ev) => {
    if (ev.type === 'DELETED') rt.cancelAll(objId('dv', ev.object));
    else enqueue(ev.object.metadata.namespace, ev.object.metadata.name);
  });
  rt.on(S.pvcs, (ev) => {
    const owner = ev.object.metadata.ownerReferences?.find((r) => r.kind === 'DataVolume');
    if (owner) enqueue(ev.object.metadata.namespace, owner.name);
    if (ev.type !== 'DELETED' && ev.object.metadata.deletionTimestamp) {
      const claim = ev.object;
      rt.enqueue(`pvc-cleanup:${objId('pvc', claim)}`, () => removeWorkerPods(rt, claim));
    }
    // A clone may be waiting for this PVC to appear as its source.
    if (ev.type === 'ADDED') {
      for (const dv of rt.list(S.dataVolumes))
        if (status(dv).phase === 'Pending') enqueue(dv.metadata.namespace, dv.metadata.name);
    }
  });
  // Importer / upload pods are owned by the DataVolume's PVC, which has the DataVolume's name.
  rt.on(S.pods, (ev) => {
    const owner = ev.object.metadata.ownerReferences?.find((r) => r.kind === 'PersistentVolumeClaim');
    if (owner && ev.object.metadata.annotations?.[SIM_CONTROLLED_POD_ANNOTATION]?.startsWith('cdi-')) {
      enqueue(ev.object.metadata.namespace, owner.name);
    }
  });
  for (const dv of rt.list(S.dataVolumes)) enqueue(dv.metadata.namespace, dv.metadata.name);
}

/**
 * CDI deletes the importer / upload pod of a PVC that is being deleted [src: CDI import-controller.go cleanup].
 * The pod's owner reference alone cannot do it: the claim is not gone while pvc-protection holds it, and
 * pvc-protection holds it because the pod uses it.
 */
function removeWorkerPods(rt: Runtime, claim: KObject): void {
  for (const pod of rt.list(S.pods, claim.metadata.namespace)) {
    const ownedByClaim = (pod.metadata.ownerReferences ?? []).some((r) => r.uid === claim.metadata.uid);
    if (ownedByClaim && pod.metadata.annotations?.[SIM_CONTROLLED_POD_ANNOTATION]?.startsWith('cdi-')) {
      deletePod(rt, pod.metadata.namespace ?? 'default', pod.metadata.name);
    }
  }
}

function patchStatus(rt: Runtime, dv: KObject, change: (st: Record<string, unknown>) => void): void {
  rt.store.mutate(S.dataVolumes, dv.metadata.namespace, dv.metadata.name, (o) => {
    const before = JSON.stringify(o.status ?? null);
    change(statusOf(o));
    if (JSON.stringify(o.status) === before) return false;
  });
}

function annotatePvc(rt: Runtime, dv: KObject, annotations: Record<string, string>): void {
  rt.store.mutate(S.pvcs, dv.metadata.namespace, dv.metadata.name, (o) => {
    const current = o.metadata.annotations ?? {};
    if (Object.entries(annotations).every(([k, v]) => current[k] === v)) return false;
    o.metadata.annotations = { ...current, ...annotations };
  });
}

function reconcile(rt: Runtime, ns: string | undefined, name: string): void {
  const dv = rt.get(S.dataVolumes, ns, name);
  if (!dv || dv.metadata.deletionTimestamp) return;
  const phase = str(status(dv).phase);
  if (!phase) {
    patchStatus(rt, dv, (st) => {
      st.phase = 'Pending';
      st.progress = 'N/A';
      st.restartCount = 0;
      st.claimName = name;
      setCondition(
        st,
        { type: 'Bound', status: 'Unknown', message: 'No PVC found', reason: 'NotFound' },
        { heartbeat: true },
      );
      setCondition(st, { type: 'Ready', status: 'False' }, { heartbeat: true });
      setCondition(st, { type: 'Running', status: 'False' }, { heartbeat: true });
    });
    return;
  }
  if (phase === 'Succeeded' || phase === 'Failed') return;
  const source = sourceOf(dv);
  if (source.kind === 'unsupported') {
    fail(
      rt,
      dv,
      `The embedded cluster does not simulate DataVolume source "${source.what}" (supported: http, registry, blank, pvc, upload)`,
    );
    return;
  }
  const probed = probe(source);
  if (!probed.ok && probed.fatal) {
    fail(rt, dv, probed.message);
    return;
  }
  const pvc = ensureClaim(rt, dv, source);
  if (!pvc) return;
  const pvcPhase = status(pvc).phase;
  if (pvcPhase !== 'Bound') {
    waitForBinding(rt, dv, pvc);
    return;
  }
  if (status(dv).phase !== 'Succeeded') {
    patchStatus(rt, dv, (st) => {
      setCondition(
        st,
        { type: 'Bound', status: 'True', reason: 'Bound', message: `PVC ${name} Bound` },
        { heartbeat: true },
      );
    });
  }
  if (source.kind === 'pvc') runClone(rt, dv, source);
  else if (source.kind === 'upload') runUpload(rt, dv);
  else runImport(rt, dv, source, probed);
}

function fail(rt: Runtime, dv: KObject, message: string): void {
  patchStatus(rt, dv, (st) => {
    st.phase = 'Failed';
    setCondition(st, { type: 'Ready', status: 'False' }, { heartbeat: true });
    setCondition(st, { type: 'Running', status: 'False', reason: 'Error', message }, { heartbeat: true });
  });
  recordEvent(rt.store, dv, 'ImportFailed', `Failed to import into PVC ${dv.metadata.name}: ${message}`, {
    type: 'Warning',
    component: CDI,
  });
}

/** The PVC CDI creates for the DataVolume (same name, owned by it); undefined while it cannot be created yet. */
function ensureClaim(rt: Runtime, dv: KObject, source: Source): KObject | undefined {
  const ns = dv.metadata.namespace ?? 'default';
  const name = dv.metadata.name;
  const existing = rt.get(S.pvcs, ns, name);
  if (existing) {
    if ((existing.metadata.ownerReferences ?? []).some((r) => r.uid === dv.metadata.uid)) return existing;
    recordEvent(
      rt.store,
      dv,
      'ErrResourceExists',
      `Resource "${name}" already exists and is not managed by DataVolume`,
      {
        type: 'Warning',
        component: CDI,
      },
    );
    return undefined;
  }
  let sourcePvc: KObject | undefined;
  if (source.kind === 'pvc') {
    sourcePvc = rt.get(S.pvcs, source.namespace, source.name);
    if (!sourcePvc) {
      patchStatus(rt, dv, (st) => {
        setCondition(st, {
          type: 'Running',
          status: 'False',
          reason: 'CloneWithoutSource',
          message: `source pvc "${source.name}" not found`,
        });
      });
      recordEvent(rt.store, dv, 'CloneWithoutSource', `source pvc "${source.name}" not found`, {
        type: 'Warning',
        component: CDI,
      });
      return undefined;
    }
    // Files cannot become a disk image: an archive source into a kubevirt target is refused (a claim without the
    // mark counts as kubevirt) [src: CDI pkg/controller/clone/common.go ValidateContentTypes].
    const from = sourcePvc.metadata.annotations?.[CDI_ANN.contentType] || 'kubevirt';
    const to = str(spec(dv).contentType) || 'kubevirt';
    if (from === 'archive' && to === 'kubevirt') {
      const message = "The clone doesn't meet the validation requirements";
      patchStatus(rt, dv, (st) => {
        setCondition(st, { type: 'Running', status: 'False', reason: 'CloneValidationFailed', message });
      });
      recordEvent(rt.store, dv, 'CloneValidationFailed', message, { type: 'Warning', component: CDI });
      return undefined;
    }
  }
  const claimSpec = claimSpecFor(rt, dv, sourcePvc);
  if (typeof claimSpec === 'string') {
    fail(rt, dv, claimSpec);
    return undefined;
  }
  const annotations: Record<string, string> = {
    [CDI_ANN.createdForDataVolume]: dv.metadata.uid,
    [CDI_ANN.contentType]: str(spec(dv).contentType) ?? 'kubevirt',
    [CDI_ANN.podPhase]: '',
    [CDI_ANN.podRestarts]: '0',
  };
  if (source.kind === 'http' || source.kind === 'registry') annotations[CDI_ANN.endpoint] = source.url;
  if (source.kind === 'pvc') annotations[CDI_ANN.cloneRequest] = `${source.namespace}/${source.name}`;
  else annotations[CDI_ANN.source] = importSourceName(source);
  if (dv.metadata.annotations?.[CDI_ANN.bindImmediate]) annotations[CDI_ANN.bindImmediate] = 'true';
  const created = rt.store.create(S.pvcs, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name,
      namespace: ns,
      labels: {
        ...dv.metadata.labels,
        app: 'containerized-data-importer',
        'app.kubernetes.io/component': 'storage',
        'app.kubernetes.io/managed-by': 'cdi-controller',
      },
      annotations,
      ownerReferences: [ownerRef(dv)],
    },
    spec: claimSpec,
  });
  patchStatus(rt, dv, (st) => {
    setCondition(
      st,
      { type: 'Bound', status: 'False', reason: 'Pending', message: `PVC ${name} Pending` },
      { heartbeat: true },
    );
  });
  return created;
}

/** `spec.pvc` is used as written; `spec.storage` gets class, access modes and volume mode filled like a StorageProfile. */
function claimSpecFor(rt: Runtime, dv: KObject, sourcePvc: KObject | undefined): Record<string, unknown> | string {
  const legacy = rec(spec(dv).pvc);
  const storage = rec(spec(dv).storage);
  const base = Object.keys(legacy).length ? legacy : storage;
  const claim: Record<string, unknown> = structuredClone(base);
  const requests = rec(rec(claim.resources).requests);
  let size = str(requests.storage);
  if (!size && sourcePvc) size = capacityStorage(sourcePvc) ?? requestedStorage(sourcePvc);
  if (!size || storageBytes(size) === undefined) {
    return size ? `spec.storage.resources.requests.storage: Invalid value: "${size}"` : 'missing storage size';
  }
  if (sourcePvc) {
    const sourceBytes = storageBytes(capacityStorage(sourcePvc) ?? requestedStorage(sourcePvc)) ?? 0;
    if ((storageBytes(size) ?? 0) < sourceBytes)
      return 'target resources requests storage size is smaller than the source';
  }
  claim.resources = { ...rec(claim.resources), requests: { ...requests, storage: size } };
  if (base === storage) {
    const className = str(claim.storageClassName) ?? defaultStorageClass(rt, true)?.metadata.name;
    if (className) claim.storageClassName = className;
    if (!arr(claim.accessModes).length) claim.accessModes = ['ReadWriteOnce'];
    claim.volumeMode ??= 'Filesystem';
  }
  // Files are unpacked into a filesystem [src: CDI pkg/controller/datavolume/util.go pvcFromStorage].
  if (spec(dv).contentType === 'archive') {
    if (claim.volumeMode === 'Block') return 'DataVolume with ContentType Archive cannot have block volumeMode';
    claim.volumeMode = 'Filesystem';
  }
  return claim;
}

function waitForBinding(rt: Runtime, dv: KObject, pvc: KObject): void {
  const sc = storageClass(rt, str(spec(pvc).storageClassName));
  if (!sc || !isWaitForFirstConsumer(sc)) return;
  if (dv.metadata.annotations?.[CDI_ANN.bindImmediate] === 'true') {
    // The importer itself is the first consumer: provision on the node it would run on.
    const node = pickNode(rt);
    if (node && !pvc.metadata.annotations?.['volume.kubernetes.io/selected-node']) {
      rt.store.mutate(S.pvcs, pvc.metadata.namespace, pvc.metadata.name, (o) => {
        o.metadata.annotations = { ...o.metadata.annotations, 'volume.kubernetes.io/selected-node': node };
      });
    }
    return;
  }
  if (status(dv).phase === 'WaitForFirstConsumer') return;
  patchStatus(rt, dv, (st) => {
    st.phase = 'WaitForFirstConsumer';
  });
  recordEvent(rt.store, dv, 'WaitForFirstConsumer', `PVC ${dv.metadata.name} Pending`, { component: CDI });
}

// --- import (http, registry, blank) ------------------------------------------------------------------------

function importerPodName(dv: KObject): string {
  return `importer-${dv.metadata.name}`;
}

function runImport(rt: Runtime, dv: KObject, source: Source, probed: SourceProbe): void {
  const ns = dv.metadata.namespace ?? 'default';
  const name = dv.metadata.name;
  const id = objId('dv', dv);
  const phase = status(dv).phase;
  if (phase === 'Pending' || phase === 'WaitForFirstConsumer' || phase === 'PVCBound') {
    const pvc = rt.get(S.pvcs, ns, name);
    if (!pvc) return;
    ensurePod(rt, {
      namespace: ns,
      name: importerPodName(dv),
      driver: 'cdi-importer',
      labels: {
        app: 'containerized-data-importer',
        'app.kubernetes.io/component': 'storage',
        'cdi.kubevirt.io': 'importer',
      },
      annotations: { [CDI_ANN.source]: importSourceName(source) },
      owner: ownerRef(pvc),
      podSpec: {
        restartPolicy: 'OnFailure',
        nodeName: pvc.metadata.annotations?.['volume.kubernetes.io/selected-node'],
        containers: [
          {
            name: 'importer',
            image: IMPORTER_IMAGE,
            args: ['-v=1'],
            env: [
              { name: 'IMPORTER_SOURCE', value: importSourceName(source) },
              {
                name: 'IMPORTER_ENDPOINT',
                value: source.kind === 'http' || source.kind === 'registry' ? source.url : '',
              },
              { name: 'IMPORTER_CONTENTTYPE', value: str(spec(dv).contentType) ?? 'kubevirt' },
            ],
            volumeMounts: [{ name: 'cdi-data-vol', mountPath: '/data' }],
          },
        ],
        volumes: [{ name: 'cdi-data-vol', persistentVolumeClaim: { claimName: name } }],
      },
    });
    annotatePvc(rt, dv, { [CDI_ANN.podPhase]: 'Pending', [CDI_ANN.importPodName]: importerPodName(dv) });
    patchStatus(rt, dv, (st) => {
      st.phase = 'ImportScheduled';
      st.progress = 'N/A';
    });
    recordEvent(rt.store, dv, 'ImportScheduled', `Import into ${name} scheduled`, { component: CDI });
    return;
  }
  if (phase === 'ImportScheduled') {
    // The kubelet pulls the importer image and starts it; the import begins once the pod runs.
    const pod = rt.get(S.pods, ns, importerPodName(dv));
    if (!pod) {
      // The importer pod was deleted from under us: CDI recreates it.
      patchStatus(rt, dv, (st) => {
        st.phase = 'PVCBound';
      });
      return;
    }
    if (status(pod).phase === 'Running') startImporter(rt, ns, name, source, probed);
    else whenNoKubelet(rt, pod);
    return;
  }
  if (phase === 'ImportInProgress' && !rt.hasTimer(`${id}:step`)) {
    // Resume after a restart of the sim (no timer survived): continue from the stored progress.
    if (probed.ok) rt.after(`${id}:step`, rt.between(1000, 2000), () => tick(rt, ns, name, source, probed));
    else
      rt.after(`${id}:step`, BACKOFF_MS(Number(status(dv).restartCount) || 1), () =>
        startImporter(rt, ns, name, source, probed),
      );
  }
}

function startImporter(rt: Runtime, ns: string, name: string, source: Source, probed: SourceProbe): void {
  const dv = rt.get(S.dataVolumes, ns, name);
  if (!dv || dv.metadata.deletionTimestamp) return;
  const pod = importerPodName(dv);
  const podObj = rt.get(S.pods, ns, pod);
  if (!podObj) {
    // The importer pod was deleted from under us: CDI recreates it from ImportScheduled.
    patchStatus(rt, dv, (st) => {
      st.phase = 'PVCBound';
    });
    return;
  }
  if (!isContainerRunning(podObj)) setPodRunning(rt, ns, pod);
  annotatePvc(rt, dv, {
    [CDI_ANN.podPhase]: 'Running',
    [CDI_ANN.podRunning]: 'true',
    [CDI_ANN.podRunningReason]: 'Pod is running',
  });
  const firstStart = status(dv).phase !== 'ImportInProgress';
  patchStatus(rt, dv, (st) => {
    st.phase = 'ImportInProgress';
    st.progress = probed.ok ? (firstStart ? formatProgress(0) : st.progress) : 'N/A';
    setCondition(st, { type: 'Running', status: 'True', reason: 'Pod is running' }, { heartbeat: true });
  });
  if (firstStart) recordEvent(rt.store, dv, 'ImportInProgress', `Import into ${name} in progress`, { component: CDI });
  const endpoint = source.kind === 'http' || source.kind === 'registry' ? source.url : '';
  appendPodLog(rt, ns, pod, [
    `I1130 importer.go:104] Starting importer`,
    `I1130 importer.go:171] begin import process`,
    endpoint
      ? `I1130 data-processor.go:348] Calculating available size`
      : 'I1130 importer.go:300] Creating blank disk image',
  ]);
  const id = objId('dv', dv);
  if (probed.ok) {
    rt.after(`${id}:step`, rt.between(1000, 2000), () => tick(rt, ns, name, source, probed));
    return;
  }
  // The importer gets as far as connecting, then exits non-zero; the kubelet restarts it with back-off.
  rt.after(`${id}:step`, rt.between(1000, 2000), () => {
    const current = rt.get(S.dataVolumes, ns, name);
    if (!current || current.metadata.deletionTimestamp) return;
    const restarts = (Number(status(current).restartCount) || 0) + 1;
    appendPodLog(rt, ns, pod, [`E1130 importer.go:218] ${probed.message}`]);
    setPodTerminated(rt, ns, pod, { exitCode: 1, reason: 'Error', message: probed.message, restarting: true });
    annotatePvc(rt, current, {
      [CDI_ANN.podPhase]: 'Running',
      [CDI_ANN.podRestarts]: String(restarts),
      [CDI_ANN.podRunning]: 'false',
      [CDI_ANN.podRunningReason]: 'Error',
      [CDI_ANN.podRunningMessage]: probed.message,
    });
    patchStatus(rt, current, (st) => {
      st.restartCount = restarts;
      setCondition(
        st,
        { type: 'Running', status: 'False', reason: 'Error', message: probed.message },
        { heartbeat: true },
      );
    });
    recordEvent(rt.store, current, 'Error', `Unable to process data: ${probed.message}`, {
      type: 'Warning',
      component: CDI,
    });
    rt.after(`${id}:step`, BACKOFF_MS(restarts), () => startImporter(rt, ns, name, source, probed));
  });
}

function parseProgress(value: unknown): number {
  const n = typeof value === 'string' ? Number.parseFloat(value) : NaN;
  return Number.isFinite(n) ? n / 100 : 0;
}

function tick(rt: Runtime, ns: string, name: string, source: Source, probed: SourceProbe): void {
  const dv = rt.get(S.dataVolumes, ns, name);
  if (!dv || dv.metadata.deletionTimestamp || status(dv).phase !== 'ImportInProgress') return;
  const step = rt.between(1000, 2000);
  const total = importSeconds(source, probed, rt.ctx.settings.importMiBps) * 1000;
  const next = Math.min(1, parseProgress(status(dv).progress) + step / total);
  if (next >= 1) {
    completeImport(rt, dv, probed);
    return;
  }
  patchStatus(rt, dv, (st) => {
    st.progress = formatProgress(next);
  });
  rt.after(`${objId('dv', dv)}:step`, step, () => tick(rt, ns, name, source, probed));
}

function completeImport(rt: Runtime, dv: KObject, probed: SourceProbe): void {
  const ns = dv.metadata.namespace ?? 'default';
  const name = dv.metadata.name;
  const pod = importerPodName(dv);
  appendPodLog(rt, ns, pod, [
    'I1130 data-processor.go:253] Validating image',
    'I1130 importer.go:230] Import Complete',
  ]);
  setPodTerminated(rt, ns, pod, { exitCode: 0, reason: 'Completed', message: 'Import Complete' });
  annotatePvc(rt, dv, {
    [CDI_ANN.podPhase]: 'Succeeded',
    [CDI_ANN.podRunning]: 'false',
    [CDI_ANN.podRunningReason]: 'Completed',
    [CDI_ANN.podRunningMessage]: 'Import Complete',
    [DISK_CONTENT_ANNOTATION]: probed.ok ? probed.content : 'blank',
  });
  patchStatus(rt, dv, (st) => {
    st.phase = 'Succeeded';
    st.progress = formatProgress(1);
    setCondition(st, { type: 'Ready', status: 'True' }, { heartbeat: true });
    setCondition(
      st,
      { type: 'Running', status: 'False', reason: 'Completed', message: 'Import Complete' },
      { heartbeat: true },
    );
  });
  recordEvent(rt.store, dv, 'ImportSucceeded', `Successfully imported into PVC ${name}`, { component: CDI });
  if (dv.metadata.annotations?.['cdi.kubevirt.io/storage.pod.retainAfterCompletion'] !== 'true') deletePod(rt, ns, pod);
}

// --- clone (pvc source) ------------------------------------------------------------------------------------

function runClone(rt: Runtime, dv: KObject, source: { namespace: string; name: string }): void {
  const ns = dv.metadata.namespace ?? 'default';
  const name = dv.metadata.name;
  const id = objId('dv', dv);
  const phase = status(dv).phase;
  const from = `${source.namespace}/${source.name}`;
  if (phase === 'Pending' || phase === 'WaitForFirstConsumer' || phase === 'PVCBound') {
    patchStatus(rt, dv, (st) => {
      st.phase = 'CloneScheduled';
      st.progress = 'N/A';
    });
    recordEvent(rt.store, dv, 'CloneScheduled', `Cloning from ${from} into ${ns}/${name} scheduled`, {
      component: 'datavolume-pvc-clone-controller',
    });
    return;
  }
  if (rt.hasTimer(`${id}:step`)) return;
  // A CSI clone copies at storage speed: 3–15 s in total whatever the size.
  const total = 3000 + stableFraction(`${from}>${ns}/${name}`) * 12000;
  if (phase === 'CloneScheduled') {
    rt.after(`${id}:step`, rt.between(500, 1500), () => {
      const current = rt.get(S.dataVolumes, ns, name);
      if (!current || status(current).phase !== 'CloneScheduled') return;
      const user = ns !== source.namespace ? sourceUser(rt, source) : undefined;
      if (user) {
        // A cross-namespace clone is host-assisted: CDI reads the source through a pod of its own, which it only
        // starts once nothing else has the claim mounted. Checked again until the source is free.
        recordEvent(rt.store, current, 'CloneSourceInUse', `pod ${user} using PersistentVolumeClaim ${source.name}`, {
          type: 'Warning',
          component: 'datavolume-pvc-clone-controller',
        });
        rt.after(`${id}:step`, 2000, () => runClone(rt, rt.get(S.dataVolumes, ns, name) ?? current, source));
        return;
      }
      patchStatus(rt, current, (st) => {
        st.phase = 'CloneInProgress';
        st.progress = formatProgress(0);
        setCondition(st, { type: 'Running', status: 'True', reason: 'Populator is running' }, { heartbeat: true });
      });
      recordEvent(rt.store, current, 'CloneInProgress', `Cloning from ${from} into ${ns}/${name} in progress`, {
        component: 'datavolume-pvc-clone-controller',
      });
    });
    return;
  }
  if (phase !== 'CloneInProgress') return;
  rt.after(`${id}:step`, rt.between(1000, 2000), () => {
    const current = rt.get(S.dataVolumes, ns, name);
    if (!current || status(current).phase !== 'CloneInProgress') return;
    const next = parseProgress(status(current).progress) + 1500 / total;
    if (next < 1) {
      patchStatus(rt, current, (st) => {
        st.progress = formatProgress(next);
      });
      return;
    }
    const sourcePvc = rt.get(S.pvcs, source.namespace, source.name);
    const copied = sourcePvc?.metadata.annotations ?? {};
    annotatePvc(rt, current, {
      [DISK_CONTENT_ANNOTATION]: copied[DISK_CONTENT_ANNOTATION] ?? `clone:${from}`,
      ...(copied[EXPORT_BYTES_ANNOTATION] ? { [EXPORT_BYTES_ANNOTATION]: copied[EXPORT_BYTES_ANNOTATION] } : {}),
    });
    patchStatus(rt, current, (st) => {
      st.phase = 'Succeeded';
      st.progress = formatProgress(1);
      setCondition(st, { type: 'Ready', status: 'True' }, { heartbeat: true });
      setCondition(
        st,
        { type: 'Running', status: 'False', reason: 'Completed', message: 'Clone Complete' },
        { heartbeat: true },
      );
    });
    recordEvent(rt.store, current, 'CloneSucceeded', `Successfully cloned from ${from} into ${ns}/${name}`, {
      component: 'datavolume-pvc-clone-controller',
    });
  });
}

/** `<namespace>/<pod>` of a running pod (a VMI counts as its virt-launcher pod) that has the source claim mounted. */
function sourceUser(rt: Runtime, source: { namespace: string; name: string }): string | undefined {
  const done = (o: KObject) => status(o).phase === 'Succeeded' || status(o).phase === 'Failed';
  for (const pod of rt.list(S.pods, source.namespace))
    if (!done(pod) && podClaims(pod).includes(source.name)) return `${source.namespace}/${pod.metadata.name}`;
  for (const vmi of rt.list(S.vmis, source.namespace))
    if (!done(vmi) && !vmi.metadata.deletionTimestamp && vmiClaims(vmi).includes(source.name))
      return `${source.namespace}/virt-launcher-${vmi.metadata.name}`;
  return undefined;
}

// --- upload ------------------------------------------------------------------------------------------------

/** UploadScheduled → UploadReady; the upload server pod then waits for data through the upload proxy. */
function runUpload(rt: Runtime, dv: KObject): void {
  const ns = dv.metadata.namespace ?? 'default';
  const name = dv.metadata.name;
  const phase = status(dv).phase;
  const pod = `cdi-upload-${name}`;
  if (phase === 'Pending' || phase === 'WaitForFirstConsumer' || phase === 'PVCBound') {
    const pvc = rt.get(S.pvcs, ns, name);
    if (!pvc) return;
    ensurePod(rt, {
      namespace: ns,
      name: pod,
      driver: 'cdi-upload',
      labels: { app: 'containerized-data-importer', 'cdi.kubevirt.io': 'cdi-upload-server' },
      owner: ownerRef(pvc),
      podSpec: {
        restartPolicy: 'OnFailure',
        containers: [{ name: 'cdi-upload-server', image: UPLOAD_IMAGE, args: ['-v=1'] }],
        volumes: [{ name: 'cdi-data-vol', persistentVolumeClaim: { claimName: name } }],
      },
    });
    annotatePvc(rt, dv, { [CDI_ANN.podPhase]: 'Pending' });
    patchStatus(rt, dv, (st) => {
      st.phase = 'UploadScheduled';
    });
    recordEvent(rt.store, dv, 'UploadScheduled', `Upload Scheduled`, { component: 'datavolume-upload-controller' });
    return;
  }
  if (phase !== 'UploadScheduled') return;
  const podObj = rt.get(S.pods, ns, pod);
  if (!podObj) {
    patchStatus(rt, dv, (st) => {
      st.phase = 'PVCBound';
    });
    return;
  }
  if (status(podObj).phase !== 'Running') {
    whenNoKubelet(rt, podObj);
    return;
  }
  annotatePvc(rt, dv, { [CDI_ANN.podPhase]: 'Running', [CDI_ANN.uploadReady]: 'true' });
  patchStatus(rt, dv, (st) => {
    st.phase = 'UploadReady';
    setCondition(st, { type: 'Running', status: 'True', reason: 'Pod is running' }, { heartbeat: true });
  });
  recordEvent(rt.store, dv, 'UploadReady', 'Upload ready', { component: 'datavolume-upload-controller' });
}
