/**
 * `GET /metrics`: the Prometheus exposition (docs/server.md). It sends the collector's prebuilt snapshot followed
 * by three collection lines, so a scrape never reads the cluster and never re-renders the fleet. Without
 * `--metrics` it still answers 200, with `corral_collection_success 0`: a scraper that got a 503 would record
 * nothing, and "Corral is up but not collecting" is the state worth an alert. It passes the same front door as
 * every route (Host allow-list, URL limit) but is no page: no UI CSP, and nothing but GET/HEAD.
 *
 * gzip (Prometheus asks for it on every scrape) without compressing per scrape: each snapshot is deflated once,
 * in the thread pool, ending on a sync flush instead of a final block; a scrape appends the collection lines as
 * a small final deflate block and the gzip trailer (CRC-32 continued over those lines, total length). The answer
 * is one ordinary gzip member, which every client reads (curl stops after the first of several members).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import { constants, crc32, deflateRaw, deflateRawSync } from 'node:zlib';
import { collectionOffText, type PrometheusCollector } from '../domain/prometheus';
import { PROMETHEUS_CONTENT_TYPE } from '../domain/prometheus-text';
import { sendJsonError } from '../rest';

const deflateRawAsync = promisify(deflateRaw);

/** ID1 ID2, CM = deflate, no flags, no mtime, XFL 0, OS unknown. */
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);

interface DeflatedSnapshot {
  /** Raw deflate blocks of the snapshot, ending byte-aligned on a sync flush (no final block). */
  blocks: Buffer;
  crc: number;
}

/** One per snapshot Buffer; dropped with it when the next collection replaces it. */
const deflated = new WeakMap<Buffer, Promise<DeflatedSnapshot>>();

function deflateSnapshot(fleet: Buffer): Promise<DeflatedSnapshot> {
  let entry = deflated.get(fleet);
  if (!entry) {
    // Level 1: the labels repeat so much that it already shrinks the text ~10×, at a fraction of level 6's CPU.
    entry = deflateRawAsync(fleet, { level: 1, finishFlush: constants.Z_SYNC_FLUSH }).then((blocks) => ({
      blocks,
      crc: crc32(fleet),
    }));
    deflated.set(fleet, entry);
  }
  return entry;
}

/** gzip unless the client does not list it (or refuses it with q=0). */
function wantsGzip(req: IncomingMessage): boolean {
  const header = req.headers['accept-encoding'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((part) => {
    const [coding = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return coding.trim() === 'gzip' && (q === undefined || Number(q.slice(2)) > 0);
  });
}

async function gzipBody(fleet: Buffer, collection: Buffer): Promise<Buffer[]> {
  const snapshot = await deflateSnapshot(fleet);
  const trailer = Buffer.alloc(8);
  trailer.writeUInt32LE(crc32(collection, snapshot.crc) >>> 0, 0);
  trailer.writeUInt32LE((fleet.length + collection.length) % 2 ** 32, 4);
  return [GZIP_HEADER, snapshot.blocks, deflateRawSync(collection), trailer];
}

export async function serveMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  collector: PrometheusCollector | undefined,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('Allow', 'GET, HEAD');
    res.setHeader('Connection', 'close'); // a body, if any, is not read
    sendJsonError(res, 405, `${req.method ?? ''} is not allowed on /metrics (GET only)`);
    return;
  }
  const query = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
  const unknown = [...query.keys()][0];
  if (unknown !== undefined) {
    sendJsonError(res, 400, `unknown query parameter ${JSON.stringify(unknown)}: /metrics takes none`);
    return;
  }
  const { fleet, collection } = collector
    ? collector.render()
    : { fleet: Buffer.alloc(0), collection: collectionOffText() };
  const tail = Buffer.from(collection, 'utf8');
  const gzip = fleet.length > 0 && wantsGzip(req);
  const parts = gzip ? await gzipBody(fleet, tail) : [fleet, tail];
  res.writeHead(200, {
    'Content-Type': PROMETHEUS_CONTENT_TYPE,
    'Content-Length': parts.reduce((n, p) => n + p.length, 0),
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
    Vary: 'Accept-Encoding',
    // Every answer is a new reading (the age line differs); a cache in between would hide a stuck collector.
    'Cache-Control': 'no-store',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  for (const part of parts.slice(0, -1)) res.write(part);
  res.end(parts.at(-1));
}
