/**
 * The REST surface under /api, generated from the procedures by trpc-to-openapi (stack-notes §2):
 * - bodies are pre-parsed here (malformed JSON → 400; an empty body is `{}`, so `POST …/start` needs no body),
 * - every state-changing request passes the cross-site guard first (403),
 * - every error body is rewritten to exactly `{"error": "<message>"}` in a `res.end` wrapper,
 * - success statuses come from each procedure's `successStatus` meta (or ctx.responseStatus, e.g. bootc's 202),
 * - `GET /api/vms` is answered from the fleet view's cached JSON (same rows as the procedure, no re-serialisation).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { buffer } from 'node:stream/consumers';
import type { TRPCError } from '@trpc/server';
import { createOpenApiNodeHttpHandler } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import type { CorralServices } from './domain/services';
import { crossSiteRefusal } from './http-guards';
import { identityFor } from './identity-http';
import { appRouter } from './routers/_app';
import type { Context, Meta } from './trpc';
import { createContextInner, zodMessage } from './trpc';

const MAX_BODY_BYTES = 1024 * 1024;

type ApiRequest = IncomingMessage & { body?: unknown; apiError?: TRPCError };

const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta?: Meta } }>;

export function successStatusOf(path: string): number {
  return procedures[path]?._def.meta?.successStatus ?? 200;
}

export function messageOf(err: TRPCError | undefined): string {
  if (!err) return 'Request failed';
  if (err.cause instanceof ZodError) return zodMessage(err.cause);
  return err.message;
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

export function createRestHandler(services: CorralServices) {
  const handler = createOpenApiNodeHttpHandler<typeof appRouter, IncomingMessage, ServerResponse>({
    router: appRouter,
    createContext: ({ req }): Context =>
      createContextInner({
        services,
        identity: identityFor(req, services),
        http: { method: req.method ?? 'GET', headers: req.headers },
      }),
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
    if (method === 'GET' && (pathname === '/vms' || pathname === '/vms/') && !(req.url ?? '').includes('?')) {
      const body = services.vms.listJson();
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': body.length });
      res.end(body);
      return;
    }
    if (method !== 'GET' && method !== 'HEAD') {
      let raw = '';
      if (method !== 'DELETE') {
        try {
          raw = await readBody(req);
        } catch (err) {
          sendJsonError(res, 413, (err as Error).message);
          return;
        }
      }
      // A body-less action (`POST …/start`, `DELETE …`) counts as `{}`; anything with a body must say it is JSON.
      if (!raw.trim()) req.headers['content-type'] ??= 'application/json';
      const refusal = crossSiteRefusal(req.headers);
      if (refusal) {
        sendJsonError(res, 403, refusal);
        return;
      }
      if (method !== 'DELETE') {
        try {
          req.body = raw.trim() ? JSON.parse(raw) : {};
        } catch {
          sendJsonError(res, 400, 'Malformed JSON body');
          return;
        }
      }
    }
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    res.end = ((chunk?: unknown, ...rest: unknown[]) =>
      end(
        res.statusCode >= 400 ? JSON.stringify({ error: messageOf(req.apiError) }) : chunk,
        ...rest,
      )) as typeof res.end;
    await handler(req, res);
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new Error(`request body larger than ${MAX_BODY_BYTES} bytes`);
  const body = await buffer(req);
  if (body.length > MAX_BODY_BYTES) throw new Error(`request body larger than ${MAX_BODY_BYTES} bytes`);
  return body.toString('utf8');
}
