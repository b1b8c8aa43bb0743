/**
 * The REST surface under /api, generated from the procedures by trpc-to-openapi (stack-notes §2):
 * - every state-changing request passes the cross-site guard first (403), before its body is read,
 * - bodies are read with the size limit enforced while streaming (413), then pre-parsed here (malformed JSON → 400;
 *   an empty body is `{}`, so `POST …/start` needs no body),
 * - JSON bodies are never coerced: the adapter's string→number/boolean coercion is switched off (strict-input.ts),
 * - every error body is rewritten to exactly `{"error": "<message>"}` in a `res.end` wrapper,
 * - success statuses come from each procedure's `successStatus` meta (or ctx.responseStatus, e.g. bootc's 202),
 * - `GET /api/vms` is answered from the fleet view's cached JSON (same rows as the procedure, no re-serialisation).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import type { Identity } from './domain/identity';
import { LIVE_POSITION_HEADER, POSITIONED_LISTS } from './domain/live-resume';
import { registryOf } from './domain/registry';
import {
  FIRST_PAGE_RUNNING_HEADER,
  FIRST_PAGE_TEMPLATES_HEADER,
  FIRST_PAGE_TOTAL_HEADER,
  type FirstPage,
} from './domain/vm-first-page';
import { VmListInput } from './schemas/vms';
import type { CorralServices } from './domain/services';
import { redactAddresses } from './errors';
import { crossSiteRefusal } from './http-guards';
import { BodyTooLarge, DEFAULT_LIMITS, readBodyLimited } from './http/limits';
import { identityFor } from './identity-http';
import { appRouter } from './routers/_app';
import { handleVmExport, matchExportRoute } from './http/vm-export-route';
import { handleDataVolumeUpload, matchUploadRoute } from './http/datavolume-upload-route';
import { vmSubPathMatcher } from './rest-paths';
import { refuseAdapterCoercion } from './strict-input';
import type { Context, Meta } from './trpc';
import { createContextInner, zodMessage } from './trpc';

// Before the adapter is created: it would otherwise switch on coercion in the shared schemas at the first request.
refuseAdapterCoercion(appRouter);

type ApiRequest = IncomingMessage & { body?: unknown; apiError?: TRPCError; identity?: Identity };

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>;

const unknownVmSubPath = vmSubPathMatcher(procedures);

export function successStatusOf(path: string): number {
  return procedures[path]?._def.meta?.successStatus ?? 200;
}

/** The error's message; network addresses are removed for callers who are not admins (docs/security.md). */
export function messageOf(err: TRPCError | undefined, identity?: Identity): string {
  if (!err) return 'Request failed';
  if (err.cause instanceof ZodError) return zodMessage(err.cause);
  return identity?.admin ? err.message : redactAddresses(err.message);
}

export function sendJsonError(res: ServerResponse, status: number, message: string): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify({ error: message }));
}

export function createRestHandler(services: CorralServices, options: { maxBodyBytes?: number } = {}) {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_LIMITS.maxBodyBytes;
  const handler = createOpenApiNodeHttpHandler<typeof appRouter, IncomingMessage, ServerResponse>({
    router: appRouter,
    createContext: ({ req }): Context => {
      const identity = identityFor(req, services);
      (req as ApiRequest).identity = identity;
      return createContextInner({
        services,
        identity,
        http: { method: req.method ?? 'GET', headers: req.headers },
      });
    },
    responseMeta: ({ paths, errors, ctx }) => {
      if (errors.length > 0 || !paths?.[0]) return {};
      return { status: (ctx as Context | undefined)?.responseStatus ?? successStatusOf(paths[0]) };
    },
    onError: ({ error, req }) => {
      (req as ApiRequest).apiError = error;
      if (error.code === 'INTERNAL_SERVER_ERROR') console.error('[corral] /api internal error:', error.cause ?? error);
    },
  });

  /** `req.url` must already be stripped of the `/api` prefix. */
  return async function handleRest(req: ApiRequest, res: ServerResponse): Promise<void> {
    const method = req.method ?? 'GET';
    const pathname = (req.url ?? '/').split('?')[0] ?? '/';
    // Read before the rows are: every row of the answer is at least as new as this position (domain/live-resume.ts).
    if (method === 'GET' && POSITIONED_LISTS.has(pathname))
      res.setHeader(LIVE_POSITION_HEADER, registryOf(services).feed().currentId());
    if (method === 'GET' && (pathname === '/vms' || pathname === '/vms/')) {
      const query = (req.url ?? '').split('?')[1];
      const first = query === undefined ? undefined : firstPageOf(services, query);
      const body = query === undefined ? registryOf(services).vmListJson() : first?.body;
      if (body) {
        if (first) {
          res.setHeader(FIRST_PAGE_TOTAL_HEADER, String(first.page.total));
          res.setHeader(FIRST_PAGE_TEMPLATES_HEADER, String(first.page.templates));
          res.setHeader(FIRST_PAGE_RUNNING_HEADER, String(first.page.running));
        }
        res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
        res.end(body);
        return;
      }
    }
    const exportOf = matchExportRoute(method, pathname);
    if (exportOf) {
      await handleVmExport(services, req, res, exportOf, new URLSearchParams((req.url ?? '').split('?')[1] ?? ''));
      return;
    }
    const uploadOf = matchUploadRoute(method, pathname);
    if (uploadOf) {
      const search = new URLSearchParams((req.url ?? '').split('?')[1] ?? '');
      await handleDataVolumeUpload(services, req, res, uploadOf, search);
      return;
    }
    if (unknownVmSubPath(method, pathname)) {
      sendJsonError(res, 404, `Not found: no route ${method} /api${pathname}`);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      const hasBody =
        method !== 'DELETE' &&
        (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
      // A body-less action (`POST …/start`, `DELETE …`) counts as `{}`; anything with a body must say it is JSON.
      if (!hasBody) req.headers['content-type'] ??= 'application/json';
      const refusal = crossSiteRefusal(req.headers);
      if (refusal) {
        res.setHeader('Connection', 'close');
        sendJsonError(res, 403, refusal);
        return;
      }
      let raw = '';
      if (hasBody) {
        try {
          raw = (await readBodyLimited(req, maxBodyBytes)).toString('utf8');
        } catch (err) {
          if (!(err instanceof BodyTooLarge)) throw err;
          res.setHeader('Connection', 'close');
          sendJsonError(res, 413, err.message);
          return;
        }
      }
      if (method !== 'DELETE') {
        let body: unknown;
        try {
          body = raw.trim() ? JSON.parse(raw) : {};
        } catch {
          sendJsonError(res, 400, 'Malformed JSON body');
          return;
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body)) {
          sendJsonError(res, 400, 'the request body must be a JSON object');
          return;
        }
        if (nestingDepth(body) > MAX_BODY_DEPTH) {
          sendJsonError(res, 400, `the request body nests deeper than ${MAX_BODY_DEPTH} levels`);
          return;
        }
        req.body = body;
      }
    }
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((chunk?: unknown, ...rest: unknown[]) =>
      end(
        res.statusCode >= 400 ? JSON.stringify({ error: messageOf(req.apiError, req.identity) }) : chunk,
        ...rest,
      )) as typeof res.end;
    await handler(req, res);
  };
}

const firstPageBodies = new WeakMap<FirstPage, Buffer>();

/**
 * `GET /api/vms?limit=N` with nothing else: the fleet's first page (cached per fleet version, and its JSON with it)
 * and the whole list's counts in two headers, so a client showing 200 rows can say there are 50,000. Any other
 * query (a filter, a bad limit) is left to the procedure and its 400s.
 */
function firstPageOf(services: CorralServices, query: string): { page: FirstPage; body: Buffer } | undefined {
  const params = new URLSearchParams(query);
  if ([...params.keys()].join() !== 'limit') return undefined;
  const input = VmListInput.safeParse({ limit: params.get('limit') });
  if (!input.success || input.data?.limit === undefined) return undefined;
  const page = registryOf(services).vmFirstPage(input.data.limit);
  let body = firstPageBodies.get(page);
  if (!body) {
    body = Buffer.from(JSON.stringify(page.rows), 'utf8');
    firstPageBodies.set(page, body);
  }
  return { page, body };
}

/** No Corral input nests anywhere near this; deeper bodies would overflow the stack of recursive code downstream. */
const MAX_BODY_DEPTH = 32;

/** How deep objects and arrays nest in a parsed JSON value, counted without recursion. */
export function nestingDepth(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_BODY_DEPTH) return deepest;
    for (const child of Object.values(v)) stack.push([child, depth + 1]);
  }
  return deepest;
}
