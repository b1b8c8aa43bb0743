import { describe, expect, it } from 'vitest';
import { backoffDelay, classifyClose, consoleUrl } from './console-link';
import { KEY_COMBOS, KEYSYM, comboEvents, textKeysyms } from './keys';

describe('consoleUrl', () => {
  it('builds ws/wss URLs with encoded names and modes', () => {
    expect(consoleUrl({ protocol: 'http:', host: 'localhost:8006' }, 'vnc', 'tailvm', 'web')).toBe(
      'ws://localhost:8006/api/vnc/tailvm/web',
    );
    expect(
      consoleUrl({ protocol: 'https:', host: 'corral.ts.net' }, 'serial', 'tailvm', 'db', { takeover: true }),
    ).toBe('wss://corral.ts.net/api/tty/tailvm/db?takeover=1');
    expect(consoleUrl({ protocol: 'http:', host: 'h' }, 'vnc', 'a b', 'c', { watch: true })).toBe(
      'ws://h/api/vnc/a%20b/c?watch=1',
    );
  });
});

describe('classifyClose', () => {
  it('offers Take over for a taken-over or held console, stops on refusals, retries drops', () => {
    expect(classifyClose(4001, 'Console taken over by Bob')).toEqual({
      kind: 'taken-over',
      message: 'Console taken over by Bob',
    });
    expect(classifyClose(4029, '').kind).toBe('in-use');
    expect(classifyClose(4003, 'Read-only').kind).toBe('refused');
    expect(classifyClose(4009, 'VM is Stopped').kind).toBe('not-running');
    expect(classifyClose(4004, '').kind).toBe('not-running');
    expect(classifyClose(1006, '')).toEqual({ kind: 'retry', message: 'Lost the connection to Corral' });
    expect(classifyClose(4502, 'Cannot reach the cluster').kind).toBe('retry');
    expect(classifyClose(1000, '').kind).toBe('retry');
  });
});

describe('backoffDelay', () => {
  it('doubles from 0.5 s up to 15 s, with bounded jitter', () => {
    expect(backoffDelay(0, () => 0.5)).toBe(500);
    expect(backoffDelay(3, () => 0.5)).toBe(4000);
    expect(backoffDelay(20, () => 0.5)).toBe(15_000);
    expect(backoffDelay(1, () => 0)).toBe(800);
    expect(backoffDelay(1, () => 1)).toBe(1200);
  });
});

describe('key combinations', () => {
  it('has Ctrl+Alt+Del, Ctrl+Alt+F1…F12, Alt+Tab and Esc', () => {
    const ids = KEY_COMBOS.map((c) => c.id);
    expect(ids).toEqual(expect.arrayContaining(['ctrl-alt-del', 'ctrl-alt-f1', 'ctrl-alt-f12', 'alt-tab', 'esc']));
    const f12 = KEY_COMBOS.find((c) => c.id === 'ctrl-alt-f12')!;
    expect(f12.keys.map((k) => k.keysym)).toEqual([KEYSYM.Control_L, KEYSYM.Alt_L, 0xffc9]);
  });

  it('presses in order and releases in reverse', () => {
    const cad = KEY_COMBOS.find((c) => c.id === 'ctrl-alt-del')!;
    expect(comboEvents(cad).map((e) => `${e.down ? '+' : '-'}${e.keysym.toString(16)}`)).toEqual([
      '+ffe3',
      '+ffe9',
      '+ffff',
      '-ffff',
      '-ffe9',
      '-ffe3',
    ]);
  });
});

describe('textKeysyms', () => {
  it('maps text to keysyms: ASCII/Latin-1 as is, Unicode with the 0x01000000 offset, newline as Return', () => {
    expect(textKeysyms('Ab1\n')).toEqual([0x41, 0x62, 0x31, KEYSYM.Return]);
    expect(textKeysyms('é€')).toEqual([0xe9, 0x010020ac]);
    expect(textKeysyms('a\r\nb\tc\u0007')).toEqual([0x61, KEYSYM.Return, 0x62, KEYSYM.Tab, 0x63]);
  });
});
