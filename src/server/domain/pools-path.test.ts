import { describe, expect, it } from 'vitest';
import { comparePaths, isWithin, parentOf, parseRef, pathProblem, readRef } from './pools-path';

describe('pool paths', () => {
  it.each([
    ['apps', undefined],
    ['apps/web tier/db_1.v-2', undefined],
    ['a/b/c/d/e/f/g/h', undefined],
    ['a/b/c/d/e/f/g/h/i', 'must be at most 8 levels deep (got 9)'],
    ['a/./b', "must not contain a '.' segment"],
    ['..', "must not contain a '..' segment"],
    ['a/b\\c', "segment 'b\\c' may only hold letters, digits, space, '_', '.' and '-'"],
    ['a/ü', "segment 'ü' may only hold letters, digits, space, '_', '.' and '-'"],
    ['x'.repeat(65), `segment '${'x'.repeat(16)}…' must be at most 64 characters`],
  ])('%j → %s', (path, problem) => {
    expect(pathProblem(path)).toBe(problem);
  });

  it('orders depth first and knows what lies within a pool', () => {
    expect(['a b', 'a/z', 'a', 'a/b/c', 'a/b'].sort(comparePaths)).toEqual(['a', 'a/b', 'a/b/c', 'a/z', 'a b']);
    expect(isWithin('a/b', 'a')).toBe(true);
    expect(isWithin('ab', 'a')).toBe(false);
    expect(parentOf('a/b/c')).toBe('a/b');
    expect(parentOf('a')).toBe('');
  });
});

describe('member refs', () => {
  it('parses backend/context/namespace/name, contexts with odd characters included', () => {
    expect(parseRef('kubevirt/lab "east"/tailvm/web')).toEqual({
      backend: 'kubevirt',
      context: 'lab "east"',
      namespace: 'tailvm',
      name: 'web',
    });
  });
  it('refuses malformed refs at write time and reads them as unknown instead of throwing', () => {
    expect(() => parseRef('kubevirt/ctx/tailvm')).toThrow('ref: must be backend/context/namespace/name');
    expect(() => parseRef('proxmox/ctx/tailvm/web')).toThrow("ref: backend 'proxmox' is not served here");
    expect(() => parseRef('kubevirt/ctx/Tailvm/web', 'x')).toThrow("x: namespace 'Tailvm' is not a DNS-1123 label");
    expect(readRef('nonsense')).toBeUndefined();
  });
});
