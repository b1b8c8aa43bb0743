// Key combinations for the Console tab's menu and "type clipboard": X11 keysyms as RFB KeyEvents carry them.

export const KEYSYM = {
  BackSpace: 0xff08,
  Tab: 0xff09,
  Return: 0xff0d,
  Escape: 0xff1b,
  Delete: 0xffff,
  Shift_L: 0xffe1,
  Control_L: 0xffe3,
  Alt_L: 0xffe9,
  Super_L: 0xffeb,
  F1: 0xffbe,
} as const;

/** A key in a combination: keysym + the DOM `code` noVNC uses for QEMU's scancode extension. */
export interface ComboKey {
  keysym: number;
  code: string;
}

export interface KeyCombo {
  id: string;
  label: string;
  keys: ComboKey[];
}

const ctrl: ComboKey = { keysym: KEYSYM.Control_L, code: 'ControlLeft' };
const alt: ComboKey = { keysym: KEYSYM.Alt_L, code: 'AltLeft' };

function fKey(n: number): ComboKey {
  return { keysym: KEYSYM.F1 + n - 1, code: `F${n}` };
}

export const KEY_COMBOS: KeyCombo[] = [
  { id: 'ctrl-alt-del', label: 'Ctrl+Alt+Del', keys: [ctrl, alt, { keysym: KEYSYM.Delete, code: 'Delete' }] },
  ...Array.from({ length: 12 }, (_, i) => ({
    id: `ctrl-alt-f${i + 1}`,
    label: `Ctrl+Alt+F${i + 1}`,
    keys: [ctrl, alt, fKey(i + 1)],
  })),
  { id: 'alt-tab', label: 'Alt+Tab', keys: [alt, { keysym: KEYSYM.Tab, code: 'Tab' }] },
  { id: 'alt-f4', label: 'Alt+F4', keys: [alt, fKey(4)] },
  { id: 'esc', label: 'Esc', keys: [{ keysym: KEYSYM.Escape, code: 'Escape' }] },
  { id: 'super', label: 'Super (Windows key)', keys: [{ keysym: KEYSYM.Super_L, code: 'MetaLeft' }] },
  { id: 'ctrl-c', label: 'Ctrl+C', keys: [ctrl, { keysym: 0x63, code: 'KeyC' }] },
];

/** The press/release sequence of a combination: press in order, release in reverse (like fingers do). */
export function comboEvents(combo: KeyCombo): { keysym: number; code: string; down: boolean }[] {
  return [
    ...combo.keys.map((k) => ({ ...k, down: true })),
    ...[...combo.keys].reverse().map((k) => ({ ...k, down: false })),
  ];
}

/**
 * Keysyms that type `text`: Latin-1 characters are their own keysym, other Unicode characters use the
 * 0x01000000 + code point convention, newlines become Return and tabs Tab. Carriage returns are skipped so
 * Windows line ends do not press Return twice; other control characters are dropped.
 */
export function textKeysyms(text: string): number[] {
  const out: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    if (ch === '\n') out.push(KEYSYM.Return);
    else if (ch === '\t') out.push(KEYSYM.Tab);
    else if (cp < 0x20 || cp === 0x7f) continue;
    else if (cp <= 0xff) out.push(cp);
    else out.push(0x01000000 + cp);
  }
  return out;
}
