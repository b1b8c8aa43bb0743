/**
 * RFB PIXEL_FORMAT (RFC 6143 §7.4): how a client wants pixel values laid out. The server must honour whatever the
 * latest SetPixelFormat asked for; this module turns the 16 palette colours into ready-made byte patterns so
 * rendering is a table lookup per pixel.
 */
import { PALETTE } from '../text-screen.js';

export interface PixelFormat {
  bitsPerPixel: 8 | 16 | 32;
  depth: number;
  bigEndian: boolean;
  trueColour: boolean;
  redMax: number;
  greenMax: number;
  blueMax: number;
  redShift: number;
  greenShift: number;
  blueShift: number;
}

/** What the server announces in ServerInit (QEMU's default): 32 bpp, depth 24, little-endian, RGB888. */
export const SERVER_PIXEL_FORMAT: PixelFormat = {
  bitsPerPixel: 32,
  depth: 24,
  bigEndian: false,
  trueColour: true,
  redMax: 255,
  greenMax: 255,
  blueMax: 255,
  redShift: 16,
  greenShift: 8,
  blueShift: 0,
};

export function encodePixelFormat(pf: PixelFormat): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt8(pf.bitsPerPixel, 0);
  b.writeUInt8(pf.depth, 1);
  b.writeUInt8(pf.bigEndian ? 1 : 0, 2);
  b.writeUInt8(pf.trueColour ? 1 : 0, 3);
  b.writeUInt16BE(pf.redMax, 4);
  b.writeUInt16BE(pf.greenMax, 6);
  b.writeUInt16BE(pf.blueMax, 8);
  b.writeUInt8(pf.redShift, 10);
  b.writeUInt8(pf.greenShift, 11);
  b.writeUInt8(pf.blueShift, 12);
  return b;
}

/** Parse the 16 PIXEL_FORMAT bytes at `offset`; throws on a format no RFB server can honour. */
export function decodePixelFormat(b: Buffer, offset: number): PixelFormat {
  const bpp = b.readUInt8(offset);
  if (bpp !== 8 && bpp !== 16 && bpp !== 32) throw new Error(`unsupported bits-per-pixel ${bpp}`);
  const pf: PixelFormat = {
    bitsPerPixel: bpp,
    depth: b.readUInt8(offset + 1),
    bigEndian: b.readUInt8(offset + 2) !== 0,
    trueColour: b.readUInt8(offset + 3) !== 0,
    redMax: b.readUInt16BE(offset + 4),
    greenMax: b.readUInt16BE(offset + 6),
    blueMax: b.readUInt16BE(offset + 8),
    redShift: b.readUInt8(offset + 10),
    greenShift: b.readUInt8(offset + 11),
    blueShift: b.readUInt8(offset + 12),
  };
  if (pf.trueColour && (pf.redShift >= bpp || pf.greenShift >= bpp || pf.blueShift >= bpp)) {
    throw new Error('colour shift outside the pixel');
  }
  return pf;
}

/**
 * The wire bytes of each palette colour in `pf`. In colour-map mode (trueColour 0) the pixel value is the palette
 * index and the client learns the colours from SetColourMapEntries.
 */
export function paletteBytes(pf: PixelFormat): Buffer[] {
  const bytes = pf.bitsPerPixel / 8;
  return PALETTE.map(([r, g, b], index) => {
    const value = pf.trueColour
      ? (scale(r, pf.redMax) << pf.redShift) |
        (scale(g, pf.greenMax) << pf.greenShift) |
        (scale(b, pf.blueMax) << pf.blueShift)
      : index;
    const out = Buffer.alloc(bytes);
    if (bytes === 1) out.writeUInt8(value & 0xff, 0);
    else if (bytes === 2) {
      if (pf.bigEndian) out.writeUInt16BE(value & 0xffff, 0);
      else out.writeUInt16LE(value & 0xffff, 0);
    } else if (pf.bigEndian) out.writeUInt32BE(value >>> 0, 0);
    else out.writeUInt32LE(value >>> 0, 0);
    return out;
  });
}

function scale(component: number, max: number): number {
  return Math.round((component * max) / 255);
}

/** SetColourMapEntries (server message 1) carrying the palette, for clients in colour-map mode. */
export function colourMapMessage(): Buffer {
  const b = Buffer.alloc(6 + PALETTE.length * 6);
  b.writeUInt8(1, 0);
  b.writeUInt16BE(0, 2);
  b.writeUInt16BE(PALETTE.length, 4);
  PALETTE.forEach(([r, g, bl], i) => {
    b.writeUInt16BE(r * 257, 6 + i * 6);
    b.writeUInt16BE(g * 257, 8 + i * 6);
    b.writeUInt16BE(bl * 257, 10 + i * 6);
  });
  return b;
}
