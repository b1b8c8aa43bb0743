/**
 * KubeVirt's export server (virt-exportserver) on this embedded cluster's own HTTP server: behind the
 * `x-kubevirt-export-token` check it serves each volume of a Ready VirtualMachineExport in the formats its links
 * list [src: KubeVirt pkg/storage/export/virt-exportserver/exportserver.go]:
 *
 * - a disk image (kubevirt content): `raw` at `/volumes/<vol>/disk.img` (a real 4 MiB MBR/ext2 image, the uploaded
 *   bytes, or a large streamed image) and `gzip` at `/volumes/<vol>/disk.img.gz`;
 * - a plain filesystem: `tar.gz` at `/volumes/<vol>/disk.tar.gz` (the volume's tree as GNU `tar c .` writes it,
 *   `./`-prefixed, gzipped and streamed without a length; GET only) and `dir` at `/volumes/<vol>/dir/` (Go's
 *   `http.FileServer`: an HTML listing per directory, files with their length; `dir` without the slash redirects).
 *
 * A format the export does not list for the volume is a 404, as the exporter registers no handler for it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { posix } from 'node:path';
import { pipeline, Readable } from 'node:stream';
import { createGzip } from 'node:zlib';
import type { RawRoute, SimContext } from '../module.js';
import type { KObject } from '../store/types.js';
import { diskImage, IMAGE_BYTES, largeRawImageStream } from './disk-image.js';
import { EXPORT_PATH_PREFIX, exportToken, TOKEN_HEADER } from './export-controller.js';
import { DISK_CONTENT_ANNOTATION, EXPORT_BYTES_ANNOTATION, S, UPLOAD_FILE_ANNOTATION } from './keys.js';
import { dataPadding, endBlocks, headerBlocks } from './tar.js';
import { arr, rec, spec, status, str } from './util.js';
import { children, lookup, volumeFiles, type VolumeFile } from './volume-files.js';

const ROUTE =
  /^\/sim-export\/([^/]+)\/([^/]+)\/volumes\/([^/]+)\/(disk\.img|disk\.img\.gz|disk\.tar\.gz|dir(?:\/.*)?)$/;

function send(res: ServerResponse, code: number, message: string): void {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8' });
  res.end(`${message}\n`);
}

/** The format a request path asks for, by KubeVirt's URL shapes. */
function formatOf(file: string): 'raw' | 'gzip' | 'tar.gz' | 'dir' {
  if (file === 'disk.img') return 'raw';
  if (file === 'disk.img.gz') return 'gzip';
  if (file === 'disk.tar.gz') return 'tar.gz';
  return 'dir';
}

export const exportDownloadRoute: RawRoute = {
  matches: (url, method) => (method === 'GET' || method === 'HEAD') && url.pathname.startsWith(EXPORT_PATH_PREFIX),
  handle(ctx: SimContext, req: IncomingMessage, res: ServerResponse, url: URL) {
    const match = ROUTE.exec(url.pathname);
    if (!match) return send(res, 404, '404 page not found');
    const [ns, name, volume] = match.slice(1, 4).map((p) => decodeURIComponent(p)) as [string, string, string];
    const file = match[4]!;
    if (file === 'dir') {
      // Go's ServeMux sends `.../dir` to the handler's subtree `.../dir/`, query kept.
      res.writeHead(301, { location: `${url.pathname}/${url.search}` });
      return void res.end();
    }
    const exp = ctx.store.get(S.vmExports, ns, name);
    if (!exp) return send(res, 404, `export ${ns}/${name} not found`);
    const expected = exportToken(ctx, exp);
    const header = req.headers[TOKEN_HEADER];
    const presented = (Array.isArray(header) ? header[0] : header) ?? url.searchParams.get(TOKEN_HEADER) ?? undefined;
    if (!expected || presented !== expected) return send(res, 401, 'Unauthorized');
    if (status(exp).phase !== 'Ready') return send(res, 503, `export ${ns}/${name} is not ready`);
    const linked = arr(rec(rec(status(exp).links).external).volumes)
      .map(rec)
      .find((v) => str(v.name) === volume);
    if (!linked) return send(res, 404, `volume ${volume} is not part of export ${ns}/${name}`);
    const format = formatOf(file);
    if (!arr(linked.formats).some((f) => str(rec(f).format) === format)) return send(res, 404, '404 page not found');
    if (format === 'raw' || format === 'gzip') return serveImage(ctx, req, res, exp, volume, format);
    const claim = ctx.store.get(S.pvcs, ns, volume);
    if (!claim) return send(res, 404, `volume ${volume} is gone`);
    if (format === 'tar.gz') return serveArchive(req, res, claim);
    serveDir(req, res, claim, url, decodeURIComponent(file.slice('dir'.length)));
  },
};

// --- disk images -------------------------------------------------------------------------------------------------

/** Where a volume's bytes come from, for the image note. */
function contentOf(ctx: SimContext, exp: KObject, volume: string): string {
  const ns = exp.metadata.namespace;
  const claim = ctx.store.get(S.pvcs, ns, volume);
  const fromClaim = claim?.metadata.annotations?.[DISK_CONTENT_ANNOTATION];
  if (fromClaim) return fromClaim;
  // A claim seeded with its DataVolume already imported carries no annotation: name the DataVolume's source.
  const owner = claim?.metadata.ownerReferences?.find((r) => r.kind === 'DataVolume');
  const dv =
    owner && ctx.store.allTypes().some((t) => t.plural === 'datavolumes')
      ? ctx.store.get(S.dataVolumes, ns, owner.name)
      : undefined;
  const source = rec(spec(dv ?? ({} as KObject)).source);
  const url = str(rec(source.http).url) ?? str(rec(source.registry).url);
  if (url) return `${source.http ? 'http' : 'registry'}:${url}`;
  return `pvc:${ns ?? ''}/${volume}`;
}

function serveImage(
  ctx: SimContext,
  req: IncomingMessage,
  res: ServerResponse,
  exp: KObject,
  volume: string,
  format: 'raw' | 'gzip',
): void {
  const ns = exp.metadata.namespace ?? '';
  const id = { namespace: ns, volume, content: contentOf(ctx, exp, volume) };
  const type = format === 'raw' ? 'application/octet-stream' : 'application/gzip';
  const uploaded = ctx.store.get(S.pvcs, ns, volume)?.metadata.annotations?.[UPLOAD_FILE_ANNOTATION];
  if (uploaded && existsSync(uploaded)) {
    // An uploaded volume holds exactly the bytes that were uploaded.
    res.writeHead(200, {
      'content-type': type,
      ...(format === 'raw' ? { 'content-length': String(statSync(uploaded).size) } : {}),
    });
    if (req.method === 'HEAD') return void res.end();
    if (format === 'raw') pipeline(createReadStream(uploaded), res, () => undefined);
    else pipeline(createReadStream(uploaded), createGzip({ chunkSize: 1024 * 1024 }), res, () => undefined);
    return;
  }
  const large = Number(ctx.store.get(S.pvcs, ns, volume)?.metadata.annotations?.[EXPORT_BYTES_ANNOTATION] ?? 0);
  if (Number.isSafeInteger(large) && large > IMAGE_BYTES) {
    // A large image is streamed with backpressure; a client that goes away stops it.
    res.writeHead(200, { 'content-type': type, ...(format === 'raw' ? { 'content-length': String(large) } : {}) });
    if (req.method === 'HEAD') return void res.end();
    const source = largeRawImageStream(id, large);
    if (format === 'raw') pipeline(source, res, () => undefined);
    // 1 MiB output chunks: each chunk is one hop between zlib's worker thread and the event loop, and on a busy
    // machine the wait for the event loop between hops (not the compressing) was what slowed the stream down.
    else pipeline(source, createGzip({ chunkSize: 1024 * 1024 }), res, () => undefined);
    return;
  }
  const body = diskImage(id, format);
  res.writeHead(200, { 'content-type': type, 'content-length': String(body.length) });
  if (req.method === 'HEAD') res.end();
  else res.end(body);
}

// --- filesystems -------------------------------------------------------------------------------------------------

/** The volume as `tar c .` writes it: the root `./`, then every member `./`-prefixed, each file's data after it. */
async function* tarStream(files: VolumeFile[]): AsyncGenerator<Buffer> {
  const mtime = files.reduce((m, f) => Math.max(m, f.mtime), 0);
  yield headerBlocks({ path: '', type: 'dir', mode: 0o755, mtime, size: 0 }, './');
  for (const f of files) {
    yield headerBlocks(f, './');
    if (f.type !== 'file' || f.size === 0) continue;
    let sent = 0;
    for await (const chunk of f.open() as AsyncIterable<Buffer>) {
      sent += chunk.length;
      yield chunk;
    }
    if (sent !== f.size) throw new Error(`${f.path}: file changed as we read it`);
    yield dataPadding(f.size);
  }
  yield endBlocks();
}

function serveArchive(req: IncomingMessage, res: ServerResponse, claim: KObject): void {
  // The archive handler answers GET only, and streams: no Content-Length.
  if (req.method !== 'GET') return void res.writeHead(400).end();
  const files = volumeFiles(claim);
  res.writeHead(200, { 'content-type': 'application/gzip' });
  pipeline(Readable.from(tarStream(files)), createGzip({ chunkSize: 256 * 1024 }), res, () => undefined);
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' };

function listing(entries: VolumeFile[]): string {
  const rows = entries.map((f) => {
    const name = `${posix.basename(f.path)}${f.type === 'dir' ? '/' : ''}`;
    const href = encodeURIComponent(posix.basename(f.path)) + (f.type === 'dir' ? '/' : '');
    return `<a href="${href}">${name.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!)}</a>\n`;
  });
  return `<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n${rows.join('')}</pre>\n`;
}

function contentType(path: string, head: Buffer): string {
  const byExtension: Record<string, string> = {
    '.txt': 'text/plain; charset=utf-8',
    '.html': 'text/html; charset=utf-8',
    '.json': 'application/json',
    '.gz': 'application/gzip',
    '.tar': 'application/x-tar',
  };
  const known = byExtension[posix.extname(path)];
  if (known) return known;
  // Go sniffs the first bytes: text without control bytes (other than tab, newlines, form feed, escape) is text.
  const binary = head.some((b) => b < 0x20 && b !== 0x09 && b !== 0x0a && b !== 0x0c && b !== 0x0d && b !== 0x1b);
  return head.length > 0 && !binary ? 'text/plain; charset=utf-8' : 'application/octet-stream';
}

/** Go's `http.FileServer` over the volume's tree, `rest` being the path after `dir` (starting with `/`). */
function serveDir(req: IncomingMessage, res: ServerResponse, claim: KObject, url: URL, rest: string): void {
  const files = volumeFiles(claim);
  const found = lookup(files, rest);
  if (!found) return send(res, 404, '404 page not found');
  const isDir = 'root' in found || found.type === 'dir';
  const slash = rest.endsWith('/');
  if (isDir !== slash) {
    // A directory without its slash, or a file with one, is redirected (relative Location, query kept).
    const base = posix.basename(rest.replace(/\/$/, ''));
    res.writeHead(301, { location: `${isDir ? `${base}/` : `../${base}`}${url.search}` });
    return void res.end();
  }
  if (isDir) {
    const body = Buffer.from(listing(children(files, 'root' in found ? '' : found.path)), 'utf8');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) });
    return void res.end(req.method === 'HEAD' ? undefined : body);
  }
  const file = found as VolumeFile;
  const chunks: Buffer[] = [];
  const stream = file.open();
  stream.on('data', (c: Buffer) => chunks.push(c));
  stream.on('error', () => send(res, 500, 'read failed'));
  stream.on('end', () => {
    const body = Buffer.concat(chunks);
    res.writeHead(200, {
      'content-type': contentType(file.path, body.subarray(0, 512)),
      'content-length': String(body.length),
      'last-modified': new Date(file.mtime * 1000).toUTCString(),
      'accept-ranges': 'bytes',
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
}
