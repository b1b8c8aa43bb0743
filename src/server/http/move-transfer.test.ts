/**
 * The move's byte mover with `gunzip` (a CT's files: the export's tar.gz, sent on as a tar): streamed, the upload
 * goes chunked (no Content-Length) with the decompressed bytes; staged, with the decompressed file's size; a source
 * that is not gzip fails with a 502 naming it; a cancel stops the copy with its reason.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { httpDiskTransfer } from './move-transfer';

const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An export server sending `body` as KubeVirt sends tar.gz: chunked, no length. */
const exporter = (body: Buffer) =>
  serve((req, res) => {
    expect(req.headers['x-kubevirt-export-token']).toBe('export-token');
    res.writeHead(200, { 'content-type': 'application/gzip' });
    for (let at = 0; at < body.length; at += 8192) res.write(body.subarray(at, at + 8192));
    res.end();
  });

interface Received {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** An upload proxy keeping what it was sent. */
async function proxy(): Promise<{ url: string; received: Promise<Received> }> {
  let done: (r: Received) => void = () => undefined;
  const received = new Promise<Received>((resolve) => (done = resolve));
  const url = await serve((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      done({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  return { url, received };
}

const TAR = randomBytes(300_000); // the bytes stand in for a tar: the transport does not read them

describe('httpDiskTransfer with gunzip', () => {
  it('streams the decompressed bytes chunked, without a Content-Length, and answers their count', async () => {
    const from = await exporter(gzipSync(TAR));
    const to = await proxy();
    const seen: [number, number][] = [];
    const bytes = await httpDiskTransfer.copy(
      { url: `${from}/disk.tar.gz`, token: 'export-token' },
      { url: `${to.url}/v1beta1/upload`, token: 'upload-token' },
      { scratch: false, gunzip: true, progress: (b, t) => seen.push([b, t]) },
    );
    const got = await to.received;
    expect(bytes).toBe(TAR.length);
    expect(got.body.equals(TAR)).toBe(true);
    expect(got.headers['content-length']).toBeUndefined();
    expect(got.headers['transfer-encoding']).toBe('chunked');
    expect(got.headers.authorization).toBe('Bearer upload-token');
    expect(seen.every(([, total]) => total === 0)).toBe(true);
  });

  it('staged, sends the decompressed file with its size', async () => {
    const from = await exporter(gzipSync(TAR));
    const to = await proxy();
    const bytes = await httpDiskTransfer.copy(
      { url: `${from}/disk.tar.gz`, token: 'export-token' },
      { url: `${to.url}/v1beta1/upload`, token: 'upload-token' },
      { scratch: true, gunzip: true, progress: () => undefined },
    );
    const got = await to.received;
    expect(bytes).toBe(TAR.length);
    expect(got.body.equals(TAR)).toBe(true);
    expect(got.headers['content-length']).toBe(String(TAR.length));
  });

  it('a source that is not gzip fails with a 502 naming it, streamed or staged', async () => {
    for (const scratch of [false, true]) {
      const from = await exporter(randomBytes(50_000));
      const to = await proxy();
      const copy = httpDiskTransfer.copy(
        { url: `${from}/disk.tar.gz`, token: 'export-token' },
        { url: `${to.url}/v1beta1/upload`, token: 'upload-token' },
        { scratch, gunzip: true, progress: () => undefined },
      );
      await expect(copy).rejects.toThrow(CorralError);
      await expect(copy).rejects.toThrow(/the source's archive is not valid gzip/);
    }
  });

  it('a cancel stops the streamed copy with its reason', async () => {
    // The export server sends a first part, then holds the rest: the copy is under way until stopped.
    const gz = gzipSync(TAR);
    const from = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/gzip' });
      res.write(gz.subarray(0, 10_000));
    });
    const to = await serve((req) => req.resume());
    const abort = new AbortController();
    const copy = httpDiskTransfer.copy(
      { url: `${from}/disk.tar.gz`, token: 'export-token' },
      { url: `${to}/v1beta1/upload`, token: 'upload-token' },
      { scratch: false, gunzip: true, progress: () => undefined, signal: abort.signal },
    );
    setTimeout(() => abort.abort(new Error('cancelled by test')), 200);
    await expect(copy).rejects.toThrow('cancelled by test');
  });
});
