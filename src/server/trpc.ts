/**
 * The one initTRPC of Corral: context, meta (OpenAPI + success status), the error mapping from CorralError, and
 * the procedure builders. `createContextInner` is pure so tests build it directly and use `createCaller`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { initTRPC, TRPCError } from '@trpc/server';
import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';
import { ZodError } from 'zod';
import { asKubeCaller } from './cluster/rate-limiter';
import { CorralError, redactAddresses, type CorralErrorCode } from './errors';
import type { Identity } from './domain/identity';
import { registryOf } from './domain/registry';
import { ContextName } from './schemas/common';
import type { CorralServices } from './domain/services';
import { crossSiteRefusal } from './http-guards';

export type Meta = OpenApiMeta<{ successStatus?: 200 | 201 | 202 | 204 }>;

export interface HttpInfo {
  method: string;
  headers: IncomingHttpHeaders;
}

export interface Context {
  services: CorralServices;
  identity: Identity;
  /** Present for HTTP callers (REST, /trpc); absent for in-process callers, which are trusted. */
  http?: HttpInfo;
  /** A procedure may override its success status for this response (e.g. bootc create answers 202). */
  responseStatus?: number;
}

export function createContextInner(opts: { services: CorralServices; identity: Identity; http?: HttpInfo }): Context {
  return { services: opts.services, identity: opts.identity, http: opts.http };
}

const TRPC_CODE: Record<CorralErrorCode, TRPC_ERROR_CODE_KEY> = {
  BAD_REQUEST: 'BAD_REQUEST',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  CONFLICT: 'CONFLICT',
  UNPROCESSABLE: 'UNPROCESSABLE_CONTENT',
  NOT_IMPLEMENTED: 'NOT_IMPLEMENTED',
  BAD_GATEWAY: 'BAD_GATEWAY',
  UNAVAILABLE: 'SERVICE_UNAVAILABLE',
  TIMEOUT: 'GATEWAY_TIMEOUT',
};

export function toTrpcError(err: unknown): unknown {
  if (err instanceof CorralError) return new TRPCError({ code: TRPC_CODE[err.code], message: err.message, cause: err });
  return err;
}

/** `name: must be …; cpu: must be at most 128` — what REST answers and the UI shows for invalid input. */
export function zodMessage(err: ZodError): string {
  return err.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ');
}

const t = initTRPC
  .meta<Meta>()
  .context<Context>()
  .create({
    transformer: superjson,
    errorFormatter: ({ shape, error, ctx }) => ({
      ...shape,
      message:
        error.cause instanceof ZodError
          ? zodMessage(error.cause)
          : ctx?.identity.admin
            ? shape.message
            : redactAddresses(shape.message),
    }),
    // SSE subscriptions ping inside the server's idle time-out, so an idle live feed is never cut (http/limits.ts).
    sse: { ping: { enabled: true, intervalMs: 20_000 } },
  });

const mapErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof CorralError) {
    const mapped = toTrpcError(result.error.cause) as TRPCError;
    return { ...result, error: mapped };
  }
  return result;
});

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const mergeRouters = t.mergeRouters;
/**
 * The cluster requests a procedure makes (and the tasks it starts) queue as its caller's in the cluster's fair
 * rate limiter (cluster/rate-limiter.ts), so one user's bulk action cannot starve another user's clicks.
 */
const queueAsCaller = t.middleware(({ ctx, next }) => asKubeCaller(ctx.identity.login, () => next()));

/**
 * Several clusters (domain/registry.ts): a request naming a `context` acts on that cluster's services; without one
 * on the first's. It runs before the input is parsed, so an unknown context is a 404 naming it even where the
 * procedure's own schema would then refuse the field.
 */
const selectCluster = t.middleware(async ({ ctx, next, getRawInput }) => {
  let raw: unknown;
  try {
    raw = await getRawInput();
  } catch {
    return next(); // an unreadable body is the input parser's to explain
  }
  const context = raw && typeof raw === 'object' ? (raw as { context?: unknown }).context : undefined;
  // A malformed name is the schema's 400 to explain; only a well-formed one is looked up.
  if (!ContextName.safeParse(context).success) return next();
  return next({ ctx: { services: registryOf(ctx.services).get(context as string) } });
});

export const publicProcedure = t.procedure.use(mapErrors).use(queueAsCaller).use(selectCluster);

/** State-changing procedures: admins only (CORRAL_ADMINS), and never from another site. */
export const adminProcedure = publicProcedure.use(({ ctx, next }) => {
  if (ctx.http) {
    const refusal = crossSiteRefusal(ctx.http.headers);
    if (refusal) throw new TRPCError({ code: 'FORBIDDEN', message: refusal });
  }
  if (!ctx.identity.admin) {
    throw new TRPCError({
      code: 'FORBIDDEN',
      message:
        ctx.identity.readOnlyReason ??
        `${ctx.identity.login} is read-only: only logins in CORRAL_ADMINS may change state`,
    });
  }
  return next();
});
