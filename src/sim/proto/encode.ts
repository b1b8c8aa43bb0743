/**
 * JSON object → protobuf, the inverse of `decode.ts`, for responses to clients that ask for protobuf first: every
 * field the JSON object has is written with its descriptor's number and wire type (maps as entry messages, Time as
 * {seconds, nanos}, IntOrString as {type, intVal, strVal}, base64 strings as bytes, embedded structs gathered from
 * the parent's keys), then wrapped in the `k8s\0` + runtime.Unknown envelope. JSON fields without a descriptor are
 * left out, as a typed Go client decoding the JSON would drop them. A value of the wrong JSON type throws an
 * `EncodeError` (built-in kinds are not schema-validated, so a stored object may hold one); the caller answers
 * JSON instead.
 */
import { PROTOBUF_MAGIC } from './envelope.js';
import { type FieldDesc, type MessageDesc, MESSAGES } from './schema.js';

export class EncodeError extends Error {}

/** A growable byte buffer: nested messages are written into their own Writer and copied in with their length. */
class Writer {
  private buf = Buffer.allocUnsafe(256);
  private len = 0;

  private ensure(n: number): void {
    if (this.len + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.len + n));
    this.buf.copy(next, 0, 0, this.len);
    this.buf = next;
  }

  varint(value: number | bigint): void {
    this.ensure(10);
    if (typeof value === 'number' && value >= 0 && value <= 0x7fffffff) {
      let v = value;
      while (v > 0x7f) {
        this.buf[this.len++] = (v & 0x7f) | 0x80;
        v >>>= 7;
      }
      this.buf[this.len++] = v;
      return;
    }
    // Negative values are sign-extended to 64 bits (ten bytes), as Go writes them.
    let v = BigInt.asUintN(64, BigInt(value));
    while (v > 0x7fn) {
      this.buf[this.len++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.len++] = Number(v);
  }

  tag(no: number, wireType: number): void {
    this.varint(no * 8 + wireType);
  }

  bytes(bytes: Uint8Array): void {
    this.varint(bytes.length);
    this.ensure(bytes.length);
    this.buf.set(bytes, this.len);
    this.len += bytes.length;
  }

  string(text: string): void {
    const n = Buffer.byteLength(text);
    this.varint(n);
    this.ensure(n);
    this.buf.write(text, this.len, 'utf8');
    this.len += n;
  }

  finish(): Buffer {
    return this.buf.subarray(0, this.len);
  }
}

/** A varint's bytes (for hand-made bodies). */
export function varint(value: bigint | number): number[] {
  const w = new Writer();
  w.varint(value);
  return [...w.finish()];
}

/** One field's bytes: a number, bigint or boolean is a varint, a string (UTF-8) or byte array is length-delimited. */
export function field(no: number, value: number | bigint | boolean | string | number[] | Uint8Array): number[] {
  const w = new Writer();
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    w.tag(no, 0);
    w.varint(typeof value === 'boolean' ? Number(value) : value);
  } else {
    w.tag(no, 2);
    if (typeof value === 'string') w.string(value);
    else w.bytes(Uint8Array.from(value));
  }
  return [...w.finish()];
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

/** Write a nested message: built in its own Writer, then copied in after its length. */
function nested(w: Writer, no: number, build: (inner: Writer) => void): void {
  const inner = new Writer();
  build(inner);
  w.tag(no, 2);
  w.bytes(inner.finish());
}

function time(f: FieldDesc, v: unknown, w: Writer): void {
  const text = str(f, v);
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw wrong(f, v);
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  const nanos = Number(fraction.padEnd(9, '0').slice(0, 9) || 0);
  w.tag(1, 0);
  w.varint(Math.floor(ms / 1000));
  if (nanos) {
    w.tag(2, 0);
    w.varint(nanos);
  }
}

function one(w: Writer, f: FieldDesc, no: number, v: unknown): void {
  switch (f.type) {
    case 'string':
      w.tag(no, 2);
      return w.string(str(f, v));
    case 'bytes':
      w.tag(no, 2);
      return w.bytes(Buffer.from(str(f, v), 'base64'));
    case 'bool':
      if (typeof v !== 'boolean') throw wrong(f, v);
      w.tag(no, 0);
      return w.varint(v ? 1 : 0);
    case 'int32':
    case 'int64':
      w.tag(no, 0);
      return w.varint(int(f, v));
    case 'Time':
    case 'MicroTime':
      return nested(w, no, (inner) => time(f, v, inner));
    case 'Quantity': {
      const q = typeof v === 'number' ? String(v) : str(f, v);
      return nested(w, no, (inner) => {
        inner.tag(1, 2);
        inner.string(q);
      });
    }
    case 'IntOrString':
      return nested(w, no, (inner) => {
        if (typeof v === 'string') {
          inner.tag(1, 0);
          inner.varint(1);
          inner.tag(3, 2);
          inner.string(v);
        } else {
          inner.tag(1, 0);
          inner.varint(0);
          inner.tag(2, 0);
          inner.varint(int(f, v));
        }
      });
    case 'FieldsV1':
      return nested(w, no, (inner) => {
        inner.tag(1, 2);
        inner.string(JSON.stringify(v));
      });
    default:
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw wrong(f, v);
      return nested(w, no, (inner) => writeMessage(inner, MESSAGES.get(f.type)!, v as Record<string, unknown>));
  }
}

/** The JSON names an embedded struct owns (its own fields and, recursively, those of structs it embeds). */
const INLINED = new WeakMap<MessageDesc, string[]>();
function inlinedNames(desc: MessageDesc): string[] {
  let names = INLINED.get(desc);
  if (!names) {
    names = [...desc.fields.values()].flatMap((f) => (f.inline ? inlinedNames(MESSAGES.get(f.type)!) : [f.name]));
    INLINED.set(desc, names);
  }
  return names;
}

const ORDERED = new WeakMap<MessageDesc, FieldDesc[]>();

function writeMessage(w: Writer, desc: MessageDesc, obj: Record<string, unknown>): void {
  let fields = ORDERED.get(desc);
  if (!fields) ORDERED.set(desc, (fields = [...desc.fields.values()].sort((a, b) => a.no - b.no)));
  for (const f of fields) {
    if (f.inline) {
      const inner = MESSAGES.get(f.type)!;
      const picked = Object.fromEntries(inlinedNames(inner).flatMap((n) => (n in obj ? [[n, obj[n]]] : [])));
      if (Object.keys(picked).length) nested(w, f.no, (sub) => writeMessage(sub, inner, picked));
      continue;
    }
    const v = obj[f.name];
    if (v === undefined || v === null) continue;
    if (f.map) {
      if (typeof v !== 'object' || Array.isArray(v)) throw wrong(f, v);
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        if (item === null) continue;
        nested(w, f.no, (entry) => {
          entry.tag(1, 2);
          entry.string(k);
          one(entry, f, 2, item);
        });
      }
    } else if (f.repeated) {
      if (!Array.isArray(v)) throw wrong(f, v);
      for (const item of v as unknown[]) one(w, f, f.no, item);
    } else one(w, f, f.no, v);
  }
}

/** A message's bytes (for hand-made bodies; responses go through `encodeObject`). */
export function encodeMessage(desc: MessageDesc, obj: Record<string, unknown>): number[] {
  const w = new Writer();
  writeMessage(w, desc, obj);
  return [...w.finish()];
}

/** `k8s\0` + runtime.Unknown{typeMeta{apiVersion, kind}, raw}. */
export function envelope(apiVersion: string, kind: string, raw: number[] | Uint8Array): Buffer {
  const w = new Writer();
  nested(w, 1, (typeMeta) => {
    typeMeta.tag(1, 2);
    typeMeta.string(apiVersion);
    typeMeta.tag(2, 2);
    typeMeta.string(kind);
  });
  w.tag(2, 2);
  w.bytes(raw instanceof Uint8Array ? raw : Uint8Array.from(raw));
  return Buffer.concat([PROTOBUF_MAGIC, w.finish()]);
}

/** An object (or a list: `{metadata, items}`) as the protobuf body of `message`. */
export function encodeObject(obj: Record<string, unknown>, message: MessageDesc): Buffer {
  const { apiVersion, kind, ...rest } = obj;
  const w = new Writer();
  writeMessage(w, message, rest);
  return envelope(String(apiVersion ?? ''), String(kind ?? ''), w.finish());
}
