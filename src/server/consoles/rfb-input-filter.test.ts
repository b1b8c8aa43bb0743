import { describe, expect, it } from 'vitest';
import { createRfbInputFilter } from './rfb-input-filter.js';

const version = Buffer.from('RFB 003.008\n');
const securityNone = Buffer.from([1]);
const clientInit = Buffer.from([1]);
const setPixelFormat = Buffer.from([0, 0, 0, 0, 32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 0, 8, 16, 0, 0, 0]);
const setEncodings = Buffer.from([2, 0, 0, 2, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x21]);
const fbur = Buffer.from([3, 1, 0, 0, 0, 0, 2, 128, 1, 144]);
const keyDown = Buffer.from([4, 1, 0, 0, 0, 0, 0, 0x61]);
const pointer = Buffer.from([5, 1, 0, 10, 0, 20]);
function cutText(text: string): Buffer {
  const head = Buffer.from([6, 0, 0, 0, 0, 0, 0, 0]);
  head.writeInt32BE(text.length, 4);
  return Buffer.concat([head, Buffer.from(text, 'latin1')]);
}
const xvpReboot = Buffer.from([250, 0, 1, 3]);
const qemuKey = Buffer.from([255, 0, 0, 1, 0, 0, 0, 0x61, 0, 0, 0, 0x1e]);
const fence = Buffer.from([248, 0, 0, 0, 0, 0, 0, 3, 2, 0xaa, 0xbb]);
const handshake = Buffer.concat([version, securityNone, clientInit]);

function run(chunks: Buffer[]): Buffer {
  const filter = createRfbInputFilter();
  const out: Buffer[] = [];
  for (const c of chunks) {
    const r = filter.push(c);
    if (r instanceof Error) throw r;
    out.push(r);
  }
  return Buffer.concat(out);
}

/** Splits a buffer into pieces of the given size, to prove message boundaries do not matter. */
function chop(buf: Buffer, size: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) parts.push(buf.subarray(i, i + size));
  return parts;
}

describe('RFB read-only input filter', () => {
  const session = Buffer.concat([
    handshake,
    setPixelFormat,
    setEncodings,
    fbur,
    keyDown,
    pointer,
    cutText('rm -rf /\n'),
    xvpReboot,
    qemuKey,
    fence,
    fbur,
  ]);
  const watched = Buffer.concat([handshake, setPixelFormat, setEncodings, fbur, fence, fbur]);

  it('passes the handshake and viewing messages, drops keys, pointer, clipboard, xvp and QEMU keys', () => {
    expect(run([session]).equals(watched)).toBe(true);
  });

  it('gives the same result whatever the chunking (1, 3, 7 byte pieces)', () => {
    for (const size of [1, 3, 7]) expect(run(chop(session, size)).equals(watched)).toBe(true);
  });

  it('skips a long clipboard paste as it streams, without passing any of it', () => {
    const big = cutText('x'.repeat(100_000));
    const out = run([handshake, ...chop(big, 4096), fbur]);
    expect(out.equals(Buffer.concat([handshake, fbur]))).toBe(true);
  });

  it('drops an extended-clipboard (negative length) message', () => {
    const ext = Buffer.from([6, 0, 0, 0, 0xff, 0xff, 0xff, 0xfc, 1, 2, 3, 4]);
    expect(run([handshake, ext, fbur]).equals(Buffer.concat([handshake, fbur]))).toBe(true);
  });

  it('drops SetDesktopSize (the viewer may not resize the guest)', () => {
    const resize = Buffer.concat([Buffer.from([251, 0, 4, 0, 3, 0, 1, 0]), Buffer.alloc(16)]);
    expect(run([handshake, resize, fbur]).equals(Buffer.concat([handshake, fbur]))).toBe(true);
  });

  it('removes ExtendedMouseButtons from SetEncodings so pointer events keep their plain length', () => {
    const encodings = Buffer.from([2, 0, 0, 3, 0, 0, 0, 0, 0xff, 0xff, 0xfe, 0xc4, 0xff, 0xff, 0xff, 0x21]); // Raw, -316, -223
    const out = run([handshake, encodings]);
    expect(out.subarray(handshake.length).equals(Buffer.from([2, 0, 0, 2, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0x21]))).toBe(
      true,
    );
  });

  it('refuses an unknown message type instead of guessing its length', () => {
    const filter = createRfbInputFilter();
    filter.push(handshake);
    const r = filter.push(Buffer.from([77, 0, 0]));
    expect(r).toBeInstanceOf(Error);
    expect((r as Error).message).toMatch(/Unknown RFB client message type 77/);
  });

  it('refuses a stream that does not start with a protocol version', () => {
    const r = createRfbInputFilter().push(Buffer.from('GET / HTTP/1.1\r\n'));
    expect(r).toBeInstanceOf(Error);
  });

  it('follows RFB 3.3, where the client sends no security choice', () => {
    const v33 = Buffer.from('RFB 003.003\n');
    expect(run([v33, clientInit, keyDown, fbur]).equals(Buffer.concat([v33, clientInit, fbur]))).toBe(true);
  });
});
