/**
 * `GET /metrics`: the Prometheus exposition (docs/server.md). It sends the collector's prebuilt snapshot behind
 * three collection lines, so a scrape never reads the cluster and never re-renders the fleet. Without
 * `--metrics` it still answers 200, with `corral_collection_success 0`: a scraper that got a 503 would record
 * nothing, and "Corral is up but not collecting" is the state worth an alert. It passes the same front door as
 * every route (Host allow-list, URL limit) but is no page: no UI CSP, and nothing but GET/HEAD.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { collectionOffText, type PrometheusCollector } from '../domain/prometheus';
import { PROMETHEUS_CONTENT_TYPE } from '../domain/prometheus-text';
import { sendJsonError } from '../rest';

export function serveMetrics(req: IncomingMessage, res: ServerResponse, collector: PrometheusCollector | undefined) {
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
  const { head, body } = collector ? collector.render() : { head: collectionOffText(), body: Buffer.alloc(0) };
  res.writeHead(200, {
    'Content-Type': PROMETHEUS_CONTENT_TYPE,
    'Content-Length': Buffer.byteLength(head) + body.length,
    // Every answer is a new reading (the age line differs); a cache in between would hide a stuck collector.
    'Cache-Control': 'no-store',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  res.write(head);
  res.end(body);
}
