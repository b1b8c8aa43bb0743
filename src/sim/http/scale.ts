/**
 * The `scale` subresource of Deployments (`kubectl scale`, HorizontalPodAutoscaler-style clients): an
 * `autoscaling/v1` Scale view of `spec.replicas`, `status.replicas` and the selector. GET reads it; PUT and the
 * JSON patch types write `spec.replicas` back to the Deployment (a stale `metadata.resourceVersion` is a 409).
 */
import { ApiError, badRequest, invalid, notFound } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import { resourceKey } from '../store/types.js';
import { jsonPatch, mergePatch, PATCH_TYPES, strategicMerge } from './patch.js';
import { readJsonOrYamlBody } from './request-body.js';
import { type ApiContext, parsePatchBody, patchType, type ResourceCall } from './resource-handlers.js';
import { isPlainObject, readBody, sendJson } from './wire.js';

interface Requirement {
  key: string;
  operator: string;
  values?: string[];
}

/** A LabelSelector in the string form Scale.status.selector carries. */
export function selectorString(selector: unknown): string {
  if (!isPlainObject(selector)) return '';
  const parts = Object.entries((selector.matchLabels ?? {}) as Record<string, string>).map(([k, v]) => `${k}=${v}`);
  for (const r of (selector.matchExpressions ?? []) as Requirement[]) {
    const values = [...(r.values ?? [])].sort().join(',');
    if (r.operator === 'In') parts.push(`${r.key} in (${values})`);
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${values})`);
    else if (r.operator === 'Exists') parts.push(r.key);
    else if (r.operator === 'DoesNotExist') parts.push(`!${r.key}`);
  }
  return parts.join(',');
}

function scaleOf(obj: KObject): KObject {
  const spec = (obj.spec ?? {}) as { replicas?: number; selector?: unknown };
  const status = (obj.status ?? {}) as { replicas?: number };
  const { name, namespace, uid, resourceVersion, creationTimestamp } = obj.metadata;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: { name, namespace, uid, resourceVersion, creationTimestamp },
    spec: { replicas: spec.replicas ?? 1 },
    status: { replicas: status.replicas ?? 0, selector: selectorString(spec.selector) },
  };
}

function wantedReplicas(scale: unknown): number {
  if (!isPlainObject(scale)) throw badRequest('the Scale body must be an object');
  if (scale.kind !== undefined && scale.kind !== 'Scale')
    throw badRequest(`the kind in the data (${String(scale.kind)}) does not match the expected kind (Scale)`);
  const replicas = isPlainObject(scale.spec) ? scale.spec.replicas : undefined;
  if (replicas === undefined) return 0; // Scale.spec.replicas is a plain int32: absent means 0
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > 2 ** 31 - 1) {
    throw invalid('Scale', '', '', [
      {
        field: 'spec.replicas',
        message: `Invalid value: ${JSON.stringify(replicas)}: must be greater than or equal to 0`,
      },
    ]);
  }
  return replicas;
}

export async function handleScale(ctx: ApiContext, call: ResourceCall): Promise<void> {
  const { type, req, res, query } = call;
  const key = resourceKey(type.group, type.plural);
  const method = req.method ?? 'GET';
  const current = ctx.store.get(key, call.namespace, call.name!);
  if (!current) throw notFound(type.group, type.plural, call.name!);
  if (method === 'GET') return sendJson(res, 200, scaleOf(current));
  let next: unknown;
  if (method === 'PUT') {
    next = await readJsonOrYamlBody(req);
    if (next === undefined) throw badRequest('the request body is empty');
  } else if (method === 'PATCH') {
    const kind = patchType(req);
    if (kind === PATCH_TYPES.apply || kind === PATCH_TYPES.applyCbor)
      throw new ApiError(415, 'UnsupportedMediaType', 'server-side apply is not supported on deployments/scale');
    const patch = parsePatchBody(kind, await readBody(req));
    const base = scaleOf(current);
    next =
      kind === PATCH_TYPES.json
        ? jsonPatch(base, patch)
        : kind === PATCH_TYPES.merge
          ? mergePatch(base, patch)
          : strategicMerge(base, patch);
  } else {
    throw new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');
  }
  const replicas = wantedReplicas(next);
  const wantedRv = isPlainObject(next) && isPlainObject(next.metadata) ? next.metadata.resourceVersion : undefined;
  const updated = structuredClone(current);
  updated.spec = { ...((updated.spec ?? {}) as Record<string, unknown>), replicas };
  const warnings = ctx.admit({
    operation: 'UPDATE',
    group: type.group,
    kind: type.kind,
    subresource: 'scale',
    ...(call.namespace ? { namespace: call.namespace } : {}),
    name: call.name!,
    object: updated,
    oldObject: current,
    dryRun: query.getAll('dryRun').includes('All'),
  });
  const stored = ctx.store.replace(key, updated, {
    dryRun: query.getAll('dryRun').includes('All'),
    ...(typeof wantedRv === 'string' && wantedRv !== '' && wantedRv !== current.metadata.resourceVersion
      ? { expectedResourceVersion: wantedRv }
      : {}),
  });
  sendJson(res, 200, scaleOf(stored), warnings);
}
