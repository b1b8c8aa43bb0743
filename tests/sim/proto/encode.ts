/**
 * Test-side protobuf encoder: builds request bodies the way client-go's generated marshallers do (every field of
 * a JSON object written with its descriptor's number and wire type, maps as entry messages, Time as
 * {seconds, nanos}, IntOrString as {type, intVal, strVal}), wrapped in the `k8s\0` + runtime.Unknown envelope.
 * Also raw building blocks (`field`, `varint`) for malformed and hand-made inputs.
 */
import { MESSAGES, type FieldDesc, type MessageDesc } from '../../../src/sim/proto/schema.js';

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
const utf8 = (s: string) => [...Buffer.from(s, 'utf8')];

/** One field: a number is a varint, anything else is length-delimited bytes. */
export function field(no: number, value: number | bigint | boolean | string | number[]): number[] {
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean')
    return [...key(no, 0), ...varint(typeof value === 'boolean' ? Number(value) : value)];
  const bytes = typeof value === 'string' ? utf8(value) : value;
  return [...key(no, 2), ...varint(bytes.length), ...bytes];
}

function time(value: string, micro: boolean): number[] {
  const ms = Date.parse(value);
  const seconds = Math.floor(ms / 1000);
  const nanos = micro ? Number(/\.(\d{6})/.exec(value)?.[1] ?? 0) * 1000 : 0;
  return [...field(1, seconds), ...(nanos ? field(2, nanos) : [])];
}

function one(f: FieldDesc, v: unknown): number[] {
  switch (f.type) {
    case 'string':
      return field(f.no, v as string);
    case 'bytes':
      return field(f.no, [...Buffer.from(v as string, 'base64')]);
    case 'bool':
    case 'int32':
    case 'int64':
      return field(f.no, v as number | boolean);
    case 'Time':
    case 'MicroTime':
      return field(f.no, time(v as string, f.type === 'MicroTime'));
    case 'Quantity':
      return field(f.no, field(1, v as string));
    case 'IntOrString':
      return field(
        f.no,
        typeof v === 'string' ? [...field(1, 1), ...field(3, v)] : [...field(1, 0), ...field(2, v as number)],
      );
    case 'FieldsV1':
      return field(f.no, field(1, JSON.stringify(v)));
    default:
      return field(f.no, encodeMessage(MESSAGES.get(f.type)!, v as Record<string, unknown>));
  }
}

export function encodeMessage(desc: MessageDesc, obj: Record<string, unknown>): number[] {
  const byName = new Map([...desc.fields.values()].map((f) => [f.name, f]));
  const out: number[] = [];
  const rest: Record<string, unknown> = { ...obj };
  // An embedded struct takes the parent's keys that belong to it.
  for (const f of desc.fields.values()) {
    if (!f.inline) continue;
    const inner = MESSAGES.get(f.type)!;
    const own = [...inner.fields.values()].flatMap((g) =>
      g.inline ? [...MESSAGES.get(g.type)!.fields.values()] : [g],
    );
    const picked = Object.fromEntries(own.filter((g) => g.name in rest).map((g) => [g.name, rest[g.name]]));
    for (const name of Object.keys(picked)) delete rest[name];
    if (Object.keys(picked).length) out.push(...field(f.no, encodeMessage(inner, picked)));
  }
  for (const [name, v] of Object.entries(rest)) {
    const f = byName.get(name);
    if (!f) throw new Error(`${desc.name} has no field ${name}`);
    if (f.map) {
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        const valueField = { ...f, no: 2, map: false };
        out.push(...field(f.no, [...field(1, k), ...one(valueField, item)]));
      }
    } else if (f.repeated) for (const item of v as unknown[]) out.push(...one(f, item));
    else out.push(...one(f, v));
  }
  return out;
}

/** `k8s\0` + runtime.Unknown{typeMeta, raw} around `raw`. */
export function envelope(apiVersion: string, kind: string, raw: number[]): Buffer {
  const typeMeta = [...field(1, apiVersion), ...field(2, kind)];
  return Buffer.from([0x6b, 0x38, 0x73, 0x00, ...field(1, typeMeta), ...field(2, raw)]);
}

/** Encode a JSON object of a served built-in kind as client-go would send it. */
export function encodeObject(obj: Record<string, unknown> & { apiVersion: string; kind: string }): Buffer {
  const { apiVersion, kind, ...rest } = obj;
  return envelope(apiVersion, kind, encodeMessage(MESSAGES.get(kind)!, rest));
}
