/**
 * JSON object → protobuf, the inverse of `decode.ts`, for responses to clients that ask for protobuf first: every
 * field the JSON object has is written with its descriptor's number and wire type (maps as entry messages, Time as
 * {seconds, nanos}, IntOrString as {type, intVal, strVal}, base64 strings as bytes, embedded structs gathered from
 * the parent's keys), then wrapped in the `k8s\0` + runtime.Unknown envelope. JSON fields without a descriptor are
 * left out, as a typed Go client decoding the JSON would drop them. A value of the wrong JSON type throws an
 * `EncodeError` (built-in kinds are not schema-validated, so a stored object may hold one); the caller answers
 * JSON instead.
 */
import { type FieldDesc, type MessageDesc, MESSAGES } from './schema.js';

export class EncodeError extends Error {}

export function varint(value: bigint | number): number[] {
  let v = BigInt.asUintN(64, BigInt(value));
  const out: number[] = [];
  do {
    const byte = Number(v & 0x7fn);
    v >>= 7n;
    out.push(v ? byte | 0x80 : byte);
  } while (v);
  return out;
}

const key = (no: number, wireType: number) => varint((no << 3) | wireType);

/** One field: a number, bigint or boolean is a varint, a string (UTF-8) or byte array is length-delimited. */
export function field(no: number, value: number | bigint | boolean | string | number[] | Uint8Array): number[] {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return [...key(no, 0), ...varint(typeof value === 'boolean' ? Number(value) : value)];
  const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : value;
  return [...key(no, 2), ...varint(bytes.length), ...bytes];
}

function wrong(f: FieldDesc, v: unknown): EncodeError {
  return new EncodeError(`${f.name}: ${JSON.stringify(v)} is not a valid ${f.type}`);
}

function int(f: FieldDesc, v: unknown): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw wrong(f, v);
  return v;
}

function str(f: FieldDesc, v: unknown): string {
  if (typeof v !== 'string') throw wrong(f, v);
  return v;
}

function time(f: FieldDesc, v: unknown): number[] {
  const text = str(f, v);
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw wrong(f, v);
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  const nanos = Number(fraction.padEnd(9, '0').slice(0, 9) || 0);
  return [...field(1, Math.floor(ms / 1000)), ...(nanos ? field(2, nanos) : [])];
}

function one(f: FieldDesc, v: unknown): number[] {
  switch (f.type) {
    case 'string':
      return field(f.no, str(f, v));
    case 'bytes':
      return field(f.no, Buffer.from(str(f, v), 'base64'));
    case 'bool':
      if (typeof v !== 'boolean') throw wrong(f, v);
      return field(f.no, v);
    case 'int32':
    case 'int64':
      return field(f.no, int(f, v));
    case 'Time':
    case 'MicroTime':
      return field(f.no, time(f, v));
    case 'Quantity':
      return field(f.no, field(1, typeof v === 'number' ? String(v) : str(f, v)));
    case 'IntOrString':
      return field(
        f.no,
        typeof v === 'string' ? [...field(1, 1), ...field(3, v)] : [...field(1, 0), ...field(2, int(f, v))],
      );
    case 'FieldsV1':
      return field(f.no, field(1, JSON.stringify(v)));
    default:
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw wrong(f, v);
      return field(f.no, encodeMessage(MESSAGES.get(f.type)!, v as Record<string, unknown>));
  }
}

/** `out.push(...bytes)` passes every byte as an argument and overflows the stack on a large nested message. */
function append(out: number[], bytes: number[]): void {
  for (const b of bytes) out.push(b);
}

/** The JSON names an embedded struct owns (its own fields and, recursively, those of structs it embeds). */
function inlinedNames(desc: MessageDesc): string[] {
  return [...desc.fields.values()].flatMap((f) => (f.inline ? inlinedNames(MESSAGES.get(f.type)!) : [f.name]));
}

export function encodeMessage(desc: MessageDesc, obj: Record<string, unknown>): number[] {
  const out: number[] = [];
  const rest: Record<string, unknown> = { ...obj };
  for (const f of [...desc.fields.values()].sort((a, b) => a.no - b.no)) {
    if (f.inline) {
      const inner = MESSAGES.get(f.type)!;
      const picked = Object.fromEntries(inlinedNames(inner).flatMap((n) => (n in rest ? [[n, rest[n]]] : [])));
      if (Object.keys(picked).length) append(out, field(f.no, encodeMessage(inner, picked)));
      continue;
    }
    const v = rest[f.name];
    if (v === undefined || v === null) continue;
    if (f.map) {
      if (typeof v !== 'object' || Array.isArray(v)) throw wrong(f, v);
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (item === null) continue;
        append(out, field(f.no, [...field(1, k), ...one({ ...f, no: 2, map: false }, item)]));
      }
    } else if (f.repeated) {
      if (!Array.isArray(v)) throw wrong(f, v);
      for (const item of v as unknown[]) append(out, one(f, item));
    } else append(out, one(f, v));
  }
  return out;
}

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}. */
export function envelope(apiVersion: string, kind: string, raw: number[] | Uint8Array): Buffer {
  const typeMeta = [...field(1, apiVersion), ...field(2, kind)];
  return Buffer.from([0x6b, 0x38, 0x73, 0x00, ...field(1, typeMeta), ...field(2, raw)]);
}

/** An object (or a list: `{metadata, items}`) as the protobuf body of `message`. */
export function encodeObject(obj: Record<string, unknown>, message: MessageDesc): Buffer {
  const { apiVersion, kind, ...rest } = obj;
  return envelope(String(apiVersion ?? ''), String(kind ?? ''), encodeMessage(message, rest));
}
