/** The strict-input rules held against every procedure, so a route added later cannot slip past them. */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { redactAddresses } from './errors';
import { appRouter } from './routers/_app';
import { refuseAdapterCoercion, walkSchema } from './strict-input';
import type { Meta } from './trpc';

type Procedure = { _def: { inputs: z.ZodType[]; meta?: Meta; type: string } };
const procedures = Object.entries(appRouter._def.procedures as unknown as Record<string, Procedure>);

describe('every procedure input', () => {
  it.each(procedures)('%s: objects are strict (unknown fields are refused)', (_name, procedure) => {
    for (const input of procedure._def.inputs)
      walkSchema(input, (_s, def) => {
        if (def.type !== 'object') return;
        expect(def.catchall && (def.catchall as unknown as { _zod: { def: { type: string } } })._zod.def.type).toBe(
          'never',
        );
      });
  });

  it.each(procedures.filter(([, p]) => ['GET', 'DELETE'].includes(p._def.meta?.openapi?.method ?? '')))(
    '%s: query numbers and booleans are parsed explicitly (queryInt / queryBool), not by coercion',
    (_name, procedure) => {
      for (const input of procedure._def.inputs) {
        const shape = (input as unknown as { _zod: { def: { innerType?: z.ZodObject; shape?: object } } })._zod.def;
        const fields = Object.values((shape.innerType?.shape ?? shape.shape ?? {}) as Record<string, z.ZodType>);
        for (const field of fields) {
          const unwrapped = field instanceof z.ZodOptional ? field.unwrap() : field;
          expect(unwrapped).not.toBeInstanceOf(z.ZodNumber);
          expect(unwrapped).not.toBeInstanceOf(z.ZodBoolean);
        }
      }
    },
  );
});

describe('refuseAdapterCoercion', () => {
  it('keeps coercion off even after something switches it on', () => {
    const schema = z.strictObject({
      n: z.number(),
      b: z.boolean().optional(),
      inner: z.strictObject({ x: z.number() }),
    });
    const router = { _def: { procedures: { p: { _def: { inputs: [schema] } } } } };
    refuseAdapterCoercion(router as never);
    for (const def of [schema.shape.n, schema.shape.b.unwrap(), schema.shape.inner.shape.x].map(
      (s) => (s as unknown as { _zod: { def: { coerce?: boolean } } })._zod.def,
    ))
      def.coerce = true; // what trpc-to-openapi does at its first request
    expect(schema.safeParse({ n: '5', b: 'false', inner: { x: '1' } }).success).toBe(false);
    expect(schema.safeParse({ n: 5, b: false, inner: { x: 1 } }).success).toBe(true);
  });
});

describe('redactAddresses', () => {
  it('removes URLs, addresses and host:port from messages for non-admins', () => {
    expect(redactAddresses('connect ECONNREFUSED 10.0.0.1:6443')).toBe('connect ECONNREFUSED <address>');
    expect(redactAddresses('GET https://10.96.0.1:443/apis/kubevirt.io/v1 failed')).toBe('GET <address> failed');
    expect(redactAddresses('dial [fd00::1]:6443 timed out')).toBe('dial <address> timed out');
    expect(redactAddresses('kubernetes.default.svc:443 refused')).toBe('<address> refused');
    expect(redactAddresses('VM tailvm/web not found')).toBe('VM tailvm/web not found');
  });
});
