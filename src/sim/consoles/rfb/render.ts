/**
 * Rasterise a rectangle of the text screen into RFB pixel bytes (Raw encoding) or plain RGB (screenshots).
 * Glyph bits come straight from the font table; the cursor is an underline in the cell's foreground colour.
 */
import { endianness } from 'node:os';
import { glyphRow, GLYPH_HEIGHT, GLYPH_WIDTH } from '../font8x8.js';
import { COLS, PALETTE, ROWS, type TextScreen } from '../text-screen.js';

const LITTLE_ENDIAN_HOST = endianness() === 'LE';

export const SCREEN_WIDTH = COLS * GLYPH_WIDTH;
export const SCREEN_HEIGHT = ROWS * GLYPH_HEIGHT;

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Palette indexes of pixels x0..x1-1 of pixel row `py`, written into `target` from index 0. */
function paletteRow(screen: TextScreen, py: number, x0: number, x1: number, target: Uint8Array): void {
  const row = (py / GLYPH_HEIGHT) | 0;
  const gy = py % GLYPH_HEIGHT;
  const cursorCol =
    screen.cursorVisible && row === screen.cursorRow && gy >= GLYPH_HEIGHT - 2
      ? Math.min(screen.cursorCol, COLS - 1)
      : -1;
  let i = 0;
  let px = x0;
  while (px < x1) {
    const col = (px / GLYPH_WIDTH) | 0;
    const cell = row * COLS + col;
    const attr = screen.attrs[cell]!;
    const fg = attr & 0x0f;
    const bg = attr >> 4;
    // The cursor is an underline: its two pixel rows are fully lit in the foreground colour.
    const bits = col === cursorCol ? 0xff : glyphRow(screen.chars[cell]!, gy);
    const end = Math.min(x1, (col + 1) * GLYPH_WIDTH);
    for (; px < end; px++) target[i++] = (bits >> (px % GLYPH_WIDTH)) & 1 ? fg : bg;
  }
}

/** Raw-encoded pixels of `rect` given the per-colour byte patterns of the client's pixel format. */
export function renderRaw(screen: TextScreen, rect: Rect, colours: Buffer[]): Buffer {
  const bpp = colours[0]!.length;
  if (bpp === 4 && LITTLE_ENDIAN_HOST) return renderRaw32(screen, rect, colours);
  const out = Buffer.allocUnsafe(rect.w * rect.h * bpp);
  const indexes = new Uint8Array(rect.w);
  let o = 0;
  for (let py = rect.y; py < rect.y + rect.h; py++) {
    paletteRow(screen, py, rect.x, rect.x + rect.w, indexes);
    for (let i = 0; i < rect.w; i++) {
      const c = colours[indexes[i]!]!;
      for (let k = 0; k < bpp; k++) out[o++] = c[k]!;
    }
  }
  return out;
}

/** 32 bpp fast path: one 32-bit store per pixel (a full frame is 256 000 pixels). */
function renderRaw32(screen: TextScreen, rect: Rect, colours: Buffer[]): Buffer {
  const pixels = new Uint32Array(rect.w * rect.h);
  const words = colours.map((c) => c.readUInt32LE(0));
  const indexes = new Uint8Array(rect.w);
  let o = 0;
  for (let py = rect.y; py < rect.y + rect.h; py++) {
    paletteRow(screen, py, rect.x, rect.x + rect.w, indexes);
    for (let i = 0; i < rect.w; i++) pixels[o++] = words[indexes[i]!]!;
  }
  return Buffer.from(pixels.buffer, pixels.byteOffset, pixels.byteLength);
}

/** The whole screen as packed RGB triples (for the PNG screenshot). */
export function renderRgb(screen: TextScreen): Buffer {
  const out = Buffer.allocUnsafe(SCREEN_WIDTH * SCREEN_HEIGHT * 3);
  const indexes = new Uint8Array(SCREEN_WIDTH);
  let o = 0;
  for (let py = 0; py < SCREEN_HEIGHT; py++) {
    paletteRow(screen, py, 0, SCREEN_WIDTH, indexes);
    for (let i = 0; i < SCREEN_WIDTH; i++) {
      const [r, g, b] = PALETTE[indexes[i]!]!;
      out[o++] = r;
      out[o++] = g;
      out[o++] = b;
    }
  }
  return out;
}
