/**
 * gzip/brotli for large JSON answers of /api, /api2/json and /trpc. Over Tailscale or a LAN the 3 MB of
 * `GET /api/vms` at 10,000 VMs is the whole first-paint budget; compressed it is a tenth of that.
 *
 * Negotiated from Accept-Encoding (gzip preferred, brotli for clients that offer only that; `q=0` refuses a coding) and applied only when the
 * answer is JSON, not already encoded, and at least `COMPRESS_MIN_BYTES` long — small answers are sent as they are
 * (compressing a 300-byte error costs more than it saves). The answer is collected and compressed off the event
 * loop (zlib's thread pool) when it ends, so this is for one-shot answers: anything else (VM exports, uploads)
 * is recognised by its content type at the first write and passes straight through. `Vary: Accept-Encoding` goes
 * on every answer that could have been compressed.
 *
 * Event streams (the `live.fleet` subscription) are gzipped as a stream instead (compressEventStream): every write
 * is one SSE frame and is sync-flushed on its own, so a change still reaches the browser at once, while the
 * snapshot the stream opens with — the whole fleet, 3 MB at 10,000 VMs — travels at a tenth of that.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { brotliCompress, constants, createGzip, gzip, type Gzip } from 'node:zlib';

/** Below this many bytes an answer is sent uncompressed. */
export const COMPRESS_MIN_BYTES = 4096;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

export type Coding = 'br' | 'gzip';

/** The coding to use for `header` (Accept-Encoding), or undefined for identity. */
export function negotiateCoding(header: string | string[] | undefined): Coding | undefined {
  const raw = Array.isArray(header) ? header.join(',') : (header ?? '');
  const q = new Map<string, number>();
  for (const part of raw.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const accepts = (coding: Coding) => (q.get(coding) ?? q.get('*') ?? 0) > 0;
  // gzip first: at 10,000 VMs (3.4 MB) gzip -6 took 43 ms for 310 KiB and brotli q4 413 ms for 291 KiB on the
  // 2-core bench machine (npm run bench:scale) — 6 % fewer bytes do not pay for ten times the CPU.
  if (accepts('gzip')) return 'gzip';
  if (accepts('br')) return 'br';
  return undefined;
}

export function compress(body: Buffer, coding: Coding): Promise<Buffer> {
  return coding === 'br'
    ? // Quality 4: most of brotli's gain on JSON at a fraction of the default (11) cost.
      brotli(body, {
        params: {
          [constants.BROTLI_PARAM_QUALITY]: 4,
          [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
          [constants.BROTLI_PARAM_SIZE_HINT]: body.length,
        },
      })
    : gzipAsync(body, { level: 6 });
}

/** Answers at least this large are compressed once per body Buffer (see compressShared). */
export const SHARED_BODY_BYTES = 1 << 20;

const shared = new WeakMap<Buffer, Map<Coding, Promise<Buffer>>>();

/**
 * `compress`, once per Buffer object: `GET /api/vms` hands every request the same Buffer until the fleet changes
 * (FleetView.vmRowsJson), and at 50,000 VMs gzipping its 17 MB took ~0.3 s of a core per cold load, on every
 * load. The entry lives as long as that Buffer does.
 */
export function compressShared(body: Buffer, coding: Coding): Promise<Buffer> {
  let byCoding = shared.get(body);
  if (!byCoding) shared.set(body, (byCoding = new Map()));
  let out = byCoding.get(coding);
  if (!out) {
    out = compress(body, coding);
    byCoding.set(coding, out);
    out.catch(() => byCoding.delete(coding));
  }
  return out;
}

const isJson = (type: unknown) => typeof type === 'string' && /^application\/json\b/i.test(type);

function headerOf(headers: OutgoingHttpHeaders | undefined, name: string): unknown {
  if (!headers) return undefined;
  for (const [k, v] of Object.entries(headers)) if (k.toLowerCase() === name) return v;
  return undefined;
}

/**
 * Makes `res` compress its answer when it turns out to be large JSON and the client accepts a coding. Call before
 * the handler writes anything.
 */
export function compressLargeJson(req: IncomingMessage, res: ServerResponse, minBytes = COMPRESS_MIN_BYTES): void {
  if (req.method === 'HEAD') return;
  // Event streams (tRPC subscriptions) are long-lived: never held back, compressed frame by frame at most.
  if (/text\/event-stream/i.test(req.headers.accept ?? '')) {
    compressEventStream(req, res);
    return;
  }
  const coding = negotiateCoding(req.headers['accept-encoding']);
  const vary = () => {
    if (!res.headersSent) res.setHeader('Vary', 'Accept-Encoding');
  };
  if (!coding) {
    vary();
    return;
  }
  const original = { writeHead: res.writeHead.bind(res), write: res.write.bind(res), end: res.end.bind(res) };
  let held: { status: number; headers?: OutgoingHttpHeaders } | undefined;
  let mode: 'undecided' | 'collect' | 'pass' = 'undecided';
  const chunks: Buffer[] = [];
  const toBuffer = (chunk: unknown, encoding?: unknown) =>
    Buffer.isBuffer(chunk)
      ? chunk
      : chunk instanceof Uint8Array
        ? Buffer.from(chunk)
        : Buffer.from(String(chunk), typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');

  const flushHead = () => {
    if (held) original.writeHead(held.status, held.headers);
    held = undefined;
  };
  const decide = () => {
    if (mode !== 'undecided') return;
    const type = headerOf(held?.headers, 'content-type') ?? res.getHeader('content-type');
    const encoded = headerOf(held?.headers, 'content-encoding') ?? res.getHeader('content-encoding');
    const status = held?.status ?? res.statusCode;
    mode = isJson(type) && !encoded && status !== 204 && status !== 304 ? 'collect' : 'pass';
    if (mode === 'pass') {
      restore();
      flushHead();
    }
  };
  const restore = () => {
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
  };

  vary();
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((r) => r && typeof r === 'object') as OutgoingHttpHeaders | undefined;
    held = { status, ...(headers ? { headers } : {}) };
    // A non-JSON answer declared here (a download, a stream) goes out at once, headers included.
    if (headerOf(headers, 'content-type') !== undefined && !isJson(headerOf(headers, 'content-type'))) decide();
    return res;
  }) as typeof res.writeHead;
  res.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
    decide();
    if (mode === 'pass') return (original.write as (...a: unknown[]) => boolean)(chunk, encoding, cb);
    chunks.push(toBuffer(chunk, encoding));
    if (typeof encoding === 'function') (encoding as () => void)();
    else if (typeof cb === 'function') (cb as () => void)();
    return true;
  }) as typeof res.write;
  res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    decide();
    if (mode === 'pass') return (original.end as (...a: unknown[]) => ServerResponse)(chunk, encoding, cb);
    if (typeof chunk === 'function') cb = chunk;
    else if (chunk !== undefined && chunk !== null) chunks.push(toBuffer(chunk, encoding));
    if (typeof encoding === 'function') cb = encoding;
    restore();
    // One Buffer handed to end() is kept as is (not copied), so a shared answer is recognised by identity.
    const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
    const send = (out: Buffer, encoded: boolean) => {
      const headers = { ...(held?.headers ?? {}) };
      for (const k of Object.keys(headers)) if (k.toLowerCase() === 'content-length') delete headers[k];
      if (encoded) {
        res.setHeader('Content-Encoding', coding);
        // Proxies must not hand the compressed answer to a client that did not ask for it.
        res.setHeader('Vary', 'Accept-Encoding');
      }
      res.setHeader('Content-Length', out.length);
      original.writeHead(held?.status ?? res.statusCode, headers);
      original.end(out, typeof cb === 'function' ? (cb as () => void) : undefined);
    };
    if (body.length < minBytes) {
      send(body, false);
      return res;
    }
    (body.length >= SHARED_BODY_BYTES ? compressShared(body, coding) : compress(body, coding)).then(
      (out) => send(out, true),
      () => send(body, false),
    );
    return res;
  }) as typeof res.end;
}

/**
 * Makes `res` gzip its answer as a stream when it turns out to be an event stream (`text/event-stream`) and the
 * client accepts gzip: each write (one SSE frame) is compressed and flushed (Z_SYNC_FLUSH) on its own, so nothing
 * waits for more data. Anything else — an error answered as JSON, an explicit writeHead — passes through as it is.
 * Backpressure stays the socket's: a write reports `false` while the response needs draining. Brotli-only clients
 * get the stream uncompressed (browsers and Node's fetch all offer gzip). Call before the handler writes anything.
 */
export function compressEventStream(req: IncomingMessage, res: ServerResponse): void {
  if (negotiateCoding(req.headers['accept-encoding']) !== 'gzip') return;
  const original = { writeHead: res.writeHead.bind(res), write: res.write.bind(res), end: res.end.bind(res) };
  let zip: Gzip | undefined;
  let decided = false;
  const restore = () => {
    res.writeHead = original.writeHead;
    res.write = original.write;
    res.end = original.end;
  };
  const decide = () => {
    if (decided) return;
    decided = true;
    const type = String(res.getHeader('content-type') ?? '');
    if (res.headersSent || !/^text\/event-stream\b/i.test(type) || res.getHeader('content-encoding') !== undefined) {
      restore();
      return;
    }
    res.setHeader('Content-Encoding', 'gzip');
    res.setHeader('Vary', 'Accept-Encoding');
    res.removeHeader('Content-Length');
    const stream = createGzip({ level: 6, flush: constants.Z_SYNC_FLUSH });
    stream.on('data', (chunk: Buffer) => original.write(chunk));
    stream.on('end', () => original.end());
    stream.on('error', () => res.destroy());
    res.on('close', () => stream.destroy());
    zip = stream;
  };
  res.writeHead = ((...args: Parameters<ServerResponse['writeHead']>) => {
    // Node's first write calls writeHead itself (implicit headers): while compressing, that is ours going out.
    // Before that, headers given all at once are not a stream this wrapper set up for; it goes out as it is.
    if (!zip) {
      decided = true;
      restore();
    }
    return original.writeHead(...args);
  }) as typeof res.writeHead;
  res.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
    decide();
    if (!zip) return (original.write as (...a: unknown[]) => boolean)(chunk, encoding, cb);
    const done = typeof encoding === 'function' ? encoding : cb;
    const buf =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : (chunk as Uint8Array);
    zip.write(buf, typeof done === 'function' ? (done as () => void) : undefined);
    return !res.writableNeedDrain;
  }) as typeof res.write;
  res.end = ((chunk?: unknown, encoding?: unknown, cb?: unknown) => {
    decide();
    if (!zip) return (original.end as (...a: unknown[]) => ServerResponse)(chunk, encoding, cb);
    const done = [chunk, encoding, cb].find((a) => typeof a === 'function') as (() => void) | undefined;
    if (done) res.once('finish', done);
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') {
      zip.write(
        typeof chunk === 'string'
          ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
          : (chunk as Uint8Array),
      );
    }
    zip.end();
    return res;
  }) as typeof res.end;
}
