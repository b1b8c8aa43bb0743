/**
 * Request-body negotiation for object bodies (create, update, DeleteOptions), as the apiserver does it: the
 * `Content-Type` picks the decoder — JSON (also when the header is missing), YAML, or Kubernetes protobuf for the
 * built-in kinds we hold descriptors of. Custom resources are JSON/YAML only, as on a real cluster; anything else
 * is a 415 naming the media types this resource accepts.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { decodeObject } from '../proto/envelope.js';
import { MESSAGES, type MessageDesc, protobufMessageFor } from '../proto/schema.js';
import { ProtoError } from '../proto/wire.js';
import type { KindSpec } from '../resources/kinds.js';
import { ApiError, badRequest } from '../store/errors.js';
import { parseJson, PROTOBUF, readBodyBytes } from './wire.js';

const JSON_TYPE = 'application/json';
const YAML_TYPE = 'application/yaml';

function mediaTypeOf(req: IncomingMessage): string {
  return (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export function unsupportedMediaType(accepted: string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

async function decodeBody(req: IncomingMessage, message: MessageDesc | undefined): Promise<unknown> {
  const mediaType = mediaTypeOf(req);
  const accepted = message ? [JSON_TYPE, YAML_TYPE, PROTOBUF] : [JSON_TYPE, YAML_TYPE];
  if (mediaType !== '' && !accepted.includes(mediaType)) throw unsupportedMediaType(accepted);
  const bytes = await readBodyBytes(req);
  if (mediaType === PROTOBUF) {
    if (!bytes.length) return undefined;
    try {
      return decodeObject(bytes, message!);
    } catch (err) {
      if (err instanceof ProtoError) throw badRequest(`error decoding protobuf request body: ${err.message}`);
      throw err;
    }
  }
  const text = bytes.toString('utf8');
  if (!text.trim()) return undefined;
  if (mediaType === YAML_TYPE) {
    try {
      return parseYaml(text) as unknown;
    } catch (err) {
      throw badRequest(`error decoding YAML: ${(err as Error).message}`);
    }
  }
  return parseJson(text);
}

/** The body of a create or update of `type`; `undefined` when it is empty. */
export function readObjectBody(req: IncomingMessage, type: KindSpec): Promise<unknown> {
  return decodeBody(req, type.builtin ? protobufMessageFor(type.group, type.kind) : undefined);
}

/** A body of a kind we hold no descriptor of (e.g. autoscaling/v1 Scale): JSON or YAML. */
export function readJsonOrYamlBody(req: IncomingMessage): Promise<unknown> {
  return decodeBody(req, undefined);
}

/** A delete's optional DeleteOptions body; protobuf is accepted where the kind itself is served in protobuf. */
export function readDeleteOptionsBody(req: IncomingMessage, type: KindSpec): Promise<unknown> {
  const servesProtobuf = type.builtin && protobufMessageFor(type.group, type.kind) !== undefined;
  return decodeBody(req, servesProtobuf ? MESSAGES.get('DeleteOptions') : undefined);
}
