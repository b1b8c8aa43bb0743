/**
 * `POST /api/datavolumes/{namespace}/{name}/upload?size=10Gi&contentType=iso|disk` with the file as the raw body
 * (`Content-Type: application/octet-stream`, `Content-Length` required): uploads an image into the library through
 * CDI's upload proxy. A raw route beside the generated REST routes (tRPC reads whole bodies; this one streams):
 * - the request's body limit is raised for this route only, to the declared length, which must fit `size`;
 * - the body is piped to the upload proxy with backpressure (`pipeline`): nothing is staged in memory or on disk;
 * - a client that goes away aborts the upstream request, so CDI keeps the DataVolume `UploadReady` (never
 *   `Succeeded` with half an image) and Corral notes on it why (`corral.dev/upload-error`, the row's `error`); a
 *   later POST under the same name sends the file into that DataVolume again (datavolume-upload.ts says when);
 * Admins only, never cross-site, like every other write.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform } from 'node:stream';
import { z } from 'zod';
import { CorralError, describeError, httpStatusOf, redactAddresses } from '../errors';
import type { CorralServices } from '../domain/services';
import { openUpload, recordUploadError, type UploadSession } from '../domain/datavolume-upload';
import { registryOf } from '../domain/registry';
import { normalizeSize, quantityToNumber } from '../domain/quantity';
import { crossSiteRefusal } from '../http-guards';
import { identityFor } from '../identity-http';
import { DiskSize, InCluster, K8sName, Namespace } from '../schemas/common';
import { exemptFromRequestTimeout } from './limits';
import { parseRawRouteInput } from './raw-route-input';
import { scavengeWhileRelaying } from './stream-gc';
import { postToUploadProxy } from './upload-proxy';

const ROUTE = /^\/datavolumes\/([^/]+)\/([^/]+)\/upload\/?$/i;

const UploadTarget = z.strictObject({ namespace: Namespace, name: K8sName });
export const UploadQuery = z.strictObject({
  size: DiskSize,
  contentType: z.enum(['disk', 'iso']).optional(),
  ...InCluster,
});

/** The DataVolume the request names, when it is a POST of the upload route (`pathname` without the /api prefix). */
export function matchUploadRoute(method: string, pathname: string): { namespace: string; name: string } | undefined {
  if (method !== 'POST') return undefined;
  const m = ROUTE.exec(pathname);
  return m ? { namespace: m[1] ?? '', name: m[2] ?? '' } : undefined;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // The body may not have been read: close the connection with the answer instead of draining gigabytes.
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store', Connection: 'close' });
  res.end(JSON.stringify(body));
}

function parseRequest(params: { namespace: string; name: string }, search: URLSearchParams, req: IncomingMessage) {
  const { path: target, query: q } = parseRawRouteInput(params, search, UploadTarget, UploadQuery);
  const type = (String(req.headers['content-type'] ?? '').split(';')[0] ?? '').trim().toLowerCase();
  if (type !== 'application/octet-stream')
    throw new CorralError('BAD_REQUEST', 'content-type: the file must be sent as application/octet-stream');
  if (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] === undefined)
    throw new CorralError('BAD_REQUEST', 'content-length: required (the file size, in bytes)');
  const bytes = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(bytes) || bytes < 1)
    throw new CorralError('BAD_REQUEST', 'content-length: the file is empty');
  const size = normalizeSize(q.size);
  if (bytes > quantityToNumber(size))
    throw new CorralError('BAD_REQUEST', `size: the file (${bytes} bytes) does not fit in ${q.size}`);
  return { ...target, size, contentType: q.contentType ?? 'iso', bytes, context: q.context };
}

export async function handleDataVolumeUpload(
  defaultServices: CorralServices,
  req: IncomingMessage,
  res: ServerResponse,
  params: { namespace: string; name: string },
  search: URLSearchParams,
): Promise<void> {
  const identity = identityFor(req, defaultServices);
  let services = defaultServices;
  const message = (err: unknown) => (identity.admin ? describeError(err) : redactAddresses(describeError(err)));
  const ac = new AbortController();
  let done = false;
  req.on('aborted', () => ac.abort());
  res.on('close', () => {
    if (!done) ac.abort();
  });
  let session: UploadSession | undefined;
  let target: { namespace: string; name: string } | undefined;
  let sent = 0;
  const socket = req.socket;
  const idleMs = socket.timeout;
  try {
    const crossSite = crossSiteRefusal({ ...req.headers, 'content-type': 'application/json' });
    if (crossSite) throw new CorralError('FORBIDDEN', crossSite);
    if (!identity.admin)
      throw new CorralError(
        'FORBIDDEN',
        identity.readOnlyReason ?? `${identity.login} is read-only: only logins in CORRAL_ADMINS may upload images`,
      );
    const { context, ...input } = parseRequest(params, search, req);
    // `?context=` picks the served cluster, as every tRPC route's `context` does (404 naming an unknown one).
    services = registryOf(defaultServices).get(context);
    target = input;
    // Bytes arrive at the client's pace (a browser on a slow link): no idle cut or request time-out while the upload
    // runs.
    socket.setTimeout(0);
    exemptFromRequestTimeout(req);
    session = await openUpload(services.deps, { identity }, input, ac.signal);
    const task = session.task;
    let reported = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, next) {
        sent += chunk.length;
        const pct = Math.floor((sent / input.bytes) * 100);
        if (pct >= reported + 2) task.progress((reported = pct));
        next(null, chunk);
      },
    });
    meter.on('data', scavengeWhileRelaying());
    req.pipe(meter);
    const answer = await postToUploadProxy(session, meter, { bytes: input.bytes, signal: ac.signal });
    if (answer.status !== 200)
      throw new CorralError(
        answer.status === 409 ? 'CONFLICT' : 'BAD_GATEWAY',
        `CDI's upload proxy answered ${answer.status}: ${answer.text}`,
      );
    done = true;
    task.done(`uploaded ${sent} bytes into ${input.namespace}/${input.name}`);
    sendJson(res, 200, { name: input.name, namespace: input.namespace, task: task.id, bytes: sent });
  } catch (err) {
    done = true;
    const aborted = ac.signal.aborted;
    const why = aborted
      ? `upload cut off after ${sent} bytes: the client disconnected; upload it again under the same name, or delete it`
      : `upload failed after ${sent} bytes: ${describeError(err)}`;
    if (session) {
      session.task.fail(new CorralError('CONFLICT', why));
      if (target) await recordUploadError(services.deps, target.namespace, target.name, why);
    }
    if (aborted) {
      if (!res.destroyed) res.destroy();
      return;
    }
    if (err instanceof CorralError) sendJson(res, httpStatusOf[err.code], { error: message(err) });
    else {
      console.error('[corral] upload failed:', err);
      sendJson(res, 500, { error: message(err) });
    }
  } finally {
    if (idleMs !== undefined && !socket.destroyed) socket.setTimeout(idleMs);
  }
}
