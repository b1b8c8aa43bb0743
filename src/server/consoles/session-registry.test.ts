import { describe, expect, it, vi } from 'vitest';
import type { ConsoleSession } from './session-registry.js';
import { SessionRegistry } from './session-registry.js';

function session(id: string, login: string, over: Partial<ConsoleSession> = {}): ConsoleSession {
  return {
    id,
    kind: 'vnc',
    namespace: 'tailvm',
    name: 'web',
    login,
    displayName: login,
    readOnly: false,
    since: '2026-01-01T00:00:00.000Z',
    end: vi.fn(),
    ...over,
  };
}

describe('SessionRegistry', () => {
  it('reports the holder of a console, without its end() handle', () => {
    const reg = new SessionRegistry();
    reg.claim(session('1', 'alice'));
    const holder = reg.holder('vnc', 'tailvm', 'web');
    expect(holder).toMatchObject({ id: '1', login: 'alice', kind: 'vnc' });
    expect(holder).not.toHaveProperty('end');
    expect(reg.holder('serial', 'tailvm', 'web')).toBeNull();
    expect(reg.holder('vnc', 'tailvm', 'db')).toBeNull();
  });

  it('a claim returns the replaced session and remembers who took it over', () => {
    const reg = new SessionRegistry();
    const a = session('1', 'alice');
    reg.claim(a);
    const previous = reg.claim(session('2', 'bob'));
    expect(previous).toBe(a);
    expect(reg.holder('vnc', 'tailvm', 'web')?.login).toBe('bob');
    expect(reg.takenOverBy('1')?.login).toBe('bob');
    expect(reg.takenOverBy('2')).toBeNull();
  });

  it('releasing a taken-over session leaves the new holder in place', () => {
    const reg = new SessionRegistry();
    const a = session('1', 'alice');
    reg.claim(a);
    reg.claim(session('2', 'bob'));
    reg.release(a);
    expect(reg.holder('vnc', 'tailvm', 'web')?.login).toBe('bob');
    expect(reg.takenOverBy('1')).toBeNull();
  });

  it('releasing the holder frees the console', () => {
    const reg = new SessionRegistry();
    const a = session('1', 'alice');
    reg.claim(a);
    reg.release(a);
    expect(reg.holder('vnc', 'tailvm', 'web')).toBeNull();
  });

  it('lists holders of one VM across kinds', () => {
    const reg = new SessionRegistry();
    reg.claim(session('1', 'alice'));
    reg.claim(session('2', 'bob', { kind: 'serial' }));
    reg.claim(session('3', 'carol', { name: 'db' }));
    expect(
      reg
        .list({ namespace: 'tailvm', name: 'web' })
        .map((h) => h.login)
        .sort(),
    ).toEqual(['alice', 'bob']);
    expect(reg.list()).toHaveLength(3);
  });
});
