/**
 * A VGA-style text screen (80×25 cells of 8×16 pixels) driven by the same byte stream a Linux console would
 * receive: printable ASCII, CR, LF, BS, TAB, BEL and a small ANSI subset (SGR colours, clear screen, cursor home,
 * erase to end of line). Row 0 is a fixed status bar; rows 1.. scroll.
 *
 * Listeners learn exactly which cells changed (and when the scroll region moved) so a VNC session can send only
 * the dirty rectangles — nothing is redrawn when nothing changed.
 */

export const COLS = 80;
export const ROWS = 25;
/** First row of the scrolling region; row 0 is the status bar. */
export const SCROLL_TOP = 1;

/** The 16-colour VGA palette as [r, g, b], in VGA attribute order (1 = blue, 4 = red, 6 = brown). */
export const PALETTE: readonly (readonly [number, number, number])[] = [
  [0x00, 0x00, 0x00],
  [0x00, 0x00, 0xaa],
  [0x00, 0xaa, 0x00],
  [0x00, 0xaa, 0xaa],
  [0xaa, 0x00, 0x00],
  [0xaa, 0x00, 0xaa],
  [0xaa, 0x55, 0x00],
  [0xaa, 0xaa, 0xaa],
  [0x55, 0x55, 0x55],
  [0x55, 0x55, 0xff],
  [0x55, 0xff, 0x55],
  [0x55, 0xff, 0xff],
  [0xff, 0x55, 0x55],
  [0xff, 0x55, 0xff],
  [0xff, 0xff, 0x55],
  [0xff, 0xff, 0xff],
];

/** Attribute byte: low nibble foreground, high nibble background (palette indexes). */
export const DEFAULT_ATTR = 0x07;
const STATUS_ATTR = 0x1f; // bright white on blue

export interface ScreenListener {
  /** Cells [col0, col1] (inclusive) of `row` changed. */
  damage(row: number, col0: number, col1: number): void;
  /** Rows SCROLL_TOP+n..ROWS-1 moved up by n; the caller also receives damage for the rows that were exposed. */
  scroll(n: number): void;
}

/** ANSI colour order (SGR 30–37) to VGA palette order. */
const ANSI_TO_VGA = [0, 4, 2, 6, 1, 5, 3, 7];

export class TextScreen {
  readonly chars = new Uint8Array(COLS * ROWS);
  readonly attrs = new Uint8Array(COLS * ROWS);
  cursorRow = SCROLL_TOP;
  cursorCol = 0;
  cursorVisible = true;
  private attr = DEFAULT_ATTR;
  private bold = false;
  private readonly listeners = new Set<ScreenListener>();
  /** Partial escape sequence carried over between writes (the stream is split arbitrarily). */
  private escape: string | undefined;

  constructor() {
    this.chars.fill(0x20);
    this.attrs.fill(DEFAULT_ATTR);
  }

  listen(listener: ScreenListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Replace the status bar (row 0): `left` flush left, `right` flush right, both clipped to the width. */
  setStatus(left: string, right: string): void {
    const line = (` ${left}`.padEnd(COLS - right.length - 1) + `${right} `).slice(0, COLS);
    for (let c = 0; c < COLS; c++) this.put(0, c, line.charCodeAt(c), STATUS_ATTR);
    this.emitDamage(0, 0, COLS - 1);
  }

  /** Text of one row with trailing blanks removed (tests and the screenshot endpoint's alt text use it). */
  rowText(row: number): string {
    let s = '';
    for (let c = 0; c < COLS; c++) s += String.fromCharCode(this.chars[row * COLS + c]!);
    return s.trimEnd();
  }

  /** Clear the scrolling region and home the cursor (what `clear` and a reboot do). */
  clear(): void {
    for (let r = SCROLL_TOP; r < ROWS; r++) this.clearRow(r, 0);
    this.moveCursor(SCROLL_TOP, 0);
  }

  write(data: string | Uint8Array): void {
    const text = typeof data === 'string' ? data : Buffer.from(data).toString('latin1');
    for (let i = 0; i < text.length; i++) {
      const ch = text.charCodeAt(i);
      if (this.escape !== undefined) {
        this.escape += text[i];
        this.continueEscape();
        continue;
      }
      switch (ch) {
        case 0x1b:
          this.escape = '';
          break;
        case 0x0d:
          this.moveCursor(this.cursorRow, 0);
          break;
        case 0x0a:
          this.lineFeed();
          break;
        case 0x08:
          if (this.cursorCol > 0) this.moveCursor(this.cursorRow, this.cursorCol - 1);
          break;
        case 0x09:
          this.moveCursor(this.cursorRow, Math.min(COLS - 1, (this.cursorCol + 8) & ~7));
          break;
        case 0x07:
        case 0x00:
          break;
        default:
          if (ch >= 0x20) this.printable(ch);
      }
    }
  }

  private printable(ch: number): void {
    if (this.cursorCol >= COLS) {
      this.cursorCol = 0;
      this.lineFeed();
    }
    const attr = this.bold ? this.attr | 0x08 : this.attr;
    this.put(this.cursorRow, this.cursorCol, ch, attr);
    this.emitDamage(this.cursorRow, this.cursorCol, this.cursorCol);
    // Like a VT100, the cursor rests past the last column until the next printable character wraps.
    this.moveCursor(this.cursorRow, this.cursorCol + 1);
  }

  private lineFeed(): void {
    if (this.cursorRow < ROWS - 1) {
      this.moveCursor(this.cursorRow + 1, this.cursorCol);
      return;
    }
    this.scrollUp(1);
  }

  private scrollUp(n: number): void {
    const start = (SCROLL_TOP + n) * COLS;
    this.chars.copyWithin(SCROLL_TOP * COLS, start);
    this.attrs.copyWithin(SCROLL_TOP * COLS, start);
    for (const l of this.listeners) l.scroll(n);
    for (let r = ROWS - n; r < ROWS; r++) this.clearRow(r, 0);
    // The cursor cell moved with the text; repaint where it is now so it is not lost in the copy.
    this.emitDamage(this.cursorRow, Math.min(this.cursorCol, COLS - 1), Math.min(this.cursorCol, COLS - 1));
  }

  private clearRow(row: number, fromCol: number): void {
    if (fromCol >= COLS) return;
    const base = row * COLS;
    this.chars.fill(0x20, base + fromCol, base + COLS);
    this.attrs.fill(this.attr & 0xf0 ? this.attr : DEFAULT_ATTR, base + fromCol, base + COLS);
    this.emitDamage(row, fromCol, COLS - 1);
  }

  private moveCursor(row: number, col: number): void {
    const oldRow = this.cursorRow;
    const oldCol = Math.min(this.cursorCol, COLS - 1);
    this.cursorRow = row;
    this.cursorCol = col;
    const newCol = Math.min(col, COLS - 1);
    if (oldRow !== row || oldCol !== newCol) {
      this.emitDamage(oldRow, oldCol, oldCol);
      this.emitDamage(row, newCol, newCol);
    }
  }

  /** ESC [ params final — only the sequences a login shell and a boot log emit; anything else is swallowed. */
  private continueEscape(): void {
    const seq = this.escape!;
    if (seq.length === 1 && seq !== '[') {
      if (seq === 'c') this.reset();
      this.escape = undefined;
      return;
    }
    if (seq.length < 2) return;
    const final = seq.charCodeAt(seq.length - 1);
    if (final < 0x40 || final > 0x7e) {
      if (seq.length > 32) this.escape = undefined; // runaway sequence: drop it rather than eat the stream
      return;
    }
    this.escape = undefined;
    const params = seq
      .slice(1, -1)
      .split(';')
      .map((p) => (p === '' ? 0 : Number.parseInt(p, 10) || 0));
    switch (seq[seq.length - 1]) {
      case 'm':
        this.selectGraphicRendition(params);
        break;
      case 'J':
        if ((params[0] ?? 0) === 2) this.clear();
        else this.eraseBelow();
        break;
      case 'K':
        this.clearRow(this.cursorRow, Math.min(this.cursorCol, COLS));
        break;
      case 'H':
      case 'f': {
        const row = Math.min(ROWS - 1, Math.max(SCROLL_TOP, SCROLL_TOP + (params[0] || 1) - 1));
        const col = Math.min(COLS - 1, Math.max(0, (params[1] || 1) - 1));
        this.moveCursor(row, col);
        break;
      }
      case 'A':
        this.moveCursor(Math.max(SCROLL_TOP, this.cursorRow - (params[0] || 1)), this.cursorCol);
        break;
      case 'B':
        this.moveCursor(Math.min(ROWS - 1, this.cursorRow + (params[0] || 1)), this.cursorCol);
        break;
      case 'C':
        this.moveCursor(this.cursorRow, Math.min(COLS - 1, this.cursorCol + (params[0] || 1)));
        break;
      case 'D':
        this.moveCursor(this.cursorRow, Math.max(0, this.cursorCol - (params[0] || 1)));
        break;
    }
  }

  private eraseBelow(): void {
    this.clearRow(this.cursorRow, Math.min(this.cursorCol, COLS));
    for (let r = this.cursorRow + 1; r < ROWS; r++) this.clearRow(r, 0);
  }

  private selectGraphicRendition(params: number[]): void {
    for (const p of params) {
      if (p === 0) {
        this.attr = DEFAULT_ATTR;
        this.bold = false;
      } else if (p === 1) this.bold = true;
      else if (p === 22) this.bold = false;
      else if (p === 7) this.attr = ((this.attr & 0x0f) << 4) | (this.attr >> 4);
      else if (p >= 30 && p <= 37) this.attr = (this.attr & 0xf0) | ANSI_TO_VGA[p - 30]!;
      else if (p === 39) this.attr = (this.attr & 0xf0) | (DEFAULT_ATTR & 0x0f);
      else if (p >= 40 && p <= 47) this.attr = (this.attr & 0x0f) | (ANSI_TO_VGA[p - 40]! << 4);
      else if (p === 49) this.attr &= 0x0f;
      else if (p >= 90 && p <= 97) this.attr = (this.attr & 0xf0) | (ANSI_TO_VGA[p - 90]! | 0x08);
    }
  }

  private reset(): void {
    this.attr = DEFAULT_ATTR;
    this.bold = false;
    this.clear();
  }

  private put(row: number, col: number, ch: number, attr: number): void {
    this.chars[row * COLS + col] = ch;
    this.attrs[row * COLS + col] = attr;
  }

  private emitDamage(row: number, col0: number, col1: number): void {
    for (const l of this.listeners) l.damage(row, col0, col1);
  }
}
