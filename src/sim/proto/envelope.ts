/**
 * The Kubernetes protobuf envelope (`application/vnd.kubernetes.protobuf`): the 4-byte magic `k8s\0`, then a
 * `runtime.Unknown` message {1 typeMeta {1 apiVersion, 2 kind}, 2 raw, 3 contentEncoding, 4 contentType} whose
 * `raw` is the object in the kind's own message. Decoding gives the same JSON object the JSON encoding would.
 */
import { decodeMessage } from './decode.js';
import type { MessageDesc } from './schema.js';
import { ProtoError, ProtoReader, WIRE } from './wire.js';

export const PROTOBUF_MAGIC = Uint8Array.from([0x6b, 0x38, 0x73, 0x00]);

export interface Unknown {
  apiVersion: string;
  kind: string;
  raw: Uint8Array;
  contentEncoding: string;
  contentType: string;
}

const utf8 = new TextDecoder('utf-8');

function typeMeta(reader: ProtoReader, into: Unknown): void {
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (wireType !== WIRE.bytes) reader.skip(wireType);
    else if (no === 1) into.apiVersion = utf8.decode(reader.bytes());
    else if (no === 2) into.kind = utf8.decode(reader.bytes());
    else reader.skip(wireType);
  }
}

export function readEnvelope(body: Uint8Array): Unknown {
  if (body.length < PROTOBUF_MAGIC.length || PROTOBUF_MAGIC.some((b, i) => body[i] !== b))
    throw new ProtoError('the body does not start with the protobuf magic "k8s\\x00"');
  const reader = new ProtoReader(body);
  reader.pos = PROTOBUF_MAGIC.length;
  const out: Unknown = { apiVersion: '', kind: '', raw: new Uint8Array(), contentEncoding: '', contentType: '' };
  while (!reader.done) {
    const { no, wireType } = reader.header();
    if (wireType !== WIRE.bytes) reader.skip(wireType);
    else if (no === 1) typeMeta(reader.sub(), out);
    else if (no === 2) out.raw = reader.bytes();
    else if (no === 3) out.contentEncoding = utf8.decode(reader.bytes());
    else if (no === 4) out.contentType = utf8.decode(reader.bytes());
    else reader.skip(wireType);
  }
  return out;
}

/** Decode an enveloped object with `message`; `apiVersion` and `kind` come from the envelope's TypeMeta. */
export function decodeObject(body: Uint8Array, message: MessageDesc): Record<string, unknown> {
  const envelope = readEnvelope(body);
  if (envelope.contentEncoding) throw new ProtoError(`unsupported content encoding "${envelope.contentEncoding}"`);
  if (envelope.contentType && envelope.contentType !== 'application/vnd.kubernetes.protobuf')
    throw new ProtoError(`unsupported embedded content type "${envelope.contentType}"`);
  const object = decodeMessage(message, new ProtoReader(envelope.raw));
  return {
    ...(envelope.kind ? { kind: envelope.kind } : {}),
    ...(envelope.apiVersion ? { apiVersion: envelope.apiVersion } : {}),
    ...object,
  };
}
