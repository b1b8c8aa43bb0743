/** The RFB state machine on its own, fed byte by byte: versions, security, pixel formats, protocol errors. */
import { describe, expect, it } from 'vitest';
import { RfbServer } from '../../../src/sim/consoles/rfb/rfb-server.js';
import { TextScreen } from '../../../src/sim/consoles/text-screen.js';

function harness() {
  const screen = new TextScreen();
  const sent: Buffer[] = [];
  const keys: [number, boolean][] = [];
  let closed: string | undefined;
  const server = new RfbServer({
    screen,
    name: 'vm-1',
    send: (b) => sent.push(b),
    close: (reason) => (closed = reason),
    onKey: (k, d) => keys.push([k, d]),
  });
  const output = () => Buffer.concat(sent.splice(0));
  return { screen, server, output, keys, closed: () => closed };
}

/** Feed one byte at a time: message boundaries on a WebSocket are arbitrary. */
function feed(server: RfbServer, bytes: Buffer | number[]): void {
  for (const b of Buffer.from(bytes)) server.receive(Buffer.from([b]));
}

function pixelFormat(
  bpp: number,
  bigEndian: boolean,
  trueColour: boolean,
  shifts: [number, number, number],
  max = 255,
): number[] {
  const b = Buffer.alloc(20);
  b.writeUInt8(0, 0);
  b.writeUInt8(bpp, 4);
  b.writeUInt8(bpp === 32 ? 24 : bpp, 5);
  b.writeUInt8(bigEndian ? 1 : 0, 6);
  b.writeUInt8(trueColour ? 1 : 0, 7);
  b.writeUInt16BE(max, 8);
  b.writeUInt16BE(max, 10);
  b.writeUInt16BE(max, 12);
  b.writeUInt8(shifts[0], 14);
  b.writeUInt8(shifts[1], 15);
  b.writeUInt8(shifts[2], 16);
  return [...b];
}

const fullRequest = [3, 0, 0, 0, 0, 0, 0x02, 0x80, 0x01, 0x90]; // 640x400, non-incremental

function handshake38(h: ReturnType<typeof harness>): Buffer {
  expect(h.output().toString('latin1')).toBe('RFB 003.008\n');
  feed(h.server, Buffer.from('RFB 003.008\n'));
  expect([...h.output()]).toEqual([1, 1]);
  feed(h.server, [1]);
  expect([...h.output()]).toEqual([0, 0, 0, 0]);
  feed(h.server, [1]);
  return h.output();
}

describe('RfbServer', () => {
  it('sends ServerInit with 640x400, the announced 32 bpp RGB888 format and the name', () => {
    const h = harness();
    const init = handshake38(h);
    expect(init.readUInt16BE(0)).toBe(640);
    expect(init.readUInt16BE(2)).toBe(400);
    expect([...init.subarray(4, 20)]).toEqual([32, 24, 0, 1, 0, 255, 0, 255, 0, 255, 16, 8, 0, 0, 0, 0]);
    expect(init.readUInt32BE(20)).toBe(4);
    expect(init.subarray(24).toString()).toBe('vm-1');
  });

  it('speaks 3.3 (server-chosen security, no SecurityResult) to old clients', () => {
    const h = harness();
    h.output();
    feed(h.server, Buffer.from('RFB 003.003\n'));
    expect([...h.output()]).toEqual([0, 0, 0, 1]);
    feed(h.server, [0]);
    expect(h.output().readUInt16BE(0)).toBe(640);
  });

  it('refuses a security type other than None with a reason, then closes', () => {
    const h = harness();
    h.output();
    feed(h.server, Buffer.from('RFB 003.008\n'));
    h.output();
    feed(h.server, [2]);
    const failure = h.output();
    expect(failure.readUInt32BE(0)).toBe(1);
    expect(failure.subarray(8).toString()).toContain('only security type None');
    expect(h.closed()).toContain('security type 2');
  });

  it('closes on a garbage version string and on an unknown message type', () => {
    const a = harness();
    feed(a.server, Buffer.from('HTTP/1.1 200'));
    expect(a.closed()).toContain('unsupported protocol version');
    const b = harness();
    handshake38(b);
    feed(b.server, [42]);
    expect(b.closed()).toContain('unknown client message type 42');
  });

  it('honours SetPixelFormat: 16 bpp big-endian RGB565', () => {
    const h = harness();
    handshake38(h);
    h.screen.setStatus('vm-1', 'tty1');
    // RGB565 has different maxima per channel; patch them in.
    const pf = Buffer.from(pixelFormat(16, true, true, [11, 5, 0]));
    pf.writeUInt16BE(31, 8);
    pf.writeUInt16BE(63, 10);
    pf.writeUInt16BE(31, 12);
    feed(h.server, pf);
    feed(h.server, fullRequest);
    const update = h.output();
    expect(update.readUInt16BE(2)).toBe(1);
    expect(update.length).toBe(4 + 12 + 640 * 400 * 2);
    // Row 0 is the status bar: bright white glyph pixels on blue (0,0,170) → blue = round(170*31/255) = 21.
    const firstPixel = update.readUInt16BE(16);
    expect(firstPixel).toBe(21);
  });

  it('in colour-map mode sends SetColourMapEntries and palette indexes as 8-bit pixels', () => {
    const h = harness();
    handshake38(h);
    h.screen.setStatus('vm-1', 'tty1');
    feed(h.server, pixelFormat(8, false, false, [0, 0, 0]));
    const map = h.output();
    expect(map[0]).toBe(1);
    expect(map.readUInt16BE(4)).toBe(16);
    expect(map.readUInt16BE(6 + 1 * 6 + 4)).toBe(0xaa * 257); // colour 1 is VGA blue
    feed(h.server, fullRequest);
    const update = h.output();
    expect(update.length).toBe(4 + 12 + 640 * 400);
    expect(update[16]).toBe(1); // top-left pixel: the blue status bar
  });

  it('parses KeyEvent, PointerEvent and ClientCutText split across messages, and refuses a huge cut text', () => {
    const h = harness();
    handshake38(h);
    feed(h.server, [5, 1, 0, 10, 0, 20]);
    feed(h.server, [6, 0, 0, 0, 0, 0, 0, 3, 0x61, 0x62, 0x63]);
    feed(h.server, [4, 1, 0, 0, 0, 0, 0xff, 0x0d]);
    expect(h.keys).toEqual([[0xff0d, true]]);
    expect(h.closed()).toBeUndefined();
    feed(h.server, [6, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff]);
    expect(h.closed()).toContain('ClientCutText length');
  });

  it('holds an incremental request until the screen changes, then sends only the dirty cells', async () => {
    const h = harness();
    handshake38(h);
    feed(h.server, fullRequest);
    h.output();
    feed(h.server, [3, 1, 0, 0, 0, 0, 0x02, 0x80, 0x01, 0x90]);
    await new Promise((r) => setTimeout(r, 50));
    expect(h.output().length).toBe(0);
    h.screen.write('A');
    await new Promise((r) => setTimeout(r, 50));
    const update = h.output();
    expect(update.readUInt16BE(2)).toBe(1);
    // The 'A' cell and the cursor moving right: one rect two cells wide on text row 1.
    expect([update.readUInt16BE(4), update.readUInt16BE(6), update.readUInt16BE(8), update.readUInt16BE(10)]).toEqual([
      0, 16, 16, 16,
    ]);
    expect(h.server.stats.updates).toBe(2);
  });
});
