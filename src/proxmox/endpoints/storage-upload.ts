/**
 * PVE's storage upload, `POST /nodes/{node}/storage/{storage}/upload` (multipart: `content` then the file as
 * `filename`), mapped onto the image library's upload (domain/datavolume-upload.ts: a DataVolume with
 * `source.upload`, CDI's upload proxy):
 * - content `iso` → an ISO in the library (`local:iso/<file>`, what `ide2=local:iso/<file>,media=cdrom` attaches);
 * - content `import` (PVE 8.2+) → a disk image (`.raw`, `.qcow2`, `.vmdk`; CDI converts the latter two) listed as
 *   `local:import/<file>`, which `scsi0=<storage>:0,import-from=local:import/<file>` clones into a new VM's disk.
 * The file streams from the request to the upload proxy with backpressure (multipart.ts); nothing is staged. Like
 * PVE the call returns once the bytes are stored, with the UPID of the upload task.
 */
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { openUpload, recordUploadError, type UploadSession } from '@/server/domain/datavolume-upload';
import { exemptFromRequestTimeout } from '@/server/http/limits';
import { postToUploadProxy } from '@/server/http/upload-proxy';
import { corral } from '../errors';
import { boundaryOf, readMultipart } from '../multipart';
import { ANNOTATION_PVE_VOLUME, findStorage, importVolumes, type PveStorage } from '../storage-map';
import { ProxmoxError } from '../wire';
import { define, storageAcl, type EndpointContext, type Routes } from './context';
import { requireNode } from './nodes';
import { upid } from './qemu-common';

const UPLOAD_CONTENT = ['iso', 'import'] as const;
type UploadContent = (typeof UPLOAD_CONTENT)[number];
const IMPORT_FORMATS = ['raw', 'qcow2', 'vmdk'];

/** `Debian 12.iso` → `debian-12-iso`: a DNS-1123 name for the DataVolume (the ISO list matches it back). */
export function claimForFile(filename: string): string {
  return filename
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
}

/** Checks the file name for the content type, as PVE does; answers the claim it becomes. */
function checkFile(content: UploadContent, filename: string): string {
  if (!filename || filename.includes('/') || filename.includes('\\') || filename.startsWith('.'))
    throw new ProxmoxError(400, `upload: invalid file name '${filename}'`, { filename: 'invalid file name' });
  const ext = filename.slice(filename.lastIndexOf('.') + 1).toLowerCase();
  if (content === 'iso' && !['iso', 'img'].includes(ext))
    throw new ProxmoxError(400, `upload: wrong file extension`, { filename: "an ISO must end in '.iso' or '.img'" });
  if (content === 'import' && !IMPORT_FORMATS.includes(ext))
    throw new ProxmoxError(400, `upload: wrong file extension`, {
      filename: `an import image must end in ${IMPORT_FORMATS.map((f) => `'.${f}'`).join(', ')} (OVA/OVF import is not supported)`,
    });
  const claim = claimForFile(filename);
  if (!/^[a-z0-9]/.test(claim)) throw new ProxmoxError(400, `upload: invalid file name '${filename}'`);
  return claim;
}

/** Streams `body` to CDI's upload proxy (chunked: the file's length is only known at the end of the multipart). */
async function relay(session: UploadSession, body: Readable, signal: AbortSignal): Promise<void> {
  const answer = await postToUploadProxy(session, body, { signal });
  if (answer.status !== 200)
    throw new ProxmoxError(500, `CDI's upload proxy answered ${answer.status || '?'}: ${answer.text}`);
}

async function upload(ctx: EndpointContext, storage: PveStorage, req: IncomingMessage): Promise<string> {
  const { services } = ctx.state;
  const length = Number(req.headers['content-length']);
  if (!Number.isSafeInteger(length) || length < 1)
    throw new ProxmoxError(400, 'upload: Content-Length is required (the multipart body, in bytes)');
  const boundary = boundaryOf(req.headers['content-type']);
  const ac = new AbortController();
  let done = false;
  req.on('aborted', () => ac.abort());
  req.socket.once('close', () => {
    if (!done) ac.abort();
  });
  // Bytes arrive at the client's pace: no idle cut or request time-out while the upload runs (as the library's upload
  // route does).
  const socket = req.socket;
  const idleMs = socket.timeout;
  socket.setTimeout(0);
  exemptFromRequestTimeout(req);
  let taskId = '';
  let target: { namespace: string; name: string } | undefined;
  let fresh = false;
  let stored = false;
  try {
    await readMultipart(req, boundary, async (fields, part) => {
      const content = (fields.get('content') ?? ctx.args.string('content') ?? '') as UploadContent;
      if (!UPLOAD_CONTENT.includes(content))
        throw new ProxmoxError(400, 'upload: parameter verification failed', {
          content: content ? `'${content}' cannot be uploaded to Corral (iso or import)` : 'property is missing',
        });
      if (!storage.content.split(',').includes(content))
        throw new ProxmoxError(400, `storage '${storage.storage}' does not support content-type '${content}'`);
      if (fields.has('checksum'))
        throw new ProxmoxError(400, 'upload: parameter verification failed', {
          checksum: 'not supported by Corral; the upload proxy stores the bytes as sent',
        });
      const filename = fields.get('filename') ?? part.filename;
      const name = checkFile(content, filename);
      const namespace = services.deps.config.defaultNamespace;
      const volid = `${storage.storage}:${content}/${filename}`;
      if (content === 'import' && importVolumes(services, storage.storage).some((v) => v.volid === volid))
        throw new ProxmoxError(400, `volume '${volid}' already exists`);
      target = { namespace, name };
      // PVE keeps nothing of an upload that fails (it writes a temporary file): a DataVolume this request made goes
      // again when the bytes do not all arrive (a client cut off, a cancelled move), so the volume is not listed.
      fresh = !services.deps.cluster.cache.get('DataVolume', namespace, name);
      // The DataVolume holds at most the whole body (the file is a little smaller), rounded up to a MiB.
      const session = await corral(
        openUpload(
          services.deps,
          ctx.state.caller(ctx.principal),
          {
            namespace,
            name,
            size: `${Math.max(1, Math.ceil(length / 2 ** 20))}Mi`,
            contentType: content === 'iso' ? 'iso' : 'disk',
            bytes: length,
            annotations: { [ANNOTATION_PVE_VOLUME]: volid },
          },
          ac.signal,
        ),
      );
      taskId = session.task.id;
      let sent = 0;
      part.body.on('data', (c: Buffer) => (sent += c.length));
      try {
        await relay(session, part.body, ac.signal);
      } catch (err) {
        const why = `upload of ${volid} failed after ${sent} bytes: ${err instanceof Error ? err.message : String(err)}`;
        session.task.fail(new Error(why));
        await recordUploadError(services.deps, namespace, name, why);
        throw err;
      }
      session.task.done(`uploaded ${sent} bytes as ${volid}`);
      stored = true;
    });
  } finally {
    if (target && fresh && !stored)
      await services.deps.cluster.remove('DataVolume', target.namespace, target.name).catch(() => undefined);
    done = true;
    if (idleMs !== undefined && !socket.destroyed) socket.setTimeout(idleMs);
  }
  if (!taskId || !target) throw new ProxmoxError(400, 'upload: parameter verification failed', { filename: 'missing' });
  return upid(ctx, taskId);
}

export function registerStorageUpload(table: Routes): void {
  define(table, 'POST', '/nodes/{node}/storage/{storage}/upload', {
    privilege: { name: 'Datastore.AllocateTemplate', path: storageAcl },
    streamsBody: true,
    handle: async (ctx) => {
      requireNode(ctx);
      const storage = await findStorage(ctx.state.services, ctx.path.storage ?? '');
      if (!storage) throw new ProxmoxError(404, `storage '${ctx.path.storage}' does not exist`);
      if (!ctx.request) throw new ProxmoxError(500, 'internal: the upload has no request body');
      return upload(ctx, storage, ctx.request);
    },
  });
}
