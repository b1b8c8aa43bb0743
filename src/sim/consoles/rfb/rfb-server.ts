/**
 * The server half of RFB 3.8 (RFC 6143) over an arbitrary byte stream, enough for noVNC 1.7 and QEMU-style
 * clients: version handshake (3.3/3.7/3.8), security type None, ServerInit, SetPixelFormat (8/16/32 bpp, true
 * colour or colour map), SetEncodings, FramebufferUpdateRequest, KeyEvent, PointerEvent and ClientCutText.
 *
 * Updates go out only against an outstanding request: a full request gets the requested area, an incremental one
 * gets the damaged text rows (a scroll becomes one CopyRect when the client supports it) or is held until the
 * screen changes — an idle console costs nothing.
 */
import { GLYPH_HEIGHT, GLYPH_WIDTH } from '../font8x8.js';
import { COLS, ROWS, SCROLL_TOP, type ScreenListener, type TextScreen } from '../text-screen.js';
import {
  colourMapMessage,
  decodePixelFormat,
  encodePixelFormat,
  paletteBytes,
  SERVER_PIXEL_FORMAT,
  type PixelFormat,
} from './pixel-format.js';
import { renderRaw, SCREEN_HEIGHT, SCREEN_WIDTH, type Rect } from './render.js';

const ENCODING_RAW = 0;
const ENCODING_COPYRECT = 1;
/** Coalesce a burst of output (a command printing many lines) into one update. */
const UPDATE_COALESCE_MS = 15;
/** A ClientCutText larger than this is a broken or hostile client. */
const MAX_CUT_TEXT = 1 << 20;

export interface RfbServerOptions {
  screen: TextScreen;
  /** Desktop name in ServerInit (QEMU sends the domain name). */
  name: string;
  send(data: Buffer): void;
  /** Ends the transport; `reason` explains a protocol error. */
  close(reason: string): void;
  onKey(keysym: number, down: boolean): void;
}

type Phase = 'version' | 'security' | 'clientInit' | 'normal' | 'closed';

interface UpdateRequest {
  incremental: boolean;
  rect: Rect;
}

export class RfbServer {
  private phase: Phase = 'version';
  private minor = 8;
  private input: Buffer = Buffer.alloc(0);
  private pixelFormat: PixelFormat = SERVER_PIXEL_FORMAT;
  private colours: Buffer[] = paletteBytes(SERVER_PIXEL_FORMAT);
  private copyRect = false;
  private pending: UpdateRequest | undefined;
  private flushTimer: NodeJS.Timeout | undefined;
  /** Dirty column span per text row, in the client's current row coordinates. */
  private readonly dirty: ([number, number] | undefined)[] = new Array<[number, number] | undefined>(ROWS);
  /** Lines the scroll region moved up since the client last saw it (sent as one CopyRect). */
  private scrolled = 0;
  private readonly unlisten: () => void;
  /** Raw pixels of the whole screen as last sent, reused while nothing changes (viewers polling full frames). */
  private fullFrame: Buffer | undefined;
  /** Counters the tests and the docs quote: how much went over the wire. */
  readonly stats = { updates: 0, rects: 0, bytes: 0 };

  constructor(private readonly options: RfbServerOptions) {
    const listener: ScreenListener = {
      damage: (row, c0, c1) => this.markDirty(row, c0, c1),
      scroll: (n) => this.markScrolled(n),
    };
    this.unlisten = options.screen.listen(listener);
    this.write(Buffer.from('RFB 003.008\n', 'latin1'));
  }

  receive(chunk: Buffer): void {
    if (this.phase === 'closed') return;
    this.input = this.input.length ? Buffer.concat([this.input, chunk]) : chunk;
    try {
      // Each step consumes one complete message; a step that closes the session makes the next one return false.
      while (this.step()) continue;
    } catch (err) {
      this.fail(`RFB protocol error: ${(err as Error).message}`);
    }
  }

  dispose(): void {
    this.phase = 'closed';
    this.unlisten();
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  /** Parse one message if complete; false when more bytes are needed. */
  private step(): boolean {
    switch (this.phase) {
      case 'version':
        return this.readVersion();
      case 'security':
        return this.readSecurityChoice();
      case 'clientInit':
        return this.readClientInit();
      case 'normal':
        return this.readClientMessage();
      default:
        return false;
    }
  }

  private readVersion(): boolean {
    if (this.input.length < 12) return false;
    const text = this.consume(12).toString('latin1');
    const match = /^RFB (\d{3})\.(\d{3})\n$/.exec(text);
    if (!match || Number(match[1]) !== 3) throw new Error(`unsupported protocol version ${JSON.stringify(text)}`);
    const minor = Number(match[2]);
    // 3.3 and 3.7 differ only in the security handshake; anything newer speaks 3.8 (RFC 6143 §7.1.1).
    this.minor = minor >= 8 ? 8 : minor >= 7 ? 7 : 3;
    if (this.minor === 3) {
      // 3.3: the server picks the type (None) and there is no SecurityResult for None.
      this.write(u32(1));
      this.phase = 'clientInit';
    } else {
      this.write(Buffer.from([1, 1]));
      this.phase = 'security';
    }
    return true;
  }

  private readSecurityChoice(): boolean {
    if (this.input.length < 1) return false;
    const type = this.consume(1).readUInt8(0);
    if (type !== 1) {
      if (this.minor === 8) {
        const reason = Buffer.from('Authentication failure: only security type None is offered', 'latin1');
        this.write(Buffer.concat([u32(1), u32(reason.length), reason]));
      }
      throw new Error(`client chose security type ${type}, only None (1) is offered`);
    }
    if (this.minor === 8) this.write(u32(0));
    this.phase = 'clientInit';
    return true;
  }

  private readClientInit(): boolean {
    if (this.input.length < 1) return false;
    this.consume(1); // shared flag: there is only ever one session per VMI anyway
    const name = Buffer.from(this.options.name, 'utf8');
    const header = Buffer.alloc(4);
    header.writeUInt16BE(SCREEN_WIDTH, 0);
    header.writeUInt16BE(SCREEN_HEIGHT, 2);
    this.write(Buffer.concat([header, encodePixelFormat(SERVER_PIXEL_FORMAT), u32(name.length), name]));
    this.phase = 'normal';
    return true;
  }

  private readClientMessage(): boolean {
    const b = this.input;
    if (b.length < 1) return false;
    const type = b.readUInt8(0);
    switch (type) {
      case 0: {
        if (b.length < 20) return false;
        const pf = decodePixelFormat(b, 4);
        this.consume(20);
        this.pixelFormat = pf;
        this.colours = paletteBytes(pf);
        if (!pf.trueColour) this.write(colourMapMessage());
        // Pixels the client holds are in the old format; anything not yet repainted must be resent whole.
        this.markAllDirty();
        return true;
      }
      case 2: {
        if (b.length < 4) return false;
        const count = b.readUInt16BE(2);
        if (b.length < 4 + count * 4) return false;
        const encodings: number[] = [];
        for (let i = 0; i < count; i++) encodings.push(b.readInt32BE(4 + i * 4));
        this.consume(4 + count * 4);
        this.copyRect = encodings.includes(ENCODING_COPYRECT);
        return true;
      }
      case 3: {
        if (b.length < 10) return false;
        const incremental = b.readUInt8(1) !== 0;
        const rect = clip({ x: b.readUInt16BE(2), y: b.readUInt16BE(4), w: b.readUInt16BE(6), h: b.readUInt16BE(8) });
        this.consume(10);
        this.pending = { incremental, rect };
        if (!incremental) this.sendFull(rect);
        else this.scheduleFlush(0);
        return true;
      }
      case 4: {
        if (b.length < 8) return false;
        const down = b.readUInt8(1) !== 0;
        const keysym = b.readUInt32BE(4);
        this.consume(8);
        this.options.onKey(keysym, down);
        return true;
      }
      case 5:
        // PointerEvent: a text console has no mouse; parsed only to stay in sync.
        if (b.length < 6) return false;
        this.consume(6);
        return true;
      case 6: {
        if (b.length < 8) return false;
        const length = b.readInt32BE(4);
        // A negative length is the extended-clipboard format, which is never negotiated here.
        if (length < 0 || length > MAX_CUT_TEXT) throw new Error(`ClientCutText length ${length} refused`);
        if (b.length < 8 + length) return false;
        this.consume(8 + length); // the guest has no clipboard agent: ignored like QEMU without vdagent
        return true;
      }
      default:
        throw new Error(`unknown client message type ${type}`);
    }
  }

  private sendFull(rect: Rect): void {
    this.pending = undefined;
    const coversScreen = rect.x === 0 && rect.y === 0 && rect.w === SCREEN_WIDTH && rect.h === SCREEN_HEIGHT;
    if (coversScreen) {
      this.dirty.fill(undefined);
      this.scrolled = 0;
    }
    if (rect.w === 0 || rect.h === 0) {
      this.writeUpdate([]);
      return;
    }
    if (coversScreen) {
      this.fullFrame ??= renderRaw(this.options.screen, rect, this.colours);
      this.writeUpdate([rawRect(rect, this.fullFrame)]);
      return;
    }
    this.writeUpdate([rawRect(rect, renderRaw(this.options.screen, rect, this.colours))]);
  }

  private scheduleFlush(delay: number): void {
    if (this.flushTimer || !this.pending) return;
    if (!this.hasDamage()) return; // hold the request until the screen changes
    this.flushTimer = setTimeout(() => {
      this.flushTimer = undefined;
      this.flushIncremental();
    }, delay);
    this.flushTimer.unref?.();
  }

  private flushIncremental(): void {
    const request = this.pending;
    if (!request || this.phase !== 'normal' || !this.hasDamage()) return;
    this.pending = undefined;
    const rects: Buffer[] = [];
    if (this.scrolled > 0) {
      const n = this.scrolled;
      const height = (ROWS - SCROLL_TOP - n) * GLYPH_HEIGHT;
      const header = rectHeader({ x: 0, y: SCROLL_TOP * GLYPH_HEIGHT, w: SCREEN_WIDTH, h: height }, ENCODING_COPYRECT);
      const source = Buffer.alloc(4);
      source.writeUInt16BE(0, 0);
      source.writeUInt16BE((SCROLL_TOP + n) * GLYPH_HEIGHT, 2);
      rects.push(Buffer.concat([header, source]));
      this.scrolled = 0;
    }
    for (let row = 0; row < ROWS; row++) {
      const span = this.dirty[row];
      if (!span) continue;
      this.dirty[row] = undefined;
      const full: Rect = {
        x: span[0] * GLYPH_WIDTH,
        y: row * GLYPH_HEIGHT,
        w: (span[1] - span[0] + 1) * GLYPH_WIDTH,
        h: GLYPH_HEIGHT,
      };
      const rect = intersect(full, request.rect);
      if (!rect) continue;
      rects.push(rawRect(rect, renderRaw(this.options.screen, rect, this.colours)));
    }
    this.writeUpdate(rects);
  }

  private writeUpdate(rects: Buffer[]): void {
    const header = Buffer.alloc(4);
    header.writeUInt8(0, 0);
    header.writeUInt16BE(rects.length, 2);
    this.stats.updates++;
    this.stats.rects += rects.length;
    this.write(Buffer.concat([header, ...rects]));
  }

  private markDirty(row: number, c0: number, c1: number): void {
    this.fullFrame = undefined;
    const span = this.dirty[row];
    this.dirty[row] = span ? [Math.min(span[0], c0), Math.max(span[1], c1)] : [c0, c1];
    this.scheduleFlush(UPDATE_COALESCE_MS);
  }

  private markScrolled(n: number): void {
    this.fullFrame = undefined;
    const height = ROWS - SCROLL_TOP;
    if (!this.copyRect || this.scrolled + n >= height) {
      this.scrolled = 0;
      for (let r = SCROLL_TOP; r < ROWS; r++) this.dirty[r] = [0, COLS - 1];
    } else {
      // Rows already stale at the client move with the text; the copy brings the rest along for free.
      this.scrolled += n;
      for (let r = SCROLL_TOP; r < ROWS; r++) this.dirty[r] = r + n < ROWS ? this.dirty[r + n] : undefined;
    }
    this.scheduleFlush(UPDATE_COALESCE_MS);
  }

  private markAllDirty(): void {
    this.fullFrame = undefined;
    this.scrolled = 0;
    for (let r = 0; r < ROWS; r++) this.dirty[r] = [0, COLS - 1];
  }

  private hasDamage(): boolean {
    return this.scrolled > 0 || this.dirty.some((s) => s !== undefined);
  }

  private consume(n: number): Buffer {
    const head = this.input.subarray(0, n);
    this.input = this.input.subarray(n);
    return head;
  }

  private write(data: Buffer): void {
    this.stats.bytes += data.length;
    this.options.send(data);
  }

  private fail(reason: string): void {
    this.dispose();
    this.options.close(reason);
  }

  /** The format the client asked for last (exposed for tests). */
  get currentPixelFormat(): PixelFormat {
    return this.pixelFormat;
  }
}

function u32(value: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value, 0);
  return b;
}

function rectHeader(rect: Rect, encoding: number): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt16BE(rect.x, 0);
  b.writeUInt16BE(rect.y, 2);
  b.writeUInt16BE(rect.w, 4);
  b.writeUInt16BE(rect.h, 6);
  b.writeInt32BE(encoding, 8);
  return b;
}

function rawRect(rect: Rect, pixels: Buffer): Buffer {
  return Buffer.concat([rectHeader(rect, ENCODING_RAW), pixels]);
}

function clip(rect: Rect): Rect {
  const x = Math.min(rect.x, SCREEN_WIDTH);
  const y = Math.min(rect.y, SCREEN_HEIGHT);
  return { x, y, w: Math.min(rect.w, SCREEN_WIDTH - x), h: Math.min(rect.h, SCREEN_HEIGHT - y) };
}

function intersect(a: Rect, b: Rect): Rect | undefined {
  const x0 = Math.max(a.x, b.x);
  const y0 = Math.max(a.y, b.y);
  const x1 = Math.min(a.x + a.w, b.x + b.w);
  const y1 = Math.min(a.y + a.h, b.y + b.h);
  return x1 > x0 && y1 > y0 ? { x: x0, y: y0, w: x1 - x0, h: y1 - y0 } : undefined;
}
