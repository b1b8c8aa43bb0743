/**
 * Protobuf message → the JSON object the Kubernetes JSON encoding of the same Go value has: int-or-string as a
 * number or string, Quantity as its string, Time as RFC 3339 (MicroTime with microseconds), maps as objects, bytes
 * as base64, FieldsV1 as the JSON it carries, embedded structs inlined, and zero-valued non-pointer scalars dropped (`omitempty`).
 */
import { type FieldDesc, type MessageDesc, MESSAGES, scalarType, wellKnownType } from './schema.js';
import type { ProtoReader } from './wire.js';
import { ProtoError, WIRE } from './wire.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const utf8 = new TextDecoder('utf-8');
const base64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');

function expectWire(field: FieldDesc, owner: string, got: number, want: number): void {
  if (got !== want)
    throw new ProtoError(`field ${owner}.${field.name} (${field.no}) has wire type ${got}, expected ${want}`);
}

/** The Go time.Time JSON form: RFC 3339 in UTC, seconds (Time) or microseconds (MicroTime). */
function timestamp(reader: ProtoReader, micro: boolean): string | null {
  let seconds = 0;
  let nanos = 0;
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (no === 1 && wireType === WIRE.varint) seconds = reader.signed(64);
    else if (no === 2 && wireType === WIRE.varint) nanos = reader.signed(32);
    else reader.skip(wireType);
  }
  // The zero time (an unset non-pointer Time, e.g. a pod template's creationTimestamp) is an empty message on the
  // wire and null in JSON; an unset pointer Time is not on the wire at all.
  if (seconds === 0 && nanos === 0) return null;
  const date = new Date(seconds * 1000);
  const year = date.getUTCFullYear();
  // Go's RFC 3339 encoder refuses years outside 0..9999 too.
  if (Number.isNaN(year) || year < 0 || year > 9999) throw new ProtoError(`timestamp ${seconds}s is out of range`);
  const base = date.toISOString().slice(0, 19);
  return micro ? `${base}.${String(Math.floor(nanos / 1000)).padStart(6, '0')}Z` : `${base}Z`;
}

function quantity(reader: ProtoReader): string {
  let value = '';
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (no === 1 && wireType === WIRE.bytes) value = reader.string();
    else reader.skip(wireType);
  }
  return value;
}

function intOrString(reader: ProtoReader): number | string {
  let type = 0;
  let intVal = 0;
  let strVal = '';
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (no === 1 && wireType === WIRE.varint) type = reader.signed(64);
    else if (no === 2 && wireType === WIRE.varint) intVal = reader.signed(32);
    else if (no === 3 && wireType === WIRE.bytes) strVal = reader.string();
    else reader.skip(wireType);
  }
  return type === 1 ? strVal : intVal;
}

function fieldsV1(reader: ProtoReader): Json {
  let raw: Uint8Array = new Uint8Array();
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (no === 1 && wireType === WIRE.bytes) raw = reader.bytes();
    else reader.skip(wireType);
  }
  if (!raw.length) return null;
  try {
    return JSON.parse(utf8.decode(raw)) as Json;
  } catch {
    throw new ProtoError('FieldsV1 does not hold JSON');
  }
}

/** One value of `field`'s type at the reader's position (the field header already read). */
function value(field: FieldDesc, owner: string, reader: ProtoReader, wireType: number): Json {
  const scalar = scalarType(field);
  if (scalar === 'bool' || scalar === 'int32' || scalar === 'int64') {
    expectWire(field, owner, wireType, WIRE.varint);
    return scalar === 'bool' ? reader.uint() !== 0 : reader.signed(scalar === 'int32' ? 32 : 64);
  }
  expectWire(field, owner, wireType, WIRE.bytes);
  if (scalar === 'string') return reader.string();
  if (scalar === 'bytes') return base64(reader.bytes());
  const sub = reader.sub();
  switch (wellKnownType(field)) {
    case 'Time':
      return timestamp(sub, false);
    case 'MicroTime':
      return timestamp(sub, true);
    case 'Quantity':
      return quantity(sub);
    case 'IntOrString':
      return intOrString(sub);
    case 'FieldsV1':
      return fieldsV1(sub);
    default:
      return decodeMessage(MESSAGES.get(field.type)!, sub);
  }
}

function zeroOf(type: string): Json {
  if (type === 'string' || type === 'bytes' || type === 'Quantity') return '';
  if (type === 'int32' || type === 'int64' || type === 'IntOrString') return 0;
  return type === 'bool' ? false : {};
}

/** A `map<string, T>` entry: key = 1, value = 2; a missing value is T's zero value. */
function mapEntry(field: FieldDesc, owner: string, reader: ProtoReader): [string, Json] {
  let key = '';
  let entry: Json | undefined;
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (no === 1) {
      expectWire(field, owner, wireType, WIRE.bytes);
      key = reader.string();
    } else if (no === 2) entry = value(field, owner, reader, wireType);
    else reader.skip(wireType);
  }
  return [key, entry ?? zeroOf(field.type)];
}

const PACKABLE = new Set(['bool', 'int32', 'int64']);

/** Plain (non-pointer) singular scalars: a zero value is left out, as the JSON encoder's `omitempty` does. */
const DROP_ZERO = new WeakSet<FieldDesc>(
  [...MESSAGES.values()].flatMap((m) =>
    [...m.fields.values()].filter((f) => !f.pointer && !f.repeated && !f.map && scalarType(f)),
  ),
);

function isZero(v: Json): boolean {
  return v === '' || v === 0 || v === false;
}

export function decodeMessage(desc: MessageDesc, reader: ProtoReader): { [key: string]: Json } {
  const out: { [key: string]: Json } = {};
  while (!reader.done) {
    const { no, wireType } = reader.header();
    const field = desc.fields.get(no);
    if (!field) {
      reader.skip(wireType);
      continue;
    }
    if (field.map) {
      expectWire(field, desc.name, wireType, WIRE.bytes);
      const [key, v] = mapEntry(field, desc.name, reader.sub());
      ((out[field.name] ??= {}) as { [key: string]: Json })[key] = v;
    } else if (field.repeated) {
      const list = (out[field.name] ??= []) as Json[];
      if (PACKABLE.has(field.type) && wireType === WIRE.bytes) {
        const packed = reader.sub();
        while (!packed.done) list.push(value(field, desc.name, packed, WIRE.varint));
      } else list.push(value(field, desc.name, reader, wireType));
    } else if (field.inline) {
      expectWire(field, desc.name, wireType, WIRE.bytes);
      Object.assign(out, decodeMessage(MESSAGES.get(field.type)!, reader.sub()));
    } else {
      const v = value(field, desc.name, reader, wireType);
      if (DROP_ZERO.has(field) && isZero(v)) delete out[field.name];
      else out[field.name] = v;
    }
  }
  return out;
}
