/**
 * Read-only VNC: a watcher must see the screen but must not type, click, paste, resize or reboot the guest.
 * RFB is a byte stream with message boundaries unrelated to WebSocket frames, so this follows the client→server
 * side of the protocol (RFC 6143 §7.1–7.5 plus the extensions noVNC 1.7 can send) and forwards only what a
 * viewer needs: the handshake, SetPixelFormat, SetEncodings, FramebufferUpdateRequest, continuous updates,
 * fences and QEMU audio control. KeyEvent, PointerEvent, ClientCutText, xvp (reboot/shutdown), SetDesktopSize
 * and QEMU extended key events are dropped. A message it does not know ends the session, because guessing a
 * length could let input through.
 *
 * SetEncodings is rewritten without ExtendedMouseButtons (-316): once a server accepts it, PointerEvent grows a
 * byte only when its marker bit is set, which this one-way filter could not tell from a plain button-8 press.
 */

type State =
  | { at: 'version' }
  | { at: 'security' }
  | { at: 'vncAuthResponse' }
  | { at: 'clientInit' }
  | { at: 'messages' }
  | { at: 'skipping'; remaining: number };

export interface RfbInputFilter {
  /** Bytes to forward for this chunk (possibly empty), or an Error when the stream cannot be followed. */
  push(chunk: Buffer): Buffer | Error;
}

const VERSION_LENGTH = 12;
/** Pseudo-encodings a read-only viewer may not announce (they change client message formats). */
const STRIPPED_ENCODINGS = new Set([-316]);

function stripEncodings(message: Buffer): Buffer {
  const count = message.readUInt16BE(2);
  const kept: number[] = [];
  for (let i = 0; i < count; i++) {
    const enc = message.readInt32BE(4 + 4 * i);
    if (!STRIPPED_ENCODINGS.has(enc)) kept.push(enc);
  }
  if (kept.length === count) return message;
  const out = Buffer.alloc(4 + 4 * kept.length);
  out[0] = 2;
  out.writeUInt16BE(kept.length, 2);
  kept.forEach((enc, i) => out.writeInt32BE(enc, 4 + 4 * i));
  return out;
}
const SECURITY_NONE = 1;
const SECURITY_VNC_AUTH = 2;

/** Message length given the bytes seen so far: a number, or null when more header bytes are needed. */
type Measured = { length: number; allowed: boolean } | { needMore: true } | { error: string };

function measure(buf: Buffer): Measured {
  const type = buf[0];
  const need = (n: number): boolean => buf.length < n;
  switch (type) {
    case 0: // SetPixelFormat
      return { length: 20, allowed: true };
    case 2: // SetEncodings: U8 type, pad, U16 count, S32 × count
      if (need(4)) return { needMore: true };
      return { length: 4 + 4 * buf.readUInt16BE(2), allowed: true };
    case 3: // FramebufferUpdateRequest
      return { length: 10, allowed: true };
    case 4: // KeyEvent
      return { length: 8, allowed: false };
    case 5: // PointerEvent
      return { length: 6, allowed: false };
    case 6: {
      // ClientCutText: U8, 3 pad, S32 length (negative = extended clipboard, |length| bytes follow)
      if (need(8)) return { needMore: true };
      return { length: 8 + Math.abs(buf.readInt32BE(4)), allowed: false };
    }
    case 150: // EnableContinuousUpdates
      return { length: 10, allowed: true };
    case 248: // ClientFence: U8, 3 pad, U32 flags, U8 length, payload
      if (need(9)) return { needMore: true };
      return { length: 9 + (buf[8] ?? 0), allowed: true };
    case 250: // xvp: U8, pad, U8 version, U8 op (shutdown/reboot/reset)
      return { length: 4, allowed: false };
    case 251: // SetDesktopSize: U8, pad, U16 w, U16 h, U8 screens, pad, 16 × screens
      if (need(7)) return { needMore: true };
      return { length: 8 + 16 * (buf[6] ?? 0), allowed: false };
    case 255: {
      // QEMU client messages: sub-type 0 extended key event, 1 audio
      if (need(2)) return { needMore: true };
      if (buf[1] === 0) return { length: 12, allowed: false };
      if (buf[1] === 1) {
        if (need(4)) return { needMore: true };
        const op = buf.readUInt16BE(2);
        if (op === 0 || op === 1) return { length: 4, allowed: true };
        if (op === 2) return { length: 10, allowed: true };
        return { error: `Unknown QEMU audio operation ${op} from a read-only viewer` };
      }
      return { error: `Unknown QEMU message sub-type ${buf[1]} from a read-only viewer` };
    }
    default:
      return { error: `Unknown RFB client message type ${type} from a read-only viewer` };
  }
}

export function createRfbInputFilter(): RfbInputFilter {
  let state: State = { at: 'version' };
  let pending: Buffer = Buffer.alloc(0);

  return {
    push(chunk: Buffer): Buffer | Error {
      let buf = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      pending = Buffer.alloc(0);
      const out: Buffer[] = [];
      while (buf.length > 0) {
        if (state.at === 'skipping') {
          const n = Math.min(state.remaining, buf.length);
          buf = buf.subarray(n);
          state = state.remaining === n ? { at: 'messages' } : { at: 'skipping', remaining: state.remaining - n };
          continue;
        }
        if (state.at === 'version') {
          if (buf.length < VERSION_LENGTH) break;
          const version = buf.subarray(0, VERSION_LENGTH).toString('latin1');
          const match = /^RFB (\d{3})\.(\d{3})\n$/.exec(version);
          if (!match) return new Error('The viewer did not start with an RFB protocol version');
          out.push(buf.subarray(0, VERSION_LENGTH));
          buf = buf.subarray(VERSION_LENGTH);
          // RFB 3.3: the server picks the security type and the client sends no choice (None assumed: KubeVirt's
          // QEMU uses no VNC authentication).
          state = Number(match[2]) >= 7 ? { at: 'security' } : { at: 'clientInit' };
          continue;
        }
        if (state.at === 'security') {
          const type = buf[0];
          if (type !== SECURITY_NONE && type !== SECURITY_VNC_AUTH)
            return new Error(`Unsupported VNC security type ${type} for a read-only viewer`);
          out.push(buf.subarray(0, 1));
          buf = buf.subarray(1);
          state = type === SECURITY_VNC_AUTH ? { at: 'vncAuthResponse' } : { at: 'clientInit' };
          continue;
        }
        if (state.at === 'vncAuthResponse') {
          if (buf.length < 16) break;
          out.push(buf.subarray(0, 16));
          buf = buf.subarray(16);
          state = { at: 'clientInit' };
          continue;
        }
        if (state.at === 'clientInit') {
          out.push(buf.subarray(0, 1));
          buf = buf.subarray(1);
          state = { at: 'messages' };
          continue;
        }
        const m = measure(buf);
        if ('error' in m) return new Error(m.error);
        if ('needMore' in m) break;
        if (m.allowed) {
          if (buf.length < m.length) break;
          out.push(buf[0] === 2 ? stripEncodings(buf.subarray(0, m.length)) : buf.subarray(0, m.length));
          buf = buf.subarray(m.length);
        } else if (buf.length >= m.length) {
          buf = buf.subarray(m.length);
        } else {
          // Dropped input may be long (a pasted clipboard): skip it as it streams instead of buffering it.
          state = { at: 'skipping', remaining: m.length - buf.length };
          buf = buf.subarray(buf.length);
        }
      }
      if (buf.length > 0) pending = Buffer.from(buf);
      return out.length === 1 ? out[0]! : Buffer.concat(out);
    },
  };
}
