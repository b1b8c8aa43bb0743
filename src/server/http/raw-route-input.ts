/**
 * Input of the raw streaming routes (disk export, image upload), which tRPC does not parse for them: the path's
 * namespace/name and the query string, each through its zod schema, with the same 400 wording as every procedure
 * (a repeated query key, bad percent-encoding and a schema refusal each name what is wrong).
 */
import type { z } from 'zod';
import { ZodError } from 'zod';
import { CorralError } from '../errors';
import { zodMessage } from '../trpc';

export function parseRawRouteInput<P extends z.ZodType, Q extends z.ZodType>(
  params: { namespace: string; name: string },
  search: URLSearchParams,
  pathSchema: P,
  querySchema: Q,
): { path: z.infer<P>; query: z.infer<Q> } {
  const query: Record<string, string> = {};
  for (const [key, value] of search) {
    if (key in query) throw new CorralError('BAD_REQUEST', `${key}: must be given once`);
    query[key] = value;
  }
  let decoded: { namespace: string; name: string };
  try {
    decoded = { namespace: decodeURIComponent(params.namespace), name: decodeURIComponent(params.name) };
  } catch {
    throw new CorralError('BAD_REQUEST', 'the path is not valid percent-encoding');
  }
  try {
    return { path: pathSchema.parse(decoded) as z.infer<P>, query: querySchema.parse(query) as z.infer<Q> };
  } catch (err) {
    if (err instanceof ZodError) throw new CorralError('BAD_REQUEST', zodMessage(err));
    throw err;
  }
}
