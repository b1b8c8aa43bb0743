/**
 * The byte mover of a cross-cluster move (domain/move-commit.ts `DiskTransfer`): GET of the raw image from the
 * source's KubeVirt export server (`x-kubevirt-export-token`), POST of the same bytes to the destination's CDI
 * upload proxy (`Authorization: Bearer`). Streamed with backpressure by default; with `scratch` the image is first
 * written to a private temporary file on the Corral server (removed afterwards), so the upload starts only once
 * the whole image has arrived. An abort (`signal`: a cancelled move) stops both requests at once; the copy then
 * rejects with the signal's reason.
 *
 * With `gunzip` the source is a gzipped archive (a CT's claim, exported by KubeVirt only as `tar.gz`, streamed
 * without a length) and CDI's archive upload takes the tar: it is decompressed on the way and sent with chunked
 * transfer encoding (its length is not known before the end), or, staged, as the decompressed file with its size.
 * Progress then counts compressed bytes read against the export's Content-Length when it sent one, else reports
 * the bytes read so far (total 0).
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { CorralError } from '../errors';
import type { DiskEndpoint, DiskTransfer } from '../domain/move-commit';
import { scavengeWhileRelaying } from './stream-gc';

function clientFor(url: URL) {
  return url.protocol === 'https:' ? https : http;
}

/** What a request failed with: the abort's reason when the copy was stopped, else `err`. */
function stopped(signal: AbortSignal | undefined, err: unknown): unknown {
  return signal?.aborted ? signal.reason : err;
}

function download(from: DiskEndpoint, signal?: AbortSignal): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const url = new URL(from.url);
    const req = clientFor(url).get(
      url,
      {
        headers: { 'x-kubevirt-export-token': from.token, 'accept-encoding': 'identity' },
        ...(url.protocol === 'https:' && from.ca ? { ca: from.ca } : {}),
        ...(signal ? { signal } : {}),
      },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new CorralError('BAD_GATEWAY', `the source's export server answered ${res.statusCode ?? '?'}`));
          return;
        }
        resolve(res);
      },
    );
    req.on('error', (err) =>
      reject(stopped(signal, new CorralError('BAD_GATEWAY', `export download failed: ${err.message}`))),
    );
  });
}

/** POSTs the last stream of `chain` (piped through in order); without `bytes` as chunked transfer encoding. */
function upload(
  to: DiskEndpoint,
  chain: [Readable, ...Transform[]],
  bytes: number | undefined,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(to.url);
    const req = clientFor(url).request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${to.token}`,
        'content-type': 'application/octet-stream',
        ...(bytes === undefined ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(bytes) }),
      },
      ...(url.protocol === 'https:' && to.ca ? { ca: to.ca } : {}),
      ...(signal ? { signal } : {}),
    });
    req.on('response', (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (c: string) => (text += c.slice(0, 2000)));
      answer.on('end', () =>
        answer.statusCode === 200
          ? resolve()
          : reject(
              new CorralError(
                answer.statusCode === 409 ? 'CONFLICT' : 'BAD_GATEWAY',
                `the destination's upload proxy answered ${answer.statusCode ?? '?'}: ${text.trim()}`,
              ),
            ),
      );
      answer.on('error', (err) => reject(stopped(signal, err)));
    });
    req.on('error', (err) => reject(stopped(signal, new CorralError('BAD_GATEWAY', `upload failed: ${err.message}`))));
    pipeline([...chain, req]).catch((err: unknown) =>
      reject(stopped(signal, isZlibError(err) ? gunzipError(err) : err)),
    );
  });
}

/** Reports bytes through it: every 2% of `total`, or every 4 MiB when the total is not known (reported as 0). */
function meter(total: number, progress: (bytes: number, total: number) => void): Transform {
  let seen = 0;
  let reported = 0;
  const step = total > 0 ? total / 50 : 4 * 2 ** 20;
  const t = new Transform({
    transform(chunk: Buffer, _enc, next) {
      seen += chunk.length;
      if (seen - reported >= step) progress((reported = seen), Math.max(total, 0));
      next(null, chunk);
    },
  });
  t.on('data', scavengeWhileRelaying());
  return t;
}

/** Counts the bytes through it (the decompressed length sent). */
function counter(): Transform & { bytes: number } {
  const t = new Transform({
    transform(chunk: Buffer, _enc, next) {
      t.bytes += chunk.length;
      next(null, chunk);
    },
  }) as Transform & { bytes: number };
  t.bytes = 0;
  return t;
}

/** A decompression failure (zlib's `Z_*` codes), not a network one. */
function isZlibError(err: unknown): err is Error {
  const code = (err as { code?: unknown } | undefined)?.code;
  return err instanceof Error && typeof code === 'string' && code.startsWith('Z_');
}

function gunzipError(err: Error): CorralError {
  return new CorralError('BAD_GATEWAY', `the source's archive is not valid gzip: ${err.message}`);
}

export const httpDiskTransfer: DiskTransfer = {
  async copy(from, to, { scratch, progress, signal, gunzip }) {
    signal?.throwIfAborted();
    const image = await download(from, signal);
    const length = Number(image.headers['content-length'] ?? NaN);
    const known = Number.isSafeInteger(length) && length > 0;
    if (!scratch && gunzip) {
      const sent = counter();
      await upload(to, [image, meter(known ? length : 0, progress), createGunzip(), sent], undefined, signal);
      return sent.bytes;
    }
    if (!scratch) {
      if (!known) {
        image.resume();
        throw new CorralError('BAD_GATEWAY', "the source's export server sent no image length; move with scratch");
      }
      await upload(to, [image, meter(length, progress)], length, signal);
      return length;
    }
    const dir = await mkdtemp(join(tmpdir(), 'corral-move-'));
    try {
      const file = join(dir, gunzip ? 'volume.tar' : 'disk.img');
      await pipeline(
        [image, meter(known ? length * 2 : 0, progress), ...(gunzip ? [createGunzip()] : []), createWriteStream(file)],
        ...(signal ? [{ signal }] : []),
      ).catch((err: unknown) => Promise.reject(stopped(signal, isZlibError(err) ? gunzipError(err) : err)));
      const { size } = await stat(file);
      await upload(to, [createReadStream(file), meter(size, (b, t) => progress(t / 2 + b / 2, t))], size, signal);
      return size;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
