/**
 * Rasterise a rectangle of the text screen into RFB pixel bytes (Raw encoding) or plain RGB (screenshots).
 * Glyph bits come straight from the font table; the cursor is an underline in the cell's foreground colour.
 */
import { glyphRow, GLYPH_HEIGHT, GLYPH_WIDTH } from '../font8x8.js';
import { COLS, PALETTE, ROWS, type TextScreen } from '../text-screen.js';

export const SCREEN_WIDTH = COLS * GLYPH_WIDTH;
export const SCREEN_HEIGHT = ROWS * GLYPH_HEIGHT;

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** Palette index of every pixel of `rect`, row by row. */
function forEachPixel(screen: TextScreen, rect: Rect, emit: (paletteIndex: number) => void): void {
  for (let py = rect.y; py < rect.y + rect.h; py++) {
    const row = (py / GLYPH_HEIGHT) | 0;
    const gy = py % GLYPH_HEIGHT;
    const cursorLine = screen.cursorVisible && row === screen.cursorRow && gy >= GLYPH_HEIGHT - 2;
    const cursorCol = Math.min(screen.cursorCol, COLS - 1);
    for (let px = rect.x; px < rect.x + rect.w; px++) {
      const col = (px / GLYPH_WIDTH) | 0;
      const cell = row * COLS + col;
      const attr = screen.attrs[cell]!;
      const bits = glyphRow(screen.chars[cell]!, gy);
      const on = (bits >> (px % GLYPH_WIDTH)) & 1 || (cursorLine && col === cursorCol);
      emit(on ? attr & 0x0f : attr >> 4);
    }
  }
}

/** Raw-encoded pixels of `rect` given the per-colour byte patterns of the client's pixel format. */
export function renderRaw(screen: TextScreen, rect: Rect, colours: Buffer[]): Buffer {
  const bpp = colours[0]!.length;
  const out = Buffer.allocUnsafe(rect.w * rect.h * bpp);
  let offset = 0;
  forEachPixel(screen, rect, (index) => {
    colours[index]!.copy(out, offset);
    offset += bpp;
  });
  return out;
}

/** The whole screen as packed RGB triples (for the PNG screenshot). */
export function renderRgb(screen: TextScreen): Buffer {
  const out = Buffer.allocUnsafe(SCREEN_WIDTH * SCREEN_HEIGHT * 3);
  let offset = 0;
  forEachPixel(screen, { x: 0, y: 0, w: SCREEN_WIDTH, h: SCREEN_HEIGHT }, (index) => {
    const [r, g, b] = PALETTE[index]!;
    out[offset++] = r;
    out[offset++] = g;
    out[offset++] = b;
  });
  return out;
}
