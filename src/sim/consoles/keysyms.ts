/**
 * X11 keysyms (what RFB KeyEvents carry) to the bytes a Linux console would see, tracking modifiers so Ctrl+C is
 * 0x03 and Ctrl+Alt+Del can be recognised. Latin-1 keysyms equal their code points.
 */

export const XK = {
  BackSpace: 0xff08,
  Tab: 0xff09,
  Return: 0xff0d,
  Escape: 0xff1b,
  Delete: 0xffff,
  Left: 0xff51,
  Up: 0xff52,
  Right: 0xff53,
  Down: 0xff54,
  KP_Enter: 0xff8d,
  Shift_L: 0xffe1,
  Shift_R: 0xffe2,
  Control_L: 0xffe3,
  Control_R: 0xffe4,
  Alt_L: 0xffe9,
  Alt_R: 0xffea,
} as const;

const SPECIAL: Record<number, string> = {
  [XK.BackSpace]: '\x7f',
  [XK.Tab]: '\t',
  [XK.Return]: '\r',
  [XK.KP_Enter]: '\r',
  [XK.Escape]: '\x1b',
  [XK.Delete]: '\x1b[3~',
  [XK.Up]: '\x1b[A',
  [XK.Down]: '\x1b[B',
  [XK.Right]: '\x1b[C',
  [XK.Left]: '\x1b[D',
};

export type KeyOutcome = { kind: 'bytes'; bytes: string } | { kind: 'ctrl-alt-del' } | { kind: 'none' };

export class KeyboardState {
  private ctrl = new Set<number>();
  private alt = new Set<number>();

  key(keysym: number, down: boolean): KeyOutcome {
    if (keysym === XK.Control_L || keysym === XK.Control_R) return this.modifier(this.ctrl, keysym, down);
    if (keysym === XK.Alt_L || keysym === XK.Alt_R) return this.modifier(this.alt, keysym, down);
    if (!down) return { kind: 'none' };
    const ctrl = this.ctrl.size > 0;
    if (keysym === XK.Delete && ctrl && this.alt.size > 0) return { kind: 'ctrl-alt-del' };
    const special = SPECIAL[keysym];
    if (special !== undefined) return { kind: 'bytes', bytes: special };
    if (keysym >= 0x20 && keysym <= 0x7e) {
      if (ctrl) {
        const upper = keysym & ~0x20;
        if (upper >= 0x40 && upper <= 0x5f) return { kind: 'bytes', bytes: String.fromCharCode(upper & 0x1f) };
      }
      return { kind: 'bytes', bytes: String.fromCharCode(keysym) };
    }
    return { kind: 'none' }; // function keys, Latin-1 beyond ASCII, dead keys: the console font has no glyphs
  }

  private modifier(set: Set<number>, keysym: number, down: boolean): KeyOutcome {
    if (down) set.add(keysym);
    else set.delete(keysym);
    return { kind: 'none' };
  }
}
