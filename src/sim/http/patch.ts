/**
 * The four patch algorithms of kube-sim-spec §5: RFC 7386 merge patch, RFC 6902 JSON patch (with exact `test`),
 * strategic merge patch for built-in kinds (merge keys + `$patch` directives), and a simplified server-side apply.
 * All functions are pure: they take the current object and return a new one.
 */
import { ApiError, badRequest } from '../store/errors.js';
import { isPlainObject } from './wire.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export const PATCH_TYPES = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
  applyCbor: 'application/apply-patch+cbor',
} as const;

/** RFC 7386: objects merge recursively, null deletes, everything else (arrays too) replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = mergePatch(out[key], value);
  }
  return out;
}

/** The apiserver hides JSON-patch failure details behind this generic 422 (NewGenericServerResponse). */
const jsonPatchFailed = (detail: string) =>
  new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {
    causes: [{ reason: 'FieldValueInvalid', message: detail }],
  });

function decodePointer(path: string): string[] {
  if (path === '') return [];
  if (!path.startsWith('/')) throw jsonPatchFailed(`invalid JSON pointer "${path}"`);
  return path
    .slice(1)
    .split('/')
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length && ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && deepEqual(a[k], b[k]))
    );
  }
  return false;
}

interface Located {
  parent: Record<string, unknown> | unknown[];
  key: string;
}

function locate(doc: unknown, tokens: string[], path: string): Located {
  let cur: unknown = doc;
  for (let i = 0; i < tokens.length - 1; i++) {
    const t = tokens[i]!;
    if (Array.isArray(cur)) cur = cur[arrayIndex(cur, t, path, false)];
    else if (isPlainObject(cur)) cur = cur[t];
    else throw jsonPatchFailed(`path "${path}" not found`);
    if (cur === undefined) throw jsonPatchFailed(`path "${path}" not found`);
  }
  if (!Array.isArray(cur) && !isPlainObject(cur)) throw jsonPatchFailed(`path "${path}" not found`);
  return { parent: cur, key: tokens[tokens.length - 1]! };
}

function arrayIndex(arr: unknown[], token: string, path: string, forInsert: boolean): number {
  if (forInsert && token === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw jsonPatchFailed(`invalid array index "${token}" in "${path}"`);
  const i = Number(token);
  if (i > arr.length || (!forInsert && i >= arr.length))
    throw jsonPatchFailed(`array index ${i} out of bounds in "${path}"`);
  return i;
}

function getAt(doc: unknown, path: string): unknown {
  let cur: unknown = doc;
  for (const t of decodePointer(path)) {
    if (Array.isArray(cur)) {
      if (!/^(0|[1-9][0-9]*)$/.test(t) || Number(t) >= cur.length) return undefined;
      cur = cur[Number(t)];
    } else if (isPlainObject(cur)) cur = cur[t];
    else return undefined;
    if (cur === undefined) return undefined;
  }
  return cur;
}

function removeAt(doc: unknown, path: string): unknown {
  const tokens = decodePointer(path);
  if (!tokens.length) throw jsonPatchFailed('cannot remove the document root');
  const { parent, key } = locate(doc, tokens, path);
  if (Array.isArray(parent)) return parent.splice(arrayIndex(parent, key, path, false), 1)[0];
  if (!(key in parent)) throw jsonPatchFailed(`unable to remove nonexistent key: ${key}: missing value`);
  const old = parent[key];
  delete parent[key];
  return old;
}

function addAt(doc: unknown, path: string, value: unknown): unknown {
  const tokens = decodePointer(path);
  if (!tokens.length) return value;
  const { parent, key } = locate(doc, tokens, path);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, path, true), 0, value);
  else parent[key] = value;
  return doc;
}

/** RFC 6902. Body shape errors are 400; an op that cannot apply (missing path, failed test) is 422. */
export function jsonPatch(target: unknown, ops: unknown): unknown {
  if (!Array.isArray(ops)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
  if (ops.length > 10000)
    throw new ApiError(413, 'RequestEntityTooLarge', 'The allowed operation count limit is 10000');
  let doc = structuredClone(target);
  for (const raw of ops) {
    if (!isPlainObject(raw) || typeof raw.op !== 'string' || typeof raw.path !== 'string') {
      throw badRequest('json: cannot unmarshal operation: each operation needs string "op" and "path"');
    }
    const { op, path } = raw;
    const value = raw.value as Json | undefined;
    switch (op) {
      case 'add':
        if (!('value' in raw)) throw jsonPatchFailed(`add operation does not apply: doc is missing value`);
        doc = addAt(doc, path, structuredClone(value));
        break;
      case 'remove':
        removeAt(doc, path);
        break;
      case 'replace': {
        if (!('value' in raw)) throw jsonPatchFailed(`replace operation does not apply: doc is missing value`);
        const tokens = decodePointer(path);
        if (!tokens.length) {
          doc = structuredClone(value);
          break;
        }
        if (getAt(doc, path) === undefined)
          throw jsonPatchFailed(`replace operation does not apply: doc is missing key: ${path}: missing value`);
        const { parent, key } = locate(doc, tokens, path);
        if (Array.isArray(parent)) parent[arrayIndex(parent, key, path, false)] = structuredClone(value);
        else parent[key] = structuredClone(value);
        break;
      }
      case 'move':
      case 'copy': {
        if (typeof raw.from !== 'string') throw badRequest(`${op} operation needs a string "from"`);
        const from = getAt(doc, raw.from);
        if (from === undefined)
          throw jsonPatchFailed(`${op} operation does not apply: doc is missing from path: ${raw.from}: missing value`);
        if (op === 'move') removeAt(doc, raw.from);
        doc = addAt(doc, path, structuredClone(from));
        break;
      }
      case 'test': {
        const actual = getAt(doc, path);
        // A null test value matches a missing path (evanphx/json-patch behaviour the apiserver inherits).
        const ok = actual === undefined ? value === null || value === undefined : deepEqual(actual, value);
        if (!ok) throw jsonPatchFailed(`testing value ${path} failed: test failed`);
        break;
      }
      default:
        throw badRequest(`Unexpected kind: ${op}`);
    }
  }
  return doc;
}

/** List fields that merge by a key in strategic merge patch (core types' patchMergeKey tags). */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name',
  initContainers: 'name',
  ephemeralContainers: 'name',
  volumes: 'name',
  volumeMounts: 'mountPath',
  volumeDevices: 'devicePath',
  env: 'name',
  envFrom: '',
  ports: 'containerPort',
  conditions: 'type',
  ownerReferences: 'uid',
  imagePullSecrets: 'name',
  hostAliases: 'ip',
  topologySpreadConstraints: 'topologyKey',
  resourceClaims: 'name',
};
/** Lists of strings merged as sets. */
const SET_LISTS = new Set(['finalizers']);

function strategicList(field: string, current: unknown, patch: unknown[], parent: Record<string, unknown>): unknown[] {
  const key = MERGE_KEYS[field];
  const order = parent[`$setElementOrder/${field}`];
  const deletions = parent[`$deleteFromPrimitiveList/${field}`];
  // Service ports merge by `port`, container ports by `containerPort`: pick the key the items actually carry.
  const mergeKey =
    key === 'containerPort' && patch.some((p) => isPlainObject(p) && 'port' in p && !('containerPort' in p))
      ? 'port'
      : key;
  let result: unknown[];
  if (SET_LISTS.has(field) && Array.isArray(current)) {
    result = [...current];
    for (const v of patch) if (!result.includes(v)) result.push(v);
  } else if (!mergeKey || !Array.isArray(current)) {
    result = patch.filter((p) => !(isPlainObject(p) && p.$patch === 'delete')).map((p) => stripDirectives(p));
  } else if (patch.some((p) => isPlainObject(p) && p.$patch === 'replace')) {
    result = patch.filter((p) => !(isPlainObject(p) && p.$patch === 'replace')).map((p) => stripDirectives(p));
  } else {
    result = [...current];
    for (const item of patch) {
      if (!isPlainObject(item) || !(mergeKey in item)) {
        result.push(stripDirectives(item));
        continue;
      }
      const idx = result.findIndex((c) => isPlainObject(c) && c[mergeKey] === item[mergeKey]);
      if (item.$patch === 'delete') {
        if (idx >= 0) result.splice(idx, 1);
      } else if (idx >= 0) result[idx] = strategicMerge(result[idx], item);
      else result.push(stripDirectives(item));
    }
  }
  if (Array.isArray(deletions)) result = result.filter((v) => !deletions.includes(v));
  if (Array.isArray(order) && mergeKey) {
    const pos = new Map(order.map((o, i) => [isPlainObject(o) ? o[mergeKey] : o, i]));
    result.sort(
      (a, b) =>
        (pos.get(isPlainObject(a) ? a[mergeKey] : a) ?? 1e9) - (pos.get(isPlainObject(b) ? b[mergeKey] : b) ?? 1e9),
    );
  }
  return result;
}

function stripDirectives(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripDirectives);
  if (!isPlainObject(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!k.startsWith('$')) out[k] = stripDirectives(v);
  return out;
}

/** Strategic merge patch as the apiserver applies it to built-in kinds (the common subset; see README). */
export function strategicMerge(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return structuredClone(patch);
  if (patch.$patch === 'replace') return stripDirectives(patch);
  if (patch.$patch === 'delete') return undefined;
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  const retain = Array.isArray(patch.$retainKeys) ? new Set(patch.$retainKeys as string[]) : undefined;
  for (const [key, value] of Object.entries(patch)) {
    if (key.startsWith('$')) continue;
    if (value === null) delete out[key];
    else if (Array.isArray(value)) out[key] = strategicList(key, out[key], value, patch);
    else {
      const merged = strategicMerge(out[key], value);
      if (merged === undefined) delete out[key];
      else out[key] = merged;
    }
  }
  if (retain) for (const k of Object.keys(out)) if (!retain.has(k)) delete out[k];
  return out;
}

/**
 * Simplified server-side apply (documented deviation): the applied configuration is merged into the live object
 * like a merge patch, except that lists of named maps (containers, volumes, disks, interfaces, networks, …) merge
 * by `name`. No managedFields, no conflicts, fields a manager stops applying are not removed.
 */
export function applyPatch(target: unknown, applied: unknown): unknown {
  if (!isPlainObject(applied)) return structuredClone(applied);
  const out: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(applied)) {
    if (value === null) delete out[key];
    else if (
      Array.isArray(value) &&
      Array.isArray(out[key]) &&
      value.every((v) => isPlainObject(v) && typeof v.name === 'string')
    ) {
      const current = [...(out[key] as unknown[])];
      const result = value.map((item) => {
        const match = current.find((c) => isPlainObject(c) && c.name === (item as Record<string, unknown>).name);
        return match ? applyPatch(match, item) : structuredClone(item);
      });
      out[key] = result;
    } else out[key] = applyPatch(out[key], value);
  }
  return out;
}
