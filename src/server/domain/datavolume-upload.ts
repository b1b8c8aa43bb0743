/**
 * Uploading an image into the library, the way `virtctl image-upload` does it: a DataVolume with
 * `source.upload: {}`, wait for CDI to say `UploadReady`, ask for an `UploadTokenRequest`, then the bytes go to
 * CDI's upload proxy (whose address CDIConfig `config` publishes in `status.uploadProxyURL`). The HTTP layer relays
 * the body (http/datavolume-upload-route.ts); this module makes the cluster objects and follows the outcome.
 */
import { CorralError } from '../errors';
import type { ChangeEvent, KObject } from './cluster-port';
import { LABEL_IMAGE } from './datavolumes';
import type { Caller, DomainDeps } from './deps';
import { LABEL_MANAGED_BY } from './labels';
import { quantityToNumber } from './quantity';
import type { TaskHandle } from './tasks';
import { asDict } from './vm-facts';

/** Set on an upload DataVolume whose bytes did not all arrive; the image row shows it as the error. */
export const ANNOTATION_UPLOAD_ERROR = 'corral.dev/upload-error';

export interface UploadRequest {
  namespace: string;
  name: string;
  /** The DataVolume's size, like `10Gi`. */
  size: string;
  contentType: 'disk' | 'iso';
  /** The file's length in bytes (the request's Content-Length). */
  bytes: number;
  /** Set on the DataVolume beside Corral's own (the PVE volume id an upload through /api2/json answers to). */
  annotations?: Record<string, string>;
}

export interface UploadSession {
  /** The upload proxy's sync endpoint. */
  url: string;
  token: string;
  task: TaskHandle;
}

export function buildUploadDataVolume(req: UploadRequest): KObject {
  return {
    apiVersion: 'cdi.kubevirt.io/v1beta1',
    kind: 'DataVolume',
    metadata: {
      name: req.name,
      namespace: req.namespace,
      labels: { [LABEL_IMAGE]: req.contentType, [LABEL_MANAGED_BY]: 'corral' },
      annotations: { ...req.annotations, 'cdi.kubevirt.io/storage.bind.immediate.requested': 'true' },
    },
    // An ISO is a disk image too (CDI stores it as the volume's disk.img, a VM mounts it as a cdrom): contentType
    // kubevirt for both. `archive` would mean a tar whose files CDI unpacks into a filesystem, which refuses an ISO
    // and which neither a VM nor a clone into a kubevirt DataVolume can use [src: CDI pkg/importer/
    // upload-datasource.go, pkg/controller/clone/common.go ValidateContentTypes]. The image label tells them apart.
    spec: {
      contentType: 'kubevirt',
      source: { upload: {} },
      storage: { resources: { requests: { storage: req.size } } },
    },
  };
}

/** `cdi-uploadproxy.example.com` (CDI publishes a host) or a full URL → the proxy's base URL. */
export function uploadProxyBase(cdiConfig: KObject | undefined): string {
  const raw = asDict(cdiConfig?.status).uploadProxyURL;
  if (typeof raw !== 'string' || !raw.trim()) {
    throw new CorralError(
      'NOT_IMPLEMENTED',
      'CDI publishes no upload proxy URL (CDIConfig config status.uploadProxyURL); set spec.uploadProxyURLOverride on it',
    );
  }
  const base = /^https?:\/\//i.test(raw) ? raw.trim() : `https://${raw.trim()}`;
  return base.replace(/\/+$/, '');
}

/** Creates the DataVolume, waits until CDI's upload server is ready and gets a token for it. */
export async function openUpload(
  deps: DomainDeps,
  caller: Caller,
  req: UploadRequest,
  signal: AbortSignal,
): Promise<UploadSession> {
  const target = `${req.namespace}/${req.name}`;
  const existing = deps.cluster.cache.get('DataVolume', req.namespace, req.name);
  if (existing) requireRetryable(deps, existing, req);
  if (!(await deps.cluster.fetch('Namespace', undefined, req.namespace)))
    throw new CorralError('BAD_REQUEST', `namespace: no namespace '${req.namespace}'`);
  const proxy = uploadProxyBase(await deps.cluster.fetch('CDIConfig', undefined, 'config'));
  const task = deps.journal.start('upload', target, caller.identity.login);
  try {
    if (existing) {
      // CDI's upload server goes back to waiting after a cut-off body: the same DataVolume takes the file again.
      await deps.cluster.patch('DataVolume', req.namespace, req.name, {
        metadata: { annotations: { [ANNOTATION_UPLOAD_ERROR]: null } },
      });
      task.log(`uploading ${req.bytes} bytes again into DataVolume ${target}, left not Succeeded by an earlier upload`);
    } else {
      await deps.cluster.create('DataVolume', buildUploadDataVolume(req));
      task.log(`uploading ${req.bytes} bytes into DataVolume ${target} (${req.size}, ${req.contentType})`);
    }
    await uploadReady(deps, req.namespace, req.name, signal);
    task.log('CDI upload server ready');
    const granted = await deps.cluster.create('UploadTokenRequest', {
      apiVersion: 'upload.cdi.kubevirt.io/v1beta1',
      kind: 'UploadTokenRequest',
      metadata: { name: req.name, namespace: req.namespace },
      spec: { pvcName: req.name },
    });
    const token = asDict(granted.status).token;
    if (typeof token !== 'string' || !token) throw new CorralError('BAD_GATEWAY', 'CDI returned no upload token');
    return { url: `${proxy}/v1beta1/upload`, token, task };
  } catch (err) {
    task.fail(err);
    await recordUploadError(deps, req.namespace, req.name, `upload never started: ${messageOf(err)}`);
    throw err;
  }
}

/**
 * A second upload under a name that exists is a retry of an upload that did not finish (cut off, cancelled): allowed
 * into the same DataVolume when it is an upload the library made, is waiting for bytes (`UploadReady`), no upload
 * into it is running, and the file fits. Anything else is a 409 that says which of these it is not.
 */
function requireRetryable(deps: DomainDeps, dv: KObject, req: UploadRequest): void {
  const target = `${req.namespace}/${req.name}`;
  const phase = String(asDict(dv.status).phase ?? 'Pending');
  const isUpload = asDict(asDict(dv.spec).source).upload !== undefined && !!dv.metadata.labels?.[LABEL_IMAGE];
  if (!isUpload || phase === 'Succeeded' || dv.metadata.deletionTimestamp)
    throw new CorralError(
      'CONFLICT',
      `DataVolume ${target} already exists (${dv.metadata.deletionTimestamp ? 'being deleted' : phase}); pick another name or delete it first`,
    );
  const running = deps.journal.latest('upload', target);
  if (running?.status === 'running')
    throw new CorralError('CONFLICT', `an upload into DataVolume ${target} is already running (task ${running.id})`);
  if (phase !== 'UploadReady')
    throw new CorralError(
      'CONFLICT',
      `DataVolume ${target} is ${phase}, not UploadReady: CDI's upload server is not waiting for bytes; try again shortly or delete it`,
    );
  const held = asDict(asDict(asDict(dv.spec).storage).resources);
  const size = String(asDict(held.requests).storage ?? '');
  if (size && req.bytes > quantityToNumber(size))
    throw new CorralError(
      'CONFLICT',
      `DataVolume ${target} holds ${size}, too small for this file (${req.bytes} bytes); delete it and upload again`,
    );
  // Made for an ISO: the image label (contentType archive on DataVolumes an earlier Corral made).
  const labelled = dv.metadata.labels?.[LABEL_IMAGE];
  const kind = labelled === 'iso' || (!labelled && asDict(dv.spec).contentType === 'archive') ? 'iso' : 'disk';
  if (kind !== req.contentType)
    throw new CorralError(
      'CONFLICT',
      `DataVolume ${target} was made for ${kind === 'iso' ? 'an ISO' : 'a disk image'}, not ${req.contentType === 'iso' ? 'an ISO' : 'a disk image'}; delete it first`,
    );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Resolves once the DataVolume is `UploadReady`; rejects when it fails, vanishes, the wait times out or is aborted. */
function uploadReady(deps: DomainDeps, namespace: string, name: string, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const finish = (err?: Error) => {
      unsubscribe();
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve();
    };
    const look = (dv: KObject | undefined) => {
      if (!dv) return finish(new CorralError('CONFLICT', `DataVolume ${namespace}/${name} was deleted`));
      const phase = asDict(dv.status).phase;
      if (phase === 'UploadReady') finish();
      else if (phase === 'Failed' || phase === 'Succeeded')
        finish(new CorralError('CONFLICT', `DataVolume ${namespace}/${name} is ${String(phase)}, not UploadReady`));
    };
    const onAbort = () => finish(new CorralError('CONFLICT', 'the client disconnected; upload stopped'));
    signal.addEventListener('abort', onAbort);
    const unsubscribe = deps.cluster.onChange((e: ChangeEvent) => {
      if (e.kind !== 'DataVolume' || e.object.metadata.namespace !== namespace || e.object.metadata.name !== name)
        return;
      look(e.type === 'DELETED' ? undefined : e.object);
    });
    const timer = setTimeout(
      () => finish(new CorralError('TIMEOUT', `DataVolume ${namespace}/${name} was not UploadReady in time`)),
      deps.config.waitTimeoutMs,
    );
    const now = deps.cluster.cache.get('DataVolume', namespace, name);
    if (now) look(now);
  });
}

/** Notes on the DataVolume why it is not Succeeded (best effort: it may be gone). */
export async function recordUploadError(deps: DomainDeps, namespace: string, name: string, why: string) {
  await deps.cluster
    .patch('DataVolume', namespace, name, { metadata: { annotations: { [ANNOTATION_UPLOAD_ERROR]: why } } })
    .catch(() => undefined);
}
