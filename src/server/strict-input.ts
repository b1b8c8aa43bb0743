/**
 * trpc-to-openapi switches on zod's coercion (`_def.coerce = true`) for every number, boolean, bigint and date field of
 * a REST input, in the body as well as the query, by mutating the shared schema (stack-notes §2). After the first
 * REST request, `{"start": "false"}` then parsed as `true` — over REST and over tRPC alike. Corral parses query
 * strings explicitly instead (`queryInt`, `queryBool` in schemas/common.ts), so coercion is pinned off here, once,
 * before the adapter ever sees a schema.
 */
import type { AnyRouter } from '@trpc/server';
import type { z } from 'zod';

const COERCIBLE = new Set(['number', 'boolean', 'bigint', 'date']);

interface Def {
  type: string;
  coerce?: boolean;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  left?: z.ZodType;
  right?: z.ZodType;
  valueType?: z.ZodType;
  catchall?: z.ZodType;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** Every schema reachable from `schema` (objects, wrappers, pipes, arrays, unions, records). */
export function walkSchema(schema: z.ZodType, visit: (s: z.ZodType, def: Def) => void, seen = new Set<object>()): void {
  if (seen.has(schema)) return;
  seen.add(schema);
  const def = defOf(schema);
  visit(schema, def);
  const children = [
    ...Object.values(def.shape ?? {}),
    def.innerType,
    def.in,
    def.out,
    def.element,
    ...(def.options ?? []),
    def.left,
    def.right,
    def.valueType,
  ];
  for (const child of children)
    if (child && typeof child === 'object' && '_zod' in child) walkSchema(child, visit, seen);
}

/** Pins `coerce` to false on every coercible schema in the router's inputs; the adapter's later writes are ignored. */
export function refuseAdapterCoercion(router: AnyRouter): void {
  const procedures = router._def.procedures as Record<string, { _def: { inputs: z.ZodType[] } }>;
  for (const procedure of Object.values(procedures))
    for (const input of procedure._def.inputs)
      walkSchema(input, (_s, def) => {
        if (!COERCIBLE.has(def.type)) return;
        const own = Object.getOwnPropertyDescriptor(def, 'coerce');
        if (own && !own.configurable) return;
        Object.defineProperty(def, 'coerce', { get: () => false, set: () => undefined, configurable: false });
      });
}
