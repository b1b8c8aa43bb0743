/**
 * Label and field selectors with the apiserver's grammar and errors (kube-sim-spec §6).
 * A parsed selector is a predicate over a stored object; parse errors are 400 BadRequest.
 */
import { badRequest } from '../store/errors.js';
import type { KObject } from '../store/types.js';
import type { KindSpec } from '../resources/kinds.js';

export type Matcher = (obj: KObject) => boolean;

const NAME_PART = /^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A qualified name (`prefix/name`), as label and annotation keys must be. */
export function validKey(key: string): boolean {
  const slash = key.indexOf('/');
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    if (!prefix || prefix.length > 253 || !PREFIX.test(prefix)) return false;
  }
  return name.length > 0 && name.length <= 63 && NAME_PART.test(name);
}

/** A label value: empty or ≤ 63 alphanumerics with `-_.` inside. */
export const validValue = (v: string) => v === '' || (v.length <= 63 && NAME_PART.test(v));

/** Split on commas that are not inside `( … )`. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function parseRequirement(req: string): (labels: Record<string, string>) => boolean {
  const fail = (why: string) => badRequest(`unable to parse requirement: ${why}`);
  const setMatch = /^([^\s!=(),]+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(req);
  if (setMatch) {
    const [, key, op, list] = setMatch as unknown as [string, string, string, string];
    if (!validKey(key)) throw fail(`invalid label key "${key}"`);
    const values = new Set(list.split(',').map((v) => v.trim()));
    for (const v of values) if (!validValue(v)) throw fail(`invalid label value: "${v}"`);
    return op === 'in' ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l) || !values.has(l[key]!);
  }
  const cmp = /^([^\s!=(),]+)\s*(==|!=|=)\s*([^\s!=(),]*)$/.exec(req);
  if (cmp) {
    const [, key, op, value] = cmp as unknown as [string, string, string, string];
    if (!validKey(key)) throw fail(`invalid label key "${key}"`);
    if (!validValue(value)) throw fail(`invalid label value: "${value}"`);
    return op === '!=' ? (l) => l[key] !== value : (l) => l[key] === value;
  }
  const notExists = /^!\s*([^\s!=(),]+)$/.exec(req);
  if (notExists) {
    const key = notExists[1]!;
    if (!validKey(key)) throw fail(`invalid label key "${key}"`);
    return (l) => !(key in l);
  }
  if (validKey(req)) return (l) => req in l;
  throw fail(`found '${req}', expected: !, identifier, or 'end of string'`);
}

export function parseLabelSelector(text: string | null): Matcher | undefined {
  if (!text || !text.trim()) return undefined;
  const reqs = splitTopLevel(text).map(parseRequirement);
  return (obj) => {
    const labels = obj.metadata.labels ?? {};
    return reqs.every((r) => r(labels));
  };
}

const COMMON_FIELDS = ['metadata.name', 'metadata.namespace'];

/** Read a dotted field; booleans and numbers compare as their text, missing fields as "" (as field.Set does). */
function fieldValue(obj: KObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (typeof cur !== 'object' || cur === null) return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return path === 'spec.unschedulable' ? 'false' : '';
  if (typeof cur === 'object') return JSON.stringify(cur);
  return String(cur as string | number | boolean);
}

export function parseFieldSelector(text: string | null, type: KindSpec): Matcher | undefined {
  if (!text || !text.trim()) return undefined;
  const supported = new Set([...COMMON_FIELDS, ...(type.fieldSelectors ?? [])]);
  const terms = text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map((term) => {
      const m = /^([^=!]+?)\s*(==|!=|=)\s*(.*)$/.exec(term);
      if (!m) throw badRequest(`invalid selector: '${text}'; can't understand '${term}'`);
      const [, field, op, value] = m as unknown as [string, string, string, string];
      if (!supported.has(field)) throw badRequest(`field label not supported: ${field}`);
      // `source` on events is the component name (the apiserver's field set flattens it).
      const read =
        field === 'source' ? (o: KObject) => fieldValue(o, 'source.component') : (o: KObject) => fieldValue(o, field);
      return op === '!=' ? (o: KObject) => read(o) !== value : (o: KObject) => read(o) === value;
    });
  return (obj) => terms.every((t) => t(obj));
}

/** Both selectors combined (undefined when neither was given, so callers can skip filtering). */
export function parseSelectors(query: URLSearchParams, type: KindSpec): Matcher | undefined {
  const label = parseLabelSelector(query.get('labelSelector'));
  const field = parseFieldSelector(query.get('fieldSelector'), type);
  if (label && field) return (o) => label(o) && field(o);
  return label ?? field;
}
