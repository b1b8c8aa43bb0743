/**
 * Protobuf responses for get and list of the built-in kinds we hold descriptors of, when the client lists
 * `application/vnd.kubernetes.protobuf` first in `Accept` (client-go's typed clients, `kubectl describe`). Anything
 * else — JSON first, Table, watch, custom resources, an object the encoder cannot represent — is answered in JSON,
 * which those clients list second and accept.
 */
import type { ServerResponse } from 'node:http';
import { EncodeError, encodeObject } from '../proto/encode.js';
import type { MessageDesc } from '../proto/schema.js';
import { PROTOBUF } from './wire.js';

export function wantsProtobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  const [mediaType, ...params] = accept
    .split(',')[0]!
    .split(';')
    .map((p) => p.trim().toLowerCase());
  return mediaType === PROTOBUF && !params.some((p) => p.startsWith('as='));
}

/** Answer `obj` in protobuf; false (nothing sent) when a field holds a value its protobuf type cannot carry. */
export function sendProtobuf(res: ServerResponse, status: number, obj: object, message: MessageDesc): boolean {
  let body: Buffer;
  try {
    body = encodeObject(obj as Record<string, unknown>, message);
  } catch (err) {
    if (err instanceof EncodeError) return false;
    throw err;
  }
  if (res.headersSent || res.destroyed) return true;
  res.writeHead(status, { 'Content-Type': PROTOBUF, 'Content-Length': String(body.length) });
  res.end(body);
  return true;
}
