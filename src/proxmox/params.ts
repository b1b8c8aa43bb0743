/**
 * Request parameters the way Proxmox clients send them: GET/DELETE in the query string, POST/PUT as
 * `application/x-www-form-urlencoded` (JSON bodies are accepted too). Booleans arrive as `1`/`0`; arrays as
 * repeated keys. Every reader throws a `400 Parameter verification failed.` naming the parameter.
 */
import { paramError } from './wire';

export class Params {
  private readonly values = new Map<string, string[]>();

  constructor(entries: Iterable<[string, string]> = []) {
    for (const [k, v] of entries) this.add(k, v);
  }

  static fromSearch(search: URLSearchParams): Params {
    return new Params(search.entries());
  }

  /** Merge `other` over this bag (body parameters win over query parameters for writes). */
  merge(other: Params): Params {
    const merged = new Params();
    for (const bag of [this, other]) for (const [k, vs] of bag.values) merged.values.set(k, [...vs]);
    return merged;
  }

  add(key: string, value: string): void {
    const list = this.values.get(key);
    if (list) list.push(value);
    else this.values.set(key, [value]);
  }

  has(key: string): boolean {
    return this.values.has(key);
  }

  keys(): string[] {
    return [...this.values.keys()];
  }

  /** The last value of a key (a repeated scalar takes its last occurrence), or undefined. */
  raw(key: string): string | undefined {
    const list = this.values.get(key);
    return list?.[list.length - 1];
  }

  all(key: string): string[] {
    return this.values.get(key) ?? [];
  }

  string(key: string): string | undefined {
    return this.raw(key);
  }

  requireString(key: string): string {
    const v = this.raw(key);
    if (v === undefined || v === '') throw paramError({ [key]: 'property is missing and it is not optional' });
    return v;
  }

  int(key: string, range: { min?: number; max?: number } = {}): number | undefined {
    const v = this.raw(key);
    if (v === undefined || v === '') return undefined;
    if (!/^-?\d+$/.test(v.trim())) throw paramError({ [key]: `type check ('integer') failed - got '${v}'` });
    const n = Number(v.trim());
    if (range.min !== undefined && n < range.min)
      throw paramError({ [key]: `value must have a minimum value of ${range.min}` });
    if (range.max !== undefined && n > range.max)
      throw paramError({ [key]: `value must have a maximum value of ${range.max}` });
    return n;
  }

  requireInt(key: string, range: { min?: number; max?: number } = {}): number {
    const n = this.int(key, range);
    if (n === undefined) throw paramError({ [key]: 'property is missing and it is not optional' });
    return n;
  }

  bool(key: string): boolean | undefined {
    const v = this.raw(key);
    if (v === undefined || v === '') return undefined;
    const s = v.trim().toLowerCase();
    if (['1', 'true', 'yes', 'on'].includes(s)) return true;
    if (['0', 'false', 'no', 'off'].includes(s)) return false;
    throw paramError({ [key]: `type check ('boolean') failed - got '${v}'` });
  }
}

/** Proxmox list parameters (`delete=`, `idlist=`) separate items with commas, semicolons or spaces. */
export function splitList(value: string | undefined): string[] {
  if (!value) return [];
  return value
    .split(/[,;\s]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Flatten a JSON body into string parameters (numbers/booleans as PVE clients would have form-encoded them). */
export function paramsFromJson(body: unknown): Params {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw paramError({ body: 'expected a JSON object or a form-encoded body' });
  const params = new Params();
  for (const [k, v] of Object.entries(body as Record<string, unknown>)) {
    for (const item of Array.isArray(v) ? v : [v]) {
      if (item === null || item === undefined) continue;
      if (typeof item === 'boolean') params.add(k, item ? '1' : '0');
      else if (typeof item === 'object') throw paramError({ [k]: 'expected a scalar value' });
      else params.add(k, String(item));
    }
  }
  return params;
}
