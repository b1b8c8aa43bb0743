/**
 * The OpenAPI document, generated from the procedures and post-processed (stack-notes §2): real success statuses,
 * one `Error` schema (`{"error": string}`) for every error response, no fake bearer security.
 */
import { generateOpenApiDocument } from 'trpc-to-openapi';
import { appRouter } from './routers/_app';
import { successStatusOf } from './rest';

type Json = Record<string, unknown>;

export const API_VERSION = '1.0.0';

export function buildOpenApiDocument(baseUrl = '/api'): Json {
  const doc = generateOpenApiDocument(appRouter, {
    title: 'Corral API',
    version: API_VERSION,
    baseUrl,
    description:
      'Corral: a Proxmox-style control plane for KubeVirt. Every non-2xx answer is {"error": "<message>"}: 400 invalid input, 403 read-only caller or cross-site request, 404 no such object, 409 state conflict, 501 not available, 502/503/504 cluster unreachable or failing.',
  }) as unknown as Json;
  const errorRef = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Json>>;
  for (const ops of Object.values(paths)) {
    for (const op of Object.values(ops)) {
      const responses = (op.responses ?? {}) as Record<string, Json>;
      delete op.security;
      delete responses['401'];
      const status = successStatusOf(String(op.operationId ?? '').replace(/-/g, '.'));
      if (status !== 200 && responses['200']) {
        responses[String(status)] = responses['200'];
        delete responses['200'];
      }
      if (op.operationId === 'vms-create' && responses['201']) {
        responses['202'] = {
          description: 'bootc source: the build runs as a task',
          content: (responses['201'] as Json).content,
        };
      }
      for (const [code, r] of Object.entries(responses)) if (Number(code) >= 400) r.content = errorRef;
    }
  }
  const components = (doc.components ?? {}) as Json;
  const schemas = (components.schemas ?? {}) as Json;
  for (const key of Object.keys(schemas)) if (key.startsWith('error.')) delete schemas[key];
  schemas.Error = { type: 'object', properties: { error: { type: 'string' } }, required: ['error'] };
  components.schemas = schemas;
  delete components.securitySchemes;
  doc.components = components;
  return doc;
}
