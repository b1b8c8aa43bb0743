/**
 * The byte source of a move to a Proxmox VE host (domain/move-pve-commit.ts `ImageSource`): a GET of the raw image
 * from the source's KubeVirt export server (`x-kubevirt-export-token`), handed on as a stream with its length (PVE's
 * multipart upload needs the length up front). Nothing is staged: the PVE client pipes it into the upload.
 */
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { CorralError } from '../errors';
import type { ImageSource } from '../domain/move-pve-commit';
import { scavengeWhileRelaying } from './stream-gc';

export const httpImageSource: ImageSource = {
  open(from, onBytes) {
    return new Promise((resolve, reject) => {
      const url = new URL(from.url);
      const req = (url.protocol === 'https:' ? https : http).get(
        url,
        {
          headers: { 'x-kubevirt-export-token': from.token, 'accept-encoding': 'identity' },
          ...(url.protocol === 'https:' && from.ca ? { ca: from.ca } : {}),
        },
        (res: IncomingMessage) => {
          const bytes = Number(res.headers['content-length'] ?? NaN);
          if (res.statusCode !== 200 || !Number.isSafeInteger(bytes) || bytes < 1) {
            res.resume();
            reject(
              new CorralError(
                'BAD_GATEWAY',
                res.statusCode !== 200
                  ? `the source's export server answered ${res.statusCode ?? '?'}`
                  : "the source's export server sent no image length",
              ),
            );
            return;
          }
          let seen = 0;
          // Counted inside the transform: a 'data' listener would set the stream flowing past its reader.
          const scavenge = scavengeWhileRelaying();
          const meter = new Transform({
            transform(chunk: Buffer, _enc, next) {
              seen += chunk.length;
              scavenge(chunk);
              onBytes?.(seen);
              next(null, chunk);
            },
          });
          res.on('error', (err) => meter.destroy(err));
          resolve({ body: res.pipe(meter), bytes });
        },
      );
      req.on('error', (err) => reject(new CorralError('BAD_GATEWAY', `export download failed: ${err.message}`)));
    });
  },
};
