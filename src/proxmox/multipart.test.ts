import { describe, expect, it } from 'vitest';
import { boundaryOf, readMultipart } from './multipart';

const B = 'XyZ-boundary';

function body(file: Buffer, trailing = '\r\n'): Buffer {
  return Buffer.concat([
    Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="content"\r\n\r\nimport\r\n`),
    Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="filename"; filename="a.raw"\r\n`),
    Buffer.from('Content-Type: application/octet-stream\r\n\r\n'),
    file,
    Buffer.from(`\r\n--${B}--${trailing}`),
  ]);
}

/** The body cut into chunks of `size` bytes, so delimiters fall across chunk edges. */
async function* chunks(buf: Buffer, size: number): AsyncIterable<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function read(buf: Buffer, size: number) {
  let got: { fields: Map<string, string>; filename: string; bytes: Buffer } | undefined;
  const fields = await readMultipart(chunks(buf, size), B, async (f, part) => {
    const parts: Buffer[] = [];
    for await (const c of part.body) parts.push(c as Buffer);
    got = { fields: f, filename: part.filename, bytes: Buffer.concat(parts) };
  });
  return { fields, got };
}

describe('readMultipart', () => {
  // File bytes that contain CRLFs and a near-delimiter, so only the real closing boundary ends the part.
  const file = Buffer.concat([Buffer.from(`\r\n--${B.slice(0, 5)}\r\n`), Buffer.alloc(70_000, 7), Buffer.from('\r\n')]);

  for (const size of [1, 7, 64, 65_536]) {
    it(`hands on the file's exact bytes and the fields before it (chunks of ${size})`, async () => {
      const { fields, got } = await read(body(file), size);
      expect(got?.filename).toBe('a.raw');
      expect(got?.fields.get('content')).toBe('import');
      expect(got?.bytes.equals(file)).toBe(true);
      expect(fields.get('content')).toBe('import');
    });
  }

  it('takes a body that ends without the final CRLF', async () => {
    const { got } = await read(body(file, ''), 1000);
    expect(got?.bytes.equals(file)).toBe(true);
  });

  it('refuses a body cut off before its closing boundary', async () => {
    const whole = body(file);
    await expect(read(whole.subarray(0, whole.length - 20), 4096)).rejects.toThrow(/ended before its closing boundary/);
  });

  it("passes the consumer's failure on instead of waiting for it to read", async () => {
    const failing = readMultipart(chunks(body(Buffer.alloc(8 * 1024 * 1024, 1)), 65_536), B, () =>
      Promise.reject(new Error('the upload proxy said no')),
    );
    await expect(failing).rejects.toThrow('the upload proxy said no');
  });

  it('wants multipart/form-data with a boundary', () => {
    expect(boundaryOf(`multipart/form-data; boundary="${B}"`)).toBe(B);
    expect(() => boundaryOf('application/x-www-form-urlencoded')).toThrow(/multipart\/form-data/);
    expect(() => boundaryOf('multipart/form-data')).toThrow(/without a boundary/);
  });
});
