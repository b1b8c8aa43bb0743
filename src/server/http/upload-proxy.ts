// Streaming a file to CDI's upload proxy for an upload session (datavolume-upload.ts): the one relay behind Corral's
// upload route and its Proxmox API's storage upload.
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { UploadSession } from '../domain/datavolume-upload';

/**
 * POSTs `body` to the session's upload proxy — with `bytes` as its length, else chunked (a multipart part's length
 * is only known at its end) — and resolves with the proxy's status and answer (its first 2,000 characters a chunk)
 * once it has replied. `signal` stops the request, rejecting with its reason.
 */
export function postToUploadProxy(
  session: UploadSession,
  body: Readable,
  { bytes, signal }: { bytes?: number; signal: AbortSignal },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(session.url);
    const up = (url.protocol === 'https:' ? https : http).request(url, {
      method: 'POST',
      signal,
      headers: {
        authorization: `Bearer ${session.token}`,
        'content-type': 'application/octet-stream',
        ...(bytes === undefined ? {} : { 'content-length': String(bytes) }),
      },
    });
    up.on('response', (answer) => {
      let text = '';
      answer.setEncoding('utf8');
      answer.on('data', (c: string) => (text += c.slice(0, 2000)));
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, text: text.trim() }));
      answer.on('error', reject);
    });
    // Once the whole body is sent the pipeline has settled: an abort while waiting for the answer (the client cut
    // off) only reaches the request's own error.
    up.on('error', reject);
    pipeline(body, up).catch(reject);
  });
}
