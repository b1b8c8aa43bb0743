/**
 * The OpenAPI v3 documents `kubectl apply` needs (kube-sim-spec §2.6): a root listing every served group-version
 * and, per group-version, one PATCH operation per kind carrying `x-kubernetes-group-version-kind` and the
 * `fieldValidation` parameter (so kubectl sends `fieldValidation=Strict` and skips client-side validation).
 * Strategic merge patch is deliberately not advertised: without full schemas kubectl falls back to its compiled-in
 * SMP for built-in kinds and to merge patch for custom resources, which is exactly what a real CRD GV gives it.
 */
import { createHash } from 'node:crypto';
import type { KindSpec } from '../resources/kinds.js';
import { swaggerDefinitions } from '../resources/schema.js';
import type { DiscoveryInput } from './discovery.js';

interface GroupVersion {
  path: string;
  group: string;
  version: string;
  kinds: KindSpec[];
}

function groupVersions(input: DiscoveryInput): GroupVersion[] {
  const out = new Map<string, GroupVersion>();
  for (const k of input.kinds) {
    for (const version of [k.version, ...(k.aliasVersions ?? [])]) {
      const path = k.group ? `apis/${k.group}/${version}` : `api/${version}`;
      const gv = out.get(path) ?? { path, group: k.group, version, kinds: [] };
      gv.kinds.push(k);
      out.set(path, gv);
    }
  }
  return [...out.values()];
}

const PARAMETERS = ['dryRun', 'fieldManager', 'fieldValidation', 'force'].map((name) => ({
  name,
  in: 'query',
  schema: { type: name === 'force' ? 'boolean' : 'string' },
}));

function schemaName(gv: GroupVersion, k: KindSpec): string {
  const prefix = gv.group ? gv.group.split('.').reverse().join('.') : 'io.k8s.api.core';
  return `${prefix}.${gv.version}.${k.kind}`;
}

/** Swagger-2 definitions as OpenAPI v3 component schemas (`#/definitions/` → `#/components/schemas/`), per file. */
const convertedSchemas = new Map<string, Record<string, Record<string, unknown>>>();
function upstreamSchemas(file: 'kubevirt' | 'cdi'): Record<string, Record<string, unknown>> {
  let converted = convertedSchemas.get(file);
  if (!converted) {
    converted = JSON.parse(
      JSON.stringify(swaggerDefinitions(file)).replaceAll('"#/definitions/', '"#/components/schemas/'),
    ) as Record<string, Record<string, unknown>>;
    convertedSchemas.set(file, converted);
  }
  return converted;
}

function document(gv: GroupVersion): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  // KubeVirt and CDI group-versions carry the upstream schemas (so `kubectl explain` works); others a stub per kind.
  const files = [...new Set(gv.kinds.flatMap((k) => (k.schema ? [k.schema.file] : [])))];
  const schemas: Record<string, unknown> = Object.assign({}, ...files.map(upstreamSchemas)) as Record<string, unknown>;
  for (const k of gv.kinds) {
    const gvk = { group: gv.group, version: gv.version, kind: k.kind };
    const base = `/${gv.path}${k.namespaced ? '/namespaces/{namespace}' : ''}/${k.plural}/{name}`;
    const opName = `patch${gv.group.replace(/(^|[.-])(\w)/g, (_m, _s, c: string) => c.toUpperCase())}${gv.version.replace(/^\w/, (c) => c.toUpperCase())}${k.namespaced ? 'Namespaced' : ''}${k.kind}`;
    paths[base] = {
      patch: {
        operationId: opName,
        'x-kubernetes-action': 'patch',
        'x-kubernetes-group-version-kind': gvk,
        parameters: PARAMETERS,
        requestBody: {
          required: true,
          content: {
            'application/json-patch+json': { schema: { type: 'object' } },
            'application/merge-patch+json': { schema: { type: 'object' } },
            'application/apply-patch+yaml': { schema: { type: 'object' } },
          },
        },
        responses: { '200': { description: 'OK' } },
      },
    };
    const upstream = k.schema ? upstreamSchemas(k.schema.file)[k.schema.definition] : undefined;
    if (upstream && k.schema) schemas[k.schema.definition] = { ...upstream, 'x-kubernetes-group-version-kind': [gvk] };
    else schemas[schemaName(gv, k)] = { type: 'object', 'x-kubernetes-group-version-kind': [gvk] };
  }
  return { openapi: '3.0.0', info: { title: 'Kubernetes', version: 'v1.32.0' }, paths, components: { schemas } };
}

/** Documents only change with the kind registry, which is fixed once the server runs. */
const documentCache = new Map<string, { doc: Record<string, unknown>; hash: string }>();
function cachedDocument(gv: GroupVersion): { doc: Record<string, unknown>; hash: string } {
  const cacheKey = `${gv.path}:${gv.kinds.map((k) => k.plural).join(',')}`;
  let entry = documentCache.get(cacheKey);
  if (!entry) {
    const doc = document(gv);
    entry = { doc, hash: hashOf(doc) };
    documentCache.set(cacheKey, entry);
  }
  return entry;
}

const hashOf = (doc: unknown) =>
  createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 32).toUpperCase();

export function openApiRoot(input: DiscoveryInput): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  for (const gv of groupVersions(input))
    paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${cachedDocument(gv).hash}` };
  return { paths };
}

/** The document for `api/v1` or `apis/<group>/<version>`; undefined when not served. */
export function openApiGroupVersion(input: DiscoveryInput, path: string): Record<string, unknown> | undefined {
  const gv = groupVersions(input).find((g) => g.path === path);
  return gv ? cachedDocument(gv).doc : undefined;
}
