/**
 * Test helpers over the embedded cluster's own encoder: `encodeObject` picks the message by the object's kind, and
 * the wire building blocks (`field`, `varint`, `envelope`) make hand-made and malformed bodies.
 */
import { encodeObject as encodeWith } from '../../../src/sim/proto/encode.js';
import { MESSAGES } from '../../../src/sim/proto/schema.js';

export { encodeMessage, envelope, field, varint } from '../../../src/sim/proto/encode.js';

/** Encode a JSON object of a served built-in kind as client-go would send it. */
export function encodeObject(obj: Record<string, unknown> & { apiVersion: string; kind: string }): Buffer {
  return encodeWith(obj, MESSAGES.get(obj.kind)!);
}
