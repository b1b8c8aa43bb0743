/**
 * The generic REST verbs on stored kinds (kube-sim-spec §3–§5): get, list, watch, create, update, patch, delete,
 * deletecollection, the status subresource, dryRun and fieldValidation. Everything that is not specific to one
 * kind lives here; controllers never go through HTTP.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, invalid, notFound } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { AdmissionRequest } from '../module.js';
import type { KObject, NewObject } from '../store/types.js';
import { resourceKey } from '../store/types.js';
import type { KindSpec } from '../resources/kinds.js';
import { applyPatch, jsonPatch, mergePatch, PATCH_TYPES, strategicMerge } from './patch.js';
import type { ListCache } from './list-cache.js';
import { pageOf, parsePaging } from './list-pages.js';
import { parseSelectors, validKey, validValue } from './selectors.js';
import { TABLE_CONTENT_TYPE, table, wantsTable } from './table.js';
import { serveWatch, type WatchRegistry, type WatchSettings } from './watch.js';
import { protobufListMessageFor, protobufMessageFor } from '../proto/schema.js';
import { sendProtobuf, wantsProtobuf } from './protobuf-response.js';
import { readDeleteOptionsBody, readObjectBody } from './request-body.js';
import { isPlainObject, parseJson, readBody, sendJson, sendJsonText } from './wire.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** Checks a body against the kind's schema; returns warnings (Warn) or throws (Strict / wrong types). */
export type BodyValidator = (type: KindSpec, obj: KObject, mode: FieldValidation) => string[];

/** Runs the modules' admission hooks; returns their warnings, throws when one denies. */
export type Admitter = (request: AdmissionRequest) => string[];

export interface ApiContext {
  store: ObjectStore;
  lists: ListCache;
  admit: Admitter;
  watches: WatchRegistry;
  watchSettings: WatchSettings;
  validate: BodyValidator;
}

export interface ResourceCall {
  type: KindSpec;
  /** The version in the URL (may be an alias version). */
  version: string;
  namespace: string | undefined;
  name: string | undefined;
  subresource: string | undefined;
  query: URLSearchParams;
  req: IncomingMessage;
  res: ServerResponse;
}

const NAMESPACES = resourceKey('', 'namespaces');
const UNSUPPORTED_PATCH_FOR_CR = `the body of the request was in an unknown format - accepted media types include: ${PATCH_TYPES.json}, ${PATCH_TYPES.merge}, ${PATCH_TYPES.apply}, ${PATCH_TYPES.applyCbor}`;

const keyOf = (t: KindSpec) => resourceKey(t.group, t.plural);
const apiVersionOf = (t: KindSpec) => (t.group ? `${t.group}/${t.version}` : t.version);
const isDryRun = (q: URLSearchParams) => q.getAll('dryRun').includes('All');

function fieldValidation(q: URLSearchParams): FieldValidation {
  const v = q.get('fieldValidation');
  if (v === null || v === '') return 'Warn';
  if (v === 'Strict' || v === 'Warn' || v === 'Ignore') return v;
  throw badRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got "${v}"`);
}

async function bodyObject(req: IncomingMessage, type: KindSpec): Promise<Record<string, unknown>> {
  const body = await readObjectBody(req, type);
  if (body === undefined) throw badRequest('the request body is empty');
  if (!isPlainObject(body))
    throw badRequest(
      `json: cannot unmarshal ${Array.isArray(body) ? 'array' : typeof body} into Go value of type struct`,
    );
  return body;
}

function metadataOf(body: Record<string, unknown>): Record<string, unknown> {
  if (body.metadata === undefined || body.metadata === null) return (body.metadata = {});
  if (!isPlainObject(body.metadata)) throw badRequest('metadata must be an object');
  return body.metadata;
}

/** TypeMeta checks the apiserver's decoder does: the body's kind/apiVersion must fit the URL. */
function checkTypeMeta(call: ResourceCall, body: Record<string, unknown>): void {
  const { type } = call;
  if (body.kind !== undefined && body.kind !== type.kind) {
    throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${type.kind})`);
  }
  const served = [type.version, ...(type.aliasVersions ?? [])].map((v) => (type.group ? `${type.group}/${v}` : v));
  if (body.apiVersion !== undefined && !served.includes(body.apiVersion as string)) {
    throw badRequest(
      `the API version in the data (${String(body.apiVersion)}) does not match the expected API version (${apiVersionOf(type)})`,
    );
  }
}

function checkNamespaceMatch(call: ResourceCall, meta: Record<string, unknown>): void {
  if (!call.type.namespaced) return;
  if (meta.namespace !== undefined && meta.namespace !== '' && meta.namespace !== call.namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  meta.namespace = call.namespace;
}

function decodeError(field: string, want: string, value: unknown): ApiError {
  const got = Array.isArray(value) ? 'array' : value === null ? 'null' : typeof value;
  return badRequest(`json: cannot unmarshal ${got} into Go struct field ObjectMeta.metadata.${field} of type ${want}`);
}

/**
 * ObjectMeta shape and content checks the apiserver does for every kind: wrong JSON types are decode errors (400),
 * invalid label keys/values, annotation keys and owner references are 422 Invalid.
 */
function checkMetadata(type: KindSpec, meta: Record<string, unknown>): void {
  const causes: { field: string; message: string }[] = [];
  for (const field of ['name', 'generateName', 'namespace', 'resourceVersion'] as const) {
    if (meta[field] !== undefined && meta[field] !== null && typeof meta[field] !== 'string')
      throw decodeError(field, 'string', meta[field]);
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isPlainObject(map)) throw decodeError(field, 'map[string]string', map);
    for (const [k, v] of Object.entries(map)) {
      if (typeof v !== 'string') throw decodeError(field, 'string', v);
      if (!validKey(k))
        causes.push({
          field: `metadata.${field}`,
          message: `Invalid value: "${k}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        });
      else if (field === 'labels' && !validValue(v)) {
        causes.push({
          field: 'metadata.labels',
          message: `Invalid value: "${v}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
        });
      }
    }
  }
  if (meta.finalizers !== undefined && meta.finalizers !== null) {
    if (!Array.isArray(meta.finalizers) || meta.finalizers.some((f) => typeof f !== 'string'))
      throw decodeError('finalizers', '[]string', meta.finalizers);
  }
  if (meta.ownerReferences !== undefined && meta.ownerReferences !== null) {
    if (!Array.isArray(meta.ownerReferences) || !meta.ownerReferences.every(isPlainObject))
      throw decodeError('ownerReferences', '[]v1.OwnerReference', meta.ownerReferences);
    for (const ref of meta.ownerReferences as Record<string, unknown>[]) {
      for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
        if (typeof ref[f] !== 'string' || !ref[f])
          causes.push({ field: `metadata.ownerReferences.${f}`, message: `Invalid value: "": ${f} must not be empty` });
      }
    }
  }
  if (causes.length) throw invalid(type.kind, type.group, typeof meta.name === 'string' ? meta.name : '', causes);
}

/** New content may only go into a namespace that exists and is not being deleted. */
function checkNamespaceWritable(store: ObjectStore, type: KindSpec, namespace: string | undefined): void {
  if (!type.namespaced || !namespace) return;
  const ns = store.get(NAMESPACES, undefined, namespace);
  if (!ns) throw notFound('', 'namespaces', namespace);
  if (ns.metadata.deletionTimestamp) {
    throw new ApiError(
      403,
      'Forbidden',
      `unable to create new content in namespace ${namespace} because it is being terminated`,
      {
        name: namespace,
        kind: 'namespaces',
        causes: [
          {
            reason: 'NamespaceTerminating',
            message: `namespace ${namespace} is being terminated`,
            field: 'metadata.namespace',
          },
        ],
      },
    );
  }
}

/** Stored objects are immutable, so the TypeMeta-less JSON of a built-in object can be cached by identity. */
const itemJsonCache = new WeakMap<KObject, string>();

/** Built-in list items omit apiVersion/kind (the apiserver's typed lists), custom resource items keep them. */
function listItemJson(type: KindSpec, object: KObject, json: string): string {
  if (!type.builtin) return json;
  let cached = itemJsonCache.get(object);
  if (cached === undefined) {
    const { apiVersion: _a, kind: _k, ...rest } = object;
    cached = JSON.stringify(rest);
    itemJsonCache.set(object, cached);
  }
  return cached;
}

function respondObject(call: ResourceCall, status: number, obj: KObject, warnings: string[] = []): void {
  if (wantsTable(call.req.headers.accept)) {
    sendJsonText(
      call.res,
      status,
      JSON.stringify(table(call.type, [obj], obj.metadata.resourceVersion)),
      TABLE_CONTENT_TYPE,
      warnings,
    );
  } else sendJson(call.res, status, obj, warnings);
}

export function handleList(ctx: ApiContext, call: ResourceCall): void {
  const { type, query } = call;
  const matcher = parseSelectors(query, type);
  if (query.get('watch') === 'true' || query.get('watch') === '1') {
    if (!type.verbs.includes('watch'))
      throw new ApiError(405, 'MethodNotAllowed', `watch is not supported on resources of kind "${type.plural}"`);
    serveWatch({
      store: ctx.store,
      type,
      namespace: call.namespace,
      matcher,
      query,
      req: call.req,
      res: call.res,
      registry: ctx.watches,
      settings: ctx.watchSettings,
    });
    return;
  }
  const rv = String(ctx.store.currentRevision());
  const selected = () => ctx.store.listJson(keyOf(type), call.namespace).filter((e) => !matcher || matcher(e.object));
  if (wantsTable(call.req.headers.accept)) {
    sendJsonText(
      call.res,
      200,
      JSON.stringify(
        table(
          type,
          selected().map((e) => e.object),
          rv,
        ),
      ),
      TABLE_CONTENT_TYPE,
    );
    return;
  }
  const listMessage = wantsProtobuf(call.req.headers.accept) && protobufListMessageFor(type.group, type.kind);
  if (listMessage) {
    const list = { kind: type.listKind, apiVersion: apiVersionOf(type), metadata: { resourceVersion: rv } };
    if (sendProtobuf(call.res, 200, { ...list, items: selected().map((e) => e.object) }, listMessage)) return;
  }
  const paging = parsePaging(query, rv);
  if (paging) {
    const { items, metadata } = pageOf(selected(), paging);
    const head = `{"kind":"${type.listKind}","apiVersion":"${apiVersionOf(type)}","metadata":${JSON.stringify(metadata)},"items":[`;
    sendJsonText(call.res, 200, `${head}${items.map((e) => listItemJson(type, e.object, e.json)).join(',')}]}`);
    return;
  }
  const cacheKey = `${call.namespace ?? ''}\u0000${query.get('labelSelector') ?? ''}\u0000${query.get('fieldSelector') ?? ''}`;
  const items = ctx.lists.items(keyOf(type), cacheKey, () =>
    selected()
      .map((e) => listItemJson(type, e.object, e.json))
      .join(','),
  );
  const head = Buffer.from(
    `{"kind":"${type.listKind}","apiVersion":"${apiVersionOf(type)}","metadata":{"resourceVersion":"${rv}"},"items":[`,
  );
  const tail = Buffer.from(']}');
  const res = call.res;
  res.writeHead(200, {
    'Content-Type': 'application/json',
    'Content-Length': String(head.length + items.length + tail.length),
  });
  res.write(head);
  res.write(items);
  res.end(tail);
}

export function handleGet(ctx: ApiContext, call: ResourceCall): void {
  const watch = call.query.get('watch');
  if (!call.subresource && (watch === 'true' || watch === '1')) {
    // A watch on an item path is a collection watch narrowed to that name (the old single-object watch).
    const fieldSelector = call.query.get('fieldSelector');
    call.query.set('fieldSelector', [fieldSelector, `metadata.name=${call.name!}`].filter(Boolean).join(','));
    handleList(ctx, { ...call, name: undefined });
    return;
  }
  const obj = ctx.store.mustGet(keyOf(call.type), call.namespace, call.name!);
  const message = wantsProtobuf(call.req.headers.accept) && protobufMessageFor(call.type.group, call.type.kind);
  if (message && sendProtobuf(call.res, 200, obj, message)) return;
  respondObject(call, 200, obj);
}

export async function handleCreate(ctx: ApiContext, call: ResourceCall): Promise<void> {
  const { type, query } = call;
  const body = await bodyObject(call.req, call.type);
  checkTypeMeta(call, body);
  const meta = metadataOf(body);
  checkMetadata(type, meta);
  checkNamespaceMatch(call, meta);
  const obj = prepareCreate(call, body);
  const warnings = ctx.validate(type, obj, fieldValidation(query));
  checkNamespaceWritable(ctx.store, type, call.namespace);
  warnings.push(...admit(ctx, call, 'CREATE', obj));
  const created = ctx.store.create(keyOf(type), obj as NewObject, { dryRun: isDryRun(query) });
  respondObject(call, 201, created, warnings);
}

function admit(
  ctx: ApiContext,
  call: ResourceCall,
  operation: AdmissionRequest['operation'],
  object?: KObject,
  oldObject?: KObject,
): string[] {
  return ctx.admit({
    operation,
    group: call.type.group,
    kind: call.type.kind,
    ...(call.subresource ? { subresource: call.subresource } : {}),
    ...(call.namespace ? { namespace: call.namespace } : {}),
    name: call.name ?? object?.metadata.name ?? '',
    ...(object ? { object } : {}),
    ...(oldObject ? { oldObject } : {}),
    dryRun: isDryRun(call.query),
  });
}

/** What create strategies do before storing: canonical TypeMeta, status reset, namespace defaults. */
function prepareCreate(call: ResourceCall, body: Record<string, unknown>): KObject {
  const { type } = call;
  const { apiVersion: _a, kind: _k, metadata, ...rest } = body;
  const obj = { apiVersion: apiVersionOf(type), kind: type.kind, metadata, ...rest } as KObject;
  if (type.hasStatus) delete obj.status;
  if (type.kind === 'Namespace') {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
    obj.metadata.labels = { ...obj.metadata.labels, 'kubernetes.io/metadata.name': obj.metadata.name };
  }
  return obj;
}

function checkUpdateIdentity(call: ResourceCall, meta: Record<string, unknown>): void {
  if (meta.name !== call.name) {
    throw badRequest(
      `the name of the object (${String(meta.name ?? '')}) does not match the name on the URL (${call.name})`,
    );
  }
}

/** Build the object to store from a full new state, honouring the status subresource split. */
function mergeForWrite(call: ResourceCall, current: KObject, next: KObject): KObject {
  const { type, subresource } = call;
  if (subresource === 'status') {
    const out = structuredClone(current);
    if (next.status === undefined) delete out.status;
    else out.status = next.status;
    out.metadata.resourceVersion = next.metadata.resourceVersion ?? current.metadata.resourceVersion;
    return out;
  }
  const out = { ...next, apiVersion: current.apiVersion, kind: current.kind } as KObject;
  if (type.hasStatus) {
    if (current.status === undefined) delete out.status;
    else out.status = current.status;
  }
  if (type.kind === 'Namespace') out.spec = current.spec;
  out.metadata = { ...next.metadata, name: current.metadata.name };
  if (type.namespaced) out.metadata.namespace = current.metadata.namespace;
  return out;
}

export async function handleUpdate(ctx: ApiContext, call: ResourceCall): Promise<void> {
  const { type, query } = call;
  const body = await bodyObject(call.req, call.type);
  checkTypeMeta(call, body);
  const meta = metadataOf(body);
  checkMetadata(type, meta);
  checkUpdateIdentity(call, meta);
  checkNamespaceMatch(call, meta);
  const current = ctx.store.mustGet(keyOf(type), call.namespace, call.name!);
  if (!type.builtin && !meta.resourceVersion) {
    throw invalid(type.kind, type.group, call.name!, [
      { field: 'metadata.resourceVersion', message: 'Invalid value: 0x0: must be specified for an update' },
    ]);
  }
  const next = mergeForWrite(call, current, body as KObject);
  const warnings = ctx.validate(type, next, fieldValidation(query));
  warnings.push(...admit(ctx, call, 'UPDATE', next, current));
  const stored = ctx.store.replace(keyOf(type), next, {
    dryRun: isDryRun(query),
    ...(meta.resourceVersion ? { expectedResourceVersion: String(meta.resourceVersion as string) } : {}),
  });
  respondObject(call, 200, stored, warnings);
}

export function patchType(req: IncomingMessage): string {
  const raw = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const known: string[] = Object.values(PATCH_TYPES);
  if (!known.includes(raw)) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: ${known.join(', ')}`,
    );
  }
  return raw;
}

export function parsePatchBody(kind: string, text: string): unknown {
  if (kind === PATCH_TYPES.apply) {
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
  }
  if (kind === PATCH_TYPES.applyCbor)
    throw new ApiError(415, 'UnsupportedMediaType', 'CBOR apply patches are not supported by this server');
  return parseJson(text);
}

export async function handlePatch(ctx: ApiContext, call: ResourceCall): Promise<void> {
  const { type, query } = call;
  const kind = patchType(call.req);
  if (kind === PATCH_TYPES.strategic && !type.builtin)
    throw new ApiError(415, 'UnsupportedMediaType', UNSUPPORTED_PATCH_FOR_CR);
  const patch = parsePatchBody(kind, await readBody(call.req));
  if (kind !== PATCH_TYPES.json && !isPlainObject(patch)) {
    throw badRequest(
      `json: cannot unmarshal ${Array.isArray(patch) ? 'array' : typeof patch} into Go value of type map[string]interface {}`,
    );
  }
  const current = ctx.store.get(keyOf(type), call.namespace, call.name!);
  if (kind === PATCH_TYPES.apply) {
    if (!query.get('fieldManager')) throw badRequest('PATCH requests with apply content type must have a fieldManager');
    if (!current) {
      if (call.subresource) throw notFound(type.group, type.plural, call.name!);
      await applyCreate(ctx, call, patch as Record<string, unknown>);
      return;
    }
  }
  if (!current) throw notFound(type.group, type.plural, call.name!);

  const patched =
    kind === PATCH_TYPES.json
      ? jsonPatch(current, patch)
      : kind === PATCH_TYPES.merge
        ? mergePatch(current, patch)
        : kind === PATCH_TYPES.strategic
          ? strategicMerge(current, patch)
          : applyPatch(current, patch);
  if (!isPlainObject(patched))
    throw new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request');
  const next = patched as KObject;
  if (!isPlainObject(next.metadata))
    next.metadata = { ...current.metadata, resourceVersion: current.metadata.resourceVersion };
  checkMetadata(type, next.metadata);
  const merged = mergeForWrite(call, current, next);
  const warnings = ctx.validate(type, merged, fieldValidation(query));
  warnings.push(...admit(ctx, call, 'UPDATE', merged, current));
  // A patch that sets metadata.resourceVersion is a precondition (409 when stale); otherwise it always applies.
  const wantedRv = next.metadata.resourceVersion;
  merged.metadata.resourceVersion = current.metadata.resourceVersion;
  const stored = ctx.store.replace(keyOf(type), merged, {
    dryRun: isDryRun(query),
    ...(wantedRv !== undefined && wantedRv !== current.metadata.resourceVersion
      ? { expectedResourceVersion: String(wantedRv) }
      : {}),
  });
  respondObject(call, 200, stored, warnings);
}

/** Server-side apply on a missing object creates it (201). */
async function applyCreate(ctx: ApiContext, call: ResourceCall, body: Record<string, unknown>): Promise<void> {
  checkTypeMeta(call, body);
  const meta = metadataOf(body);
  if (meta.name !== undefined && meta.name !== call.name) {
    throw badRequest(`the name of the object (${String(meta.name)}) does not match the name on the URL (${call.name})`);
  }
  meta.name = call.name;
  checkMetadata(call.type, meta);
  checkNamespaceMatch(call, meta);
  const obj = prepareCreate(call, body);
  const warnings = ctx.validate(call.type, obj, fieldValidation(call.query));
  checkNamespaceWritable(ctx.store, call.type, call.namespace);
  warnings.push(...admit(ctx, call, 'CREATE', obj));
  const created = ctx.store.create(keyOf(call.type), obj as NewObject, { dryRun: isDryRun(call.query) });
  respondObject(call, 201, created, warnings);
}

interface DeleteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun: boolean;
}

async function deleteOptions(call: ResourceCall): Promise<DeleteOptions> {
  const q = call.query;
  const body = (await readDeleteOptionsBody(call.req, call.type)) ?? {};
  if (!isPlainObject(body)) throw badRequest('DeleteOptions must be a JSON object');
  const policy = (body.propagationPolicy ?? q.get('propagationPolicy') ?? undefined) as string | undefined;
  const orphan =
    body.orphanDependents ?? (q.get('orphanDependents') === null ? undefined : q.get('orphanDependents') === 'true');
  const resolved = policy ?? (orphan === true ? 'Orphan' : orphan === false ? 'Background' : undefined);
  if (resolved !== undefined && !['Foreground', 'Background', 'Orphan'].includes(resolved)) {
    throw invalid('DeleteOptions', '', '', [
      {
        field: 'propagationPolicy',
        message: `Unsupported value: "${resolved}": supported values: "Foreground", "Background", "Orphan"`,
      },
    ]);
  }
  const dryRun = Array.isArray(body.dryRun) ? (body.dryRun as string[]).includes('All') : isDryRun(q);
  const preconditions = isPlainObject(body.preconditions)
    ? (body.preconditions as DeleteOptions['preconditions'])
    : undefined;
  return {
    ...(resolved ? { propagationPolicy: resolved as DeleteOptions['propagationPolicy'] } : {}),
    ...(preconditions ? { preconditions } : {}),
    dryRun,
  };
}

function deleteOne(
  ctx: ApiContext,
  type: KindSpec,
  namespace: string | undefined,
  name: string,
  options: DeleteOptions,
) {
  if (type.kind === 'Namespace') {
    // The namespace controller empties it, then drops the `kubernetes` finalizer (src/sim/gc).
    const result = ctx.store.delete(keyOf(type), namespace, name, { ...options, extraFinalizers: ['kubernetes'] });
    if (
      !result.gone &&
      !options.dryRun &&
      (result.object.status as { phase?: string } | undefined)?.phase !== 'Terminating'
    ) {
      const updated = ctx.store.mutate(keyOf(type), undefined, name, (ns) => {
        ns.status = { ...(ns.status as object | undefined), phase: 'Terminating' };
      });
      return { object: updated ?? result.object, gone: false };
    }
    return result;
  }
  return ctx.store.delete(keyOf(type), namespace, name, options);
}

/** Pods and custom resources answer with the deleted object; other built-ins with a Success Status. */
function returnsObject(type: KindSpec): boolean {
  return !type.builtin || type.kind === 'Pod' || type.kind === 'Namespace' || type.kind === 'PersistentVolumeClaim';
}

export async function handleDelete(ctx: ApiContext, call: ResourceCall): Promise<void> {
  const { type } = call;
  const options = await deleteOptions(call);
  const warnings = admit(ctx, call, 'DELETE', undefined, ctx.store.mustGet(keyOf(type), call.namespace, call.name!));
  const { object, gone } = deleteOne(ctx, type, call.namespace, call.name!, options);
  if (gone && !returnsObject(type)) {
    sendJson(
      call.res,
      200,
      {
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Success',
        details: {
          name: object.metadata.name,
          ...(type.group ? { group: type.group } : {}),
          kind: type.plural,
          uid: object.metadata.uid,
        },
      },
      warnings,
    );
    return;
  }
  sendJson(call.res, 200, object, warnings);
}

export async function handleDeleteCollection(ctx: ApiContext, call: ResourceCall): Promise<void> {
  const { type, query } = call;
  if (!type.verbs.includes('deletecollection'))
    throw new ApiError(
      405,
      'MethodNotAllowed',
      `deletecollection is not supported on resources of kind "${type.plural}"`,
    );
  const matcher = parseSelectors(query, type);
  const options = await deleteOptions(call);
  const targets = ctx.store.list(keyOf(type), call.namespace).filter((o) => !matcher || matcher(o));
  const items: KObject[] = [];
  for (const t of targets) {
    try {
      admit(ctx, { ...call, name: t.metadata.name, namespace: t.metadata.namespace }, 'DELETE', undefined, t);
      items.push(deleteOne(ctx, type, t.metadata.namespace, t.metadata.name, options).object);
    } catch (err) {
      // Another writer removed it between list and delete: the apiserver skips NotFound here too.
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  sendJson(call.res, 200, {
    kind: type.listKind,
    apiVersion: apiVersionOf(type),
    metadata: { resourceVersion: String(ctx.store.currentRevision()) },
    items,
  });
}
