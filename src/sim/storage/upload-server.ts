/**
 * CDI's upload path: `UploadTokenRequest` (upload.cdi.kubevirt.io/v1beta1, create only) hands out a token for one
 * PVC, and the upload proxy (`POST|PUT /v1beta1/upload`, `Authorization: Bearer <token>`) streams the request body
 * into the volume. The embedded cluster keeps uploaded bytes in a file per claim under a directory of its own
 * (the "disk" behind the volume); the export server then serves exactly those bytes. A body that is cut off
 * leaves the DataVolume `UploadReady` and the partial file is removed, as CDI's upload server restarts and waits.
 *
 * A claim of contentType `archive` takes a tar instead: the proxy sends an upload to `/v1beta1/upload` on to the
 * upload server's archive path by the claim's content type (another value is refused with a 503), and CDI unpacks
 * the stream with `tar -xvC` into the filesystem (its format readers take off a gzip layer first) [src: CDI
 * pkg/uploadproxy/uploadproxy.go resolveUploadPath, pkg/uploadserver/uploadserver.go uploadArchiveHandler,
 * pkg/importer/upload-datasource.go, pkg/util/util.go UnArchiveTar]. Here the tar is kept as the claim's files (an
 * export then serves exactly them); a body that is not a tar fails the upload with a 500 and leaves the DataVolume
 * `UploadReady`. A chunked body without Content-Length is taken like any other, as Go's net/http server does.
 */
import { randomBytes, createHash } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  createWriteStream,
  mkdtempSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  unlinkSync,
} from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { recordEvent } from '../events.js';
import type { RawRoute, SimContext } from '../module.js';
import type { KObject } from '../store/types.js';
import { CDI_ANN, DISK_CONTENT_ANNOTATION, S, UPLOAD_FILE_ANNOTATION } from './keys.js';
import { appendPodLog, deletePod, setPodTerminated } from './pods.js';
import { requestedStorage } from './pvc-controller.js';
import type { Runtime } from './runtime.js';
import { formatProgress, rec, setCondition, spec, statusOf, storageBytes, str } from './util.js';
import { TarError } from './tar.js';
import { archiveFiles } from './volume-files.js';

export const UPLOAD_PROXY_PATH = '/v1beta1/upload';
const TOKEN_PATH =
  /^\/apis\/upload\.cdi\.kubevirt\.io\/v1beta1\/namespaces\/([a-z0-9][a-z0-9-]*)\/uploadtokenrequests\/?$/;
/** CDI's upload tokens live five minutes; an upload that started keeps going. */
const TOKEN_TTL_MS = 5 * 60_000;
const COMPONENT = 'datavolume-upload-controller';

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function statusError(res: ServerResponse, code: number, reason: string, message: string): void {
  sendJson(res, code, { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > 64 * 1024) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
}

export class UploadServer {
  private dir: string | undefined;
  private readonly tokens = new Map<string, { namespace: string; pvc: string; expires: number }>();
  private readonly busy = new Set<string>();

  constructor(private readonly runtime: () => Runtime | undefined) {}

  /**
   * CDI's operator publishes where its upload proxy listens in CDIConfig `config` (`status.uploadProxyURL`); here
   * the proxy is on the apiserver's own address.
   */
  publish(rt: Runtime): void {
    const url = rt.ctx.baseUrl();
    if (!rt.serves(S.cdiConfigs) || !url) return;
    if (!rt.get(S.cdiConfigs, undefined, 'config')) {
      rt.store.create(S.cdiConfigs, {
        apiVersion: 'cdi.kubevirt.io/v1beta1',
        kind: 'CDIConfig',
        metadata: { name: 'config' },
        spec: {},
        status: { uploadProxyURL: url },
      });
      return;
    }
    rt.store.mutate(S.cdiConfigs, undefined, 'config', (o) => {
      const st = statusOf(o);
      if (st.uploadProxyURL === url) return false;
      st.uploadProxyURL = url;
    });
  }

  /** Removes an uploaded claim's file when the claim goes. */
  forget(claim: KObject): void {
    const file = claim.metadata.annotations?.[UPLOAD_FILE_ANNOTATION];
    if (file && this.dir && file.startsWith(this.dir)) rmSync(file, { force: true });
  }

  stop(): void {
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
    this.tokens.clear();
  }

  private directory(): string {
    this.dir ??= mkdtempSync(join(tmpdir(), 'corral-sim-volumes-'));
    return this.dir;
  }

  readonly tokenRoute: RawRoute = {
    matches: (url, method) => method === 'POST' && TOKEN_PATH.test(url.pathname),
    handle: async (ctx, req, res, url) => {
      const namespace = TOKEN_PATH.exec(url.pathname)![1]!;
      let body: Record<string, unknown>;
      try {
        body = rec(await readJson(req));
      } catch (err) {
        return statusError(res, 400, 'BadRequest', `invalid UploadTokenRequest: ${(err as Error).message}`);
      }
      const pvcName = str(rec(body.spec).pvcName);
      if (!pvcName) return statusError(res, 422, 'Invalid', 'UploadTokenRequest.spec.pvcName: Required value');
      if (!ctx.store.get(S.namespaces, undefined, namespace))
        return statusError(res, 404, 'NotFound', `namespaces "${namespace}" not found`);
      const token = randomBytes(24).toString('base64url');
      this.tokens.set(token, { namespace, pvc: pvcName, expires: Date.now() + TOKEN_TTL_MS });
      sendJson(res, 201, {
        apiVersion: 'upload.cdi.kubevirt.io/v1beta1',
        kind: 'UploadTokenRequest',
        metadata: { ...rec(body.metadata), namespace, creationTimestamp: null },
        spec: { pvcName },
        status: { token },
      });
    },
  };

  readonly proxyRoute: RawRoute = {
    matches: (url, method) => (method === 'POST' || method === 'PUT') && url.pathname === UPLOAD_PROXY_PATH,
    handle: (ctx, req, res) => this.upload(ctx, req, res),
  };

  private async upload(ctx: SimContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const auth = /^Bearer (.+)$/.exec(req.headers.authorization ?? '');
    const grant = auth ? this.tokens.get(auth[1]!) : undefined;
    if (!grant || grant.expires < Date.now()) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('Unauthorized\n');
      return;
    }
    const { namespace, pvc } = grant;
    const claim = ctx.store.get(S.pvcs, namespace, pvc);
    const dv = ctx.store.get(S.dataVolumes, namespace, pvc);
    const rt = this.runtime();
    if (!claim || !dv || !rt || claim.metadata.annotations?.[CDI_ANN.uploadReady] !== 'true') {
      res.writeHead(503, { 'content-type': 'text/plain' }).end(`upload server for ${namespace}/${pvc} is not ready\n`);
      return;
    }
    const contentType = claim.metadata.annotations?.[CDI_ANN.contentType] ?? '';
    if (!['', 'kubevirt', 'archive'].includes(contentType)) {
      res
        .writeHead(503, { 'content-type': 'text/plain' })
        .end(`rejecting upload request for PVC ${pvc} - upload content-type ${contentType} is invalid`);
      return;
    }
    const key = `${namespace}/${pvc}`;
    if (this.busy.has(key)) {
      res.writeHead(409, { 'content-type': 'text/plain' }).end('an upload to this volume is already in progress\n');
      return;
    }
    const limit = storageBytes(requestedStorage(claim)) ?? Number.MAX_SAFE_INTEGER;
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (Number.isFinite(declared) && declared > limit) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end(tooLarge(declared, limit));
      return;
    }
    this.busy.add(key);
    const podName = `cdi-upload-${pvc}`;
    const archive = contentType === 'archive';
    const final = join(this.directory(), `${namespace}_${pvc}_${claim.metadata.uid ?? ''}.${archive ? 'tar' : 'img'}`);
    const partial = `${final}.partial`;
    const hash = createHash('sha256');
    let bytes = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        if (bytes > limit) return done(new RangeError(tooLarge(bytes, limit)));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    appendPodLog(rt, namespace, podName, ['I1201 uploadserver.go:389] Content type header is "" — receiving upload']);
    try {
      await pipeline(req, meter, createWriteStream(partial));
    } catch (err) {
      rmSync(partial, { force: true });
      this.busy.delete(key);
      const message = err instanceof RangeError ? err.message : 'upload interrupted: the request body ended early';
      appendPodLog(rt, namespace, podName, [`E1201 uploadserver.go:402] Saving stream failed: ${message}`]);
      if (!res.headersSent && !res.destroyed)
        res.writeHead(err instanceof RangeError ? 400 : 500, { 'content-type': 'text/plain' }).end(`${message}\n`);
      return;
    }
    let members = 0;
    if (archive) {
      try {
        members = await unpack(partial, limit);
      } catch (err) {
        rmSync(partial, { force: true });
        this.busy.delete(key);
        const message = `unable to untar files from endpoint: ${(err as Error).message}`;
        appendPodLog(rt, namespace, podName, [`E1201 uploadserver.go:402] Saving stream failed: ${message}`]);
        res.writeHead(500, { 'content-type': 'text/plain' }).end(`Saving stream failed: ${message}\n`);
        return;
      }
    }
    this.busy.delete(key);
    const current = ctx.store.get(S.pvcs, namespace, pvc);
    if (!current || current.metadata.uid !== claim.metadata.uid || current.metadata.deletionTimestamp) {
      unlinkSync(partial);
      res.writeHead(410, { 'content-type': 'text/plain' }).end('the volume was deleted during the upload\n');
      return;
    }
    renameSync(partial, final);
    const digest = hash.digest('hex');
    this.complete(
      rt,
      dv,
      final,
      archive ? `archive:sha256:${digest} (${members} entries)` : `upload:sha256:${digest} (${bytes} bytes)`,
      archive ? 'Wrote archive data' : 'Wrote data to /data/disk.img',
    );
    res.writeHead(200, { 'content-type': 'text/plain' }).end();
  }

  private complete(rt: Runtime, dv: KObject, file: string, content: string, wrote: string): void {
    const ns = dv.metadata.namespace ?? 'default';
    const name = dv.metadata.name;
    const pod = `cdi-upload-${name}`;
    appendPodLog(rt, ns, pod, [`I1201 uploadserver.go:420] ${wrote}`, 'Upload Complete']);
    setPodTerminated(rt, ns, pod, { exitCode: 0, reason: 'Completed', message: 'Upload Complete' });
    rt.store.mutate(S.pvcs, ns, name, (o) => {
      o.metadata.annotations = {
        ...o.metadata.annotations,
        [CDI_ANN.podPhase]: 'Succeeded',
        [CDI_ANN.uploadReady]: 'false',
        [CDI_ANN.podRunning]: 'false',
        [CDI_ANN.podRunningReason]: 'Completed',
        [CDI_ANN.podRunningMessage]: 'Upload Complete',
        [DISK_CONTENT_ANNOTATION]: content,
        [UPLOAD_FILE_ANNOTATION]: file,
      };
    });
    rt.store.mutate(S.dataVolumes, ns, name, (o) => {
      const st = statusOf(o);
      st.phase = 'Succeeded';
      st.progress = formatProgress(1);
      setCondition(st, { type: 'Ready', status: 'True' }, { heartbeat: true });
      setCondition(
        st,
        { type: 'Running', status: 'False', reason: 'Completed', message: 'Upload Complete' },
        { heartbeat: true },
      );
    });
    recordEvent(rt.store, dv, 'UploadSucceeded', `Successfully uploaded into PVC ${name}`, { component: COMPONENT });
    if (rec(spec(dv)).retainUploadPod !== true) deletePod(rt, ns, pod);
  }
}

/**
 * Makes the uploaded file at `path` a plain tar of the claim's files: a gzip layer is taken off (as CDI's format
 * readers do) and the tar is read through; resolves with its member count, rejects (TarError) when it is not one.
 */
async function unpack(path: string, limit: number): Promise<number> {
  const head = Buffer.alloc(2);
  const fd = openSync(path, 'r');
  try {
    readSync(fd, head, 0, 2, 0);
  } finally {
    closeSync(fd);
  }
  if (head[0] === 0x1f && head[1] === 0x8b) {
    let bytes = 0;
    const cap = new Transform({
      transform(chunk: Buffer, _enc, done) {
        bytes += chunk.length;
        done(bytes > limit ? new TarError('write error: No space left on device') : null, chunk);
      },
    });
    try {
      await pipeline(createReadStream(path), createGunzip(), cap, createWriteStream(`${path}.tar`));
    } catch (err) {
      rmSync(`${path}.tar`, { force: true });
      throw err instanceof TarError ? err : new TarError(`gzip: ${(err as Error).message}`);
    }
    renameSync(`${path}.tar`, path);
  }
  return archiveFiles(path).length;
}

function tooLarge(bytes: number, limit: number): string {
  return `image size ${bytes} is larger than the available storage ${limit}`;
}
