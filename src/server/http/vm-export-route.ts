/**
 * `GET /api/vms/{namespace}/{name}/export?format=raw.gz|qcow2`: a streaming download, so a raw route beside the
 * generated REST routes (documented by hand in openapi.ts). The boot disk's raw image comes from the
 * VirtualMachineExport's server and is passed on with backpressure (`pipeline`):
 * - `raw.gz` (default): gzipped on the fly; nothing is staged in memory or on disk;
 * - `qcow2`: `qemu-img` needs a seekable file on both ends, so the raw image and the qcow2 are staged in a private
 *   temporary directory, removed when the response ends; without qemu-img the answer is 501 naming `qemu-utils`.
 * A client that goes away stops the upstream download and deletes the VirtualMachineExport. The socket's idle
 * time-out (limits.ts) is suspended for the whole response: while the export is prepared nothing flows, and a slow
 * reader's TCP window opens in bursts (on loopback, 64 KiB at a time) that can be further apart than the idle limit
 * although the download flows. A watchdog cuts the response only when no byte at all has left for `STALL_MS` (or
 * the idle limit when that is longer). The relayed buffers are collected as they go (stream-gc.ts), so a download
 * costs a few MiB of memory, not the 64 MB of dead buffers V8 would otherwise let pile up.
 */
import { execFile } from 'node:child_process';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { CorralError, describeError, httpStatusOf, redactAddresses } from '../errors';
import type { CorralServices } from '../domain/services';
import { registryOf } from '../domain/registry';
import { exportableClaim, openVmExport, type ExportSession } from '../domain/vm-export';
import { crossSiteRefusal } from '../http-guards';
import { identityFor } from '../identity-http';
import { VmRef } from '../schemas/common';
import { ExportQuery, type ExportFormat } from '../schemas/vm-ops';
import { parseRawRouteInput } from './raw-route-input';
import { scavengeWhileRelaying } from './stream-gc';

/** A download whose client has taken no byte for this long is stopped (and its export deleted). */
export const STALL_MS = 5 * 60_000;

const ROUTE = /^\/vms\/([^/]+)\/([^/]+)\/export\/?$/i;

/** The VM the request names, when it is a GET of the export route (`pathname` is without the /api prefix). */
export function matchExportRoute(method: string, pathname: string): { namespace: string; name: string } | undefined {
  if (method !== 'GET') return undefined;
  const m = ROUTE.exec(pathname);
  return m ? { namespace: m[1] ?? '', name: m[2] ?? '' } : undefined;
}

/** `CORRAL_QEMU_IMG` names the binary (default `qemu-img` on PATH); whether it runs is remembered per path. */
const qemuImgProbe = new Map<string, Promise<boolean>>();
export function qemuImgPath(env: NodeJS.ProcessEnv = process.env): string {
  return env.CORRAL_QEMU_IMG?.trim() || 'qemu-img';
}
function qemuImgAvailable(path: string): Promise<boolean> {
  let probe = qemuImgProbe.get(path);
  if (!probe) {
    probe = new Promise((resolve) => execFile(path, ['--version'], { timeout: 10_000 }, (err) => resolve(!err)));
    qemuImgProbe.set(path, probe);
  }
  return probe;
}

function sendError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  res.end(JSON.stringify({ error: message }));
}

function parseRequest(
  params: { namespace: string; name: string },
  search: URLSearchParams,
): { namespace: string; name: string; format: ExportFormat; context: string | undefined } {
  const { path, query } = parseRawRouteInput(params, search, VmRef, ExportQuery);
  return { ...path, format: query.format ?? 'raw.gz', context: query.context };
}

/** GET of one of the export server's images; resolves with the response once its headers arrived. */
function fetchImage(session: ExportSession, link: string, signal: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const url = new URL(link);
    const client = url.protocol === 'https:' ? https : http;
    const req = client.get(
      url,
      {
        headers: { 'x-kubevirt-export-token': session.token, 'accept-encoding': 'identity' },
        signal,
        ...(url.protocol === 'https:' && session.ca ? { ca: session.ca } : {}),
      },
      (up) => {
        if (up.statusCode !== 200) {
          up.resume();
          reject(new CorralError('BAD_GATEWAY', `the export server answered ${up.statusCode ?? '?'}`));
          return;
        }
        resolve(up);
      },
    );
    req.on('error', (err) => reject(new CorralError('BAD_GATEWAY', `export download failed: ${err.message}`)));
  });
}

/** Reports the download's progress to the task at most once per 2 % (a listener beside the pipe: no extra stage). */
function meterProgress(session: ExportSession, up: IncomingMessage): void {
  const total = Number(up.headers['content-length'] ?? 0);
  if (!(total > 0)) return;
  let seen = 0;
  let reported = 0;
  up.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    const pct = 10 + Math.floor((seen / total) * 88);
    if (pct >= reported + 2) session.task.progress((reported = pct));
  });
}

/** 64 KiB output chunks: a quarter of the writes (and chunk frames) of zlib's default 16 KiB. */
const GZIP_CHUNK = 64 * 1024;

/**
 * `raw.gz`: KubeVirt's export server compresses next to the disk when it offers the `gzip` format (virtctl's
 * default), and Corral relays those bytes; otherwise Corral gzips the raw image on the fly. Either way the bytes
 * flow through with backpressure and are never held.
 */
async function streamGzip(session: ExportSession, res: ServerResponse, name: string, signal: AbortSignal) {
  const up = await fetchImage(session, session.gzipUrl ?? session.url, signal);
  res.writeHead(200, {
    'Content-Type': 'application/gzip',
    'Content-Disposition': `attachment; filename="${name}.img.gz"`,
    'Cache-Control': 'no-store',
  });
  meterProgress(session, up);
  up.on('data', scavengeWhileRelaying());
  session.task.log(session.gzipUrl ? "relaying the export server's gzip format" : 'gzipping the raw image on the fly');
  if (session.gzipUrl) await pipeline(up, res, { signal });
  else await pipeline(up, createGzip({ chunkSize: GZIP_CHUNK }), res, { signal });
}

async function streamQcow2(
  session: ExportSession,
  res: ServerResponse,
  name: string,
  qemuImg: string,
  signal: AbortSignal,
) {
  const up = await fetchImage(session, session.url, signal);
  const dir = await mkdtemp(join(tmpdir(), 'corral-export-'));
  try {
    const raw = join(dir, 'disk.img');
    const out = join(dir, 'disk.qcow2');
    meterProgress(session, up);
    up.on('data', scavengeWhileRelaying());
    await pipeline(up, createWriteStream(raw), { signal });
    session.task.log('converting to qcow2 with qemu-img');
    await new Promise<void>((resolve, reject) =>
      execFile(qemuImg, ['convert', '-f', 'raw', '-O', 'qcow2', raw, out], { signal }, (err, _o, stderr) =>
        err ? reject(new CorralError('BAD_GATEWAY', `qemu-img convert failed: ${stderr || err.message}`)) : resolve(),
      ),
    );
    await rm(raw, { force: true });
    const { size } = await stat(out);
    res.writeHead(200, {
      'Content-Type': 'application/octet-stream',
      'Content-Disposition': `attachment; filename="${name}.qcow2"`,
      'Content-Length': String(size),
      'Cache-Control': 'no-store',
    });
    await pipeline(createReadStream(out), res, { signal });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function handleVmExport(
  defaultServices: CorralServices,
  req: IncomingMessage,
  res: ServerResponse,
  params: { namespace: string; name: string },
  search: URLSearchParams,
): Promise<void> {
  const identity = identityFor(req, defaultServices);
  const message = (err: unknown) => (identity.admin ? describeError(err) : redactAddresses(describeError(err)));
  const ac = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) ac.abort();
  });
  let session: ExportSession | undefined;
  const socket = req.socket;
  const idleMs = socket.timeout;
  let watchdog: NodeJS.Timeout | undefined;
  try {
    const { namespace, name, format, context } = parseRequest(params, search);
    // `?context=` picks the served cluster the VM is on, as every tRPC route's `context` does (404 naming it).
    const services = registryOf(defaultServices).get(context);
    // A download is a GET, but it creates cluster objects and hands out a disk: admins only, never cross-site.
    const crossSite = crossSiteRefusal({ ...req.headers, 'content-type': 'application/json' });
    if (crossSite) throw new CorralError('FORBIDDEN', crossSite);
    if (!identity.admin)
      throw new CorralError(
        'FORBIDDEN',
        identity.readOnlyReason ?? `${identity.login} is read-only: only logins in CORRAL_ADMINS may export disks`,
      );
    exportableClaim(services.deps, namespace, name);
    const qemuImg = qemuImgPath();
    if (format === 'qcow2' && !(await qemuImgAvailable(qemuImg)))
      throw new CorralError(
        'NOT_IMPLEMENTED',
        `qcow2 export needs qemu-img on the Corral server (Debian/Ubuntu package qemu-utils); format=raw.gz works without it`,
      );
    socket.setTimeout(0);
    watchdog = stallWatchdog(socket, Math.max(STALL_MS, idleMs ?? 0), () => ac.abort());
    session = await openVmExport(services.deps, { identity }, namespace, name, { signal: ac.signal });
    if (format === 'qcow2') await streamQcow2(session, res, name, qemuImg, ac.signal);
    else await streamGzip(session, res, name, ac.signal);
    await session.close();
  } catch (err) {
    const why = ac.signal.aborted ? new CorralError('CONFLICT', 'the client disconnected; export stopped') : err;
    await session?.close(why);
    if (ac.signal.aborted) {
      if (!res.destroyed) res.destroy();
      return;
    }
    if (err instanceof CorralError) sendError(res, httpStatusOf[err.code], message(err));
    else {
      console.error('[corral] export failed:', err);
      sendError(res, 500, message(err));
    }
  } finally {
    if (watchdog) clearInterval(watchdog);
    if (idleMs !== undefined && !socket.destroyed) socket.setTimeout(idleMs);
  }
}

/**
 * Calls `onStall` when the socket has sent nothing for `stallMs` — only while the export is prepared (nothing is
 * expected to flow yet) is that allowed, and then the stall window covers it (exports are Ready in seconds).
 */
function stallWatchdog(socket: Socket, stallMs: number, onStall: () => void): NodeJS.Timeout {
  let last = socket.bytesWritten;
  let lastChange = Date.now();
  const timer = setInterval(
    () => {
      if (socket.bytesWritten !== last) {
        last = socket.bytesWritten;
        lastChange = Date.now();
      } else if (Date.now() - lastChange > stallMs) {
        clearInterval(timer);
        onStall();
      }
    },
    Math.min(5_000, Math.max(100, stallMs / 4)),
  );
  timer.unref();
  return timer;
}
