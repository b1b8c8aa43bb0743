/**
 * Small wire helpers shared by the handlers: read a bounded request body, write JSON / Status answers the way
 * the apiserver does (always `application/json`, Status objects for every failure, `Warning: 299` headers).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, badRequest } from '../store/errors.js';

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export async function readBody(req: IncomingMessage): Promise<string> {
  return (await readBodyBytes(req)).toString('utf8');
}

export async function readBodyBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new ApiError(413, 'RequestEntityTooLarge', 'Request entity too large: limit is 8388608');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

export function isProtobufBody(req: IncomingMessage): boolean {
  return (req.headers['content-type'] ?? '').toLowerCase().startsWith(PROTOBUF);
}

/** Parse a JSON body; malformed JSON is a 400 with the decoder's message, as the apiserver answers. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw badRequest(`error decoding request body: ${(err as Error).message}`);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function sendJsonText(
  res: ServerResponse,
  status: number,
  json: string,
  contentType = 'application/json',
  warnings: string[] = [],
): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | string[]> = {
    'Content-Type': contentType,
    'Content-Length': String(Buffer.byteLength(json)),
  };
  if (warnings.length) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  res.writeHead(status, headers);
  res.end(json);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, warnings: string[] = []): void {
  sendJsonText(res, status, JSON.stringify(body), 'application/json', warnings);
}

export function sendError(res: ServerResponse, err: unknown): void {
  const apiError =
    err instanceof ApiError
      ? err
      : new ApiError(500, 'InternalError', `Internal error occurred: ${(err as Error)?.message ?? String(err)}`, {
          causes: [{ message: (err as Error)?.message ?? String(err) }],
        });
  if (!(err instanceof ApiError)) console.error('[sim] request failed:', err);
  sendJson(res, apiError.code, apiError.toStatus());
}

export function sendText(res: ServerResponse, status: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export const notFoundPath = () => new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});

export const methodNotAllowed = (verb: string, resource: string) =>
  new ApiError(405, 'MethodNotAllowed', `${verb} is not supported on resources of kind "${resource}"`, {});
