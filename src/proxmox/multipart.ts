/**
 * A streaming `multipart/form-data` reader for PVE's storage upload (`POST …/storage/{storage}/upload`): small
 * fields are collected, the one file part is handed on as a stream while the request is still arriving, with
 * backpressure (a slow consumer pauses the request), so a disk image of any size passes through without being held
 * in memory or written to disk here. Clients send the fields (`content`, …) before the file, as proxmoxer, curl and
 * `FormData` do; fields after the file are still read.
 */
import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import { ProxmoxError } from './wire';

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
const MAX_HEADERS = 8 * 1024;
const MAX_FIELD = 64 * 1024;

export interface FilePart {
  /** The form field's name (PVE's is `filename`). */
  field: string;
  /** The file name the client gave. */
  filename: string;
  body: Readable;
}

/** The boundary of a `multipart/form-data` content type, or a 400 naming what is wrong. */
export function boundaryOf(contentType: string | undefined): string {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'multipart/form-data')
    throw new ProxmoxError(400, 'upload: the body must be multipart/form-data (fields content and filename)');
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType ?? '');
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary || boundary.length > 70) throw new ProxmoxError(400, 'upload: multipart/form-data without a boundary');
  return boundary;
}

interface PartHeaders {
  name: string;
  filename?: string;
}

function parseHeaders(text: string): PartHeaders {
  const disposition = text
    .split('\r\n')
    .find((l) => l.toLowerCase().startsWith('content-disposition:'))
    ?.slice('content-disposition:'.length);
  if (!disposition) throw new ProxmoxError(400, 'upload: a multipart part has no Content-Disposition');
  const param = (key: string) => {
    const m = new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(disposition);
    return m?.[1]?.replace(/\\(.)/g, '$1');
  };
  const name = param('name');
  if (name === undefined) throw new ProxmoxError(400, 'upload: a multipart part has no field name');
  const filename = param('filename');
  return { name, ...(filename !== undefined ? { filename } : {}) };
}

/**
 * Reads `body` to its end. `onFile` is called once, when the file part starts, with the fields read so far; the
 * promise it returns is the file's consumer (it must read `part.body` to its end). Resolves with every field once
 * the body and the consumer have both ended; rejects with a 400 for a malformed body, or with the consumer's error.
 */
export async function readMultipart(
  body: AsyncIterable<Buffer>,
  boundary: string,
  onFile: (fields: Map<string, string>, part: FilePart) => Promise<void>,
): Promise<Map<string, string>> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const fields = new Map<string, string>();
  // The body starts with `--boundary`; a leading CRLF makes the first delimiter look like every other one.
  let buf: Buffer = Buffer.from(CRLF);
  type State = 'preamble' | 'after-delimiter' | 'headers' | 'part' | 'done';
  // `step` moves the state on; typed wide so the loop's checks are not narrowed to the initial value.
  let state = 'preamble' as State;
  let part: PartHeaders | undefined;
  let field: Buffer[] = [];
  let fieldSize = 0;
  let file: PassThrough | undefined;
  let consumer: Promise<void> | undefined;
  let consumerFailed: unknown;
  let consumerEnded = false;

  const writeFile = async (chunk: Buffer) => {
    if (!file || chunk.length === 0) return;
    if (file.write(chunk)) return;
    // Wait for the consumer to take more, unless it has ended (failed, or stopped reading).
    await Promise.race([
      new Promise<void>((resolve) => file?.once('drain', resolve)),
      (consumer ?? Promise.resolve()).then(() => {
        throw consumerFailed ?? new ProxmoxError(400, 'upload: the file was not read to its end');
      }),
    ]);
  };
  const emit = async (data: Buffer) => {
    if (!part || data.length === 0) return;
    if (part.filename !== undefined) return writeFile(data);
    fieldSize += data.length;
    if (fieldSize > MAX_FIELD) throw new ProxmoxError(400, `upload: field ${part.name} is too long`);
    field.push(data);
  };
  const endPart = () => {
    if (!part) return;
    if (part.filename !== undefined) file?.end();
    else fields.set(part.name, Buffer.concat(field).toString('utf8'));
    part = undefined;
    field = [];
    fieldSize = 0;
  };

  const step = async (): Promise<boolean> => {
    switch (state) {
      case 'preamble':
      case 'part': {
        const at = buf.indexOf(delimiter);
        if (at < 0) {
          // Keep a tail that may be the start of a delimiter split across chunks.
          const keep = Math.min(buf.length, delimiter.length - 1);
          if (state === 'part') await emit(buf.subarray(0, buf.length - keep));
          buf = buf.subarray(buf.length - keep);
          return false;
        }
        if (state === 'part') {
          await emit(buf.subarray(0, at));
          endPart();
        }
        buf = buf.subarray(at + delimiter.length);
        state = 'after-delimiter';
        return true;
      }
      case 'after-delimiter': {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = 'done';
          return false;
        }
        const eol = buf.indexOf(CRLF);
        if (eol < 0) return false;
        buf = buf.subarray(eol + 2);
        state = 'headers';
        return true;
      }
      case 'headers': {
        const end = buf.indexOf(HEADER_END);
        // A part without headers ends at once (`\r\n` straight after the delimiter line).
        if (buf.subarray(0, 2).equals(CRLF)) throw new ProxmoxError(400, 'upload: a multipart part has no headers');
        if (end < 0) {
          if (buf.length > MAX_HEADERS) throw new ProxmoxError(400, 'upload: multipart part headers too long');
          return false;
        }
        part = parseHeaders(buf.subarray(0, end).toString('utf8'));
        buf = buf.subarray(end + HEADER_END.length);
        state = 'part';
        if (part.filename !== undefined) {
          if (file) throw new ProxmoxError(400, 'upload: only one file may be sent');
          file = new PassThrough({ highWaterMark: 1024 * 1024 });
          // A consumer that already failed no longer listens; the reader's error reaches the caller instead.
          file.on('error', () => undefined);
          consumer = onFile(new Map(fields), { field: part.name, filename: part.filename, body: file }).then(
            () => {
              consumerEnded = true;
            },
            (err: unknown) => {
              consumerEnded = true;
              consumerFailed = err;
            },
          );
        }
        return true;
      }
      case 'done':
        return false;
    }
  };

  try {
    for await (const chunk of body) {
      if (consumerEnded && consumerFailed) throw consumerFailed;
      if (state === 'done') continue; // the epilogue is ignored
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      while (await step());
    }
    if (state !== 'done') throw new ProxmoxError(400, 'upload: the multipart body ended before its closing boundary');
  } catch (err) {
    file?.destroy(err instanceof Error ? err : new Error(String(err)));
    await consumer;
    throw err;
  }
  await consumer;
  if (consumerFailed) throw consumerFailed;
  return fields;
}
