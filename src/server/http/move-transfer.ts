/**
 * The byte mover of a cross-cluster move (domain/move-commit.ts `DiskTransfer`): GET of the raw image from the
 * source's KubeVirt export server (`x-kubevirt-export-token`), POST of the same bytes to the destination's CDI
 * upload proxy (`Authorization: Bearer`). Streamed with backpressure by default; with `scratch` the image is first
 * written to a private temporary file on the Corral server (removed afterwards), so the upload starts only once
 * the whole image has arrived. An abort (`signal`: a cancelled move) stops both requests at once; the copy then
 * rejects with the signal's reason.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
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

function upload(to: DiskEndpoint, body: Readable, bytes: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const url = new URL(to.url);
    const req = clientFor(url).request(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${to.token}`,
        'content-type': 'application/octet-stream',
        'content-length': String(bytes),
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
    pipeline(body, req).catch((err: unknown) => reject(stopped(signal, err)));
  });
}

function meter(total: number, progress: (bytes: number, total: number) => void): Transform {
  let seen = 0;
  let reported = 0;
  const t = new Transform({
    transform(chunk: Buffer, _enc, next) {
      seen += chunk.length;
      if (total > 0 && seen - reported >= total / 50) progress((reported = seen), total);
      next(null, chunk);
    },
  });
  t.on('data', scavengeWhileRelaying());
  return t;
}

export const httpDiskTransfer: DiskTransfer = {
  async copy(from, to, { scratch, progress, signal }) {
    signal?.throwIfAborted();
    const image = await download(from, signal);
    const length = Number(image.headers['content-length'] ?? NaN);
    if (!scratch) {
      if (!Number.isSafeInteger(length) || length < 1) {
        image.resume();
        throw new CorralError('BAD_GATEWAY', "the source's export server sent no image length; move with scratch");
      }
      await upload(to, image.pipe(meter(length, progress)), length, signal);
      return length;
    }
    const dir = await mkdtemp(join(tmpdir(), 'corral-move-'));
    try {
      const file = join(dir, 'disk.img');
      await pipeline(
        image,
        meter(Number.isSafeInteger(length) ? length * 2 : 0, progress),
        createWriteStream(file),
        ...(signal ? [{ signal }] : []),
      ).catch((err: unknown) => Promise.reject(stopped(signal, err)));
      const { size } = await stat(file);
      await upload(to, createReadStream(file).pipe(meter(size, (b, t) => progress(t / 2 + b / 2, t))), size, signal);
      return size;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  },
};
