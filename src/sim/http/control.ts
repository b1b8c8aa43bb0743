/**
 * The simulator's own control interface under `/_sim/` (never faulted, never part of the Kubernetes API):
 *   GET    /_sim/faults            current fault configuration
 *   POST   /_sim/faults            replace it (JSON FaultConfig fields; omitted ones reset to "no fault")
 *   PATCH  /_sim/faults            change some fields
 *   DELETE /_sim/faults            clear all faults
 *   POST   /_sim/faults/drop-watches   end every open watch stream now → {"dropped": n}
 *   POST   /_sim/faults/expire-watches compact the watch history and end the open watch streams: clients
 *                                       resuming from an older resourceVersion get ERROR 410 Expired → {"dropped": n}
 *   GET    /_sim/settings          {"metricsServer": bool, "importMiBps"?: number}
 *   PATCH  /_sim/settings          {"metricsServer": false} flips metrics.k8s.io at runtime;
 *                                  {"importMiBps": 10} sets every CDI import's bandwidth (null: each source's own)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FaultConfig, FaultInjector } from '../faults/fault-injector.js';
import type { SimContext } from '../module.js';
import { ApiError } from '../store/errors.js';
import type { WatchRegistry } from './watch.js';
import { isPlainObject, notFoundPath, parseJson, readBody, sendJson } from './wire.js';

export interface ControlContext {
  ctx: SimContext;
  faults: FaultInjector;
  watches: WatchRegistry;
}

async function jsonObject(req: IncomingMessage): Promise<Record<string, unknown>> {
  const text = await readBody(req);
  const body = text.trim() ? parseJson(text) : {};
  if (!isPlainObject(body)) throw new ApiError(400, 'BadRequest', 'the body must be a JSON object');
  return body;
}

const notAllowed = () =>
  new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export async function handleControl(
  c: ControlContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const method = req.method ?? 'GET';
  const path = url.pathname.replace(/\/+$/, '');
  if (path === '/_sim/faults') {
    if (method === 'GET') return sendJson(res, 200, c.faults.get());
    if (method === 'POST' || method === 'PUT')
      return sendJson(res, 200, c.faults.set((await jsonObject(req)) as Partial<FaultConfig>));
    if (method === 'PATCH') return sendJson(res, 200, c.faults.update((await jsonObject(req)) as Partial<FaultConfig>));
    if (method === 'DELETE') {
      c.faults.clear();
      return sendJson(res, 200, c.faults.get());
    }
    throw notAllowed();
  }
  if (path === '/_sim/faults/drop-watches') {
    if (method !== 'POST') throw notAllowed();
    return sendJson(res, 200, { dropped: c.faults.dropWatches() });
  }
  if (path === '/_sim/faults/expire-watches') {
    if (method !== 'POST') throw notAllowed();
    return sendJson(res, 200, { dropped: c.faults.expireWatches() });
  }
  if (path === '/_sim/settings') {
    if (method === 'GET') return sendJson(res, 200, { ...c.ctx.settings });
    if (method === 'PATCH' || method === 'POST') {
      const body = await jsonObject(req);
      // Every field checked before any is applied: a refused body changes nothing.
      for (const [k, v] of Object.entries(body)) {
        if (k === 'metricsServer') {
          if (typeof v !== 'boolean') throw new ApiError(400, 'BadRequest', 'metricsServer must be a boolean');
        } else if (k === 'importMiBps') {
          if (v !== null && !(typeof v === 'number' && Number.isFinite(v) && v > 0))
            throw new ApiError(400, 'BadRequest', 'importMiBps must be a positive number or null');
        } else throw new ApiError(400, 'BadRequest', `unknown setting "${k}"`);
      }
      if (typeof body.metricsServer === 'boolean') c.ctx.settings.metricsServer = body.metricsServer;
      if (body.importMiBps === null) delete c.ctx.settings.importMiBps;
      else if (typeof body.importMiBps === 'number') c.ctx.settings.importMiBps = body.importMiBps;
      return sendJson(res, 200, { ...c.ctx.settings });
    }
    throw notAllowed();
  }
  throw notFoundPath();
}
