import { describe, expect, it } from 'vitest';
import { Params, paramsFromJson, splitList } from './params';
import { ProxmoxError } from './wire';

function errorsOf(fn: () => unknown): Record<string, string> | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ProxmoxError) return e.errors;
    throw e;
  }
  throw new Error('expected a ProxmoxError');
}

describe('Params', () => {
  const p = Params.fromSearch(new URLSearchParams('vmid=100&cores=x&onboot=1&full=0&command=a&command=b&e='));

  it('reads integers and rejects non-integers naming the parameter', () => {
    expect(p.int('vmid')).toBe(100);
    expect(errorsOf(() => p.int('cores'))).toEqual({ cores: "type check ('integer') failed - got 'x'" });
    expect(errorsOf(() => p.int('vmid', { min: 101 }))).toEqual({ vmid: 'value must have a minimum value of 101' });
    expect(p.int('absent')).toBeUndefined();
    expect(p.int('e')).toBeUndefined();
  });

  it('reads PVE booleans', () => {
    expect(p.bool('onboot')).toBe(true);
    expect(p.bool('full')).toBe(false);
    expect(errorsOf(() => p.bool('cores'))).toHaveProperty('cores');
  });

  it('keeps repeated keys and requires mandatory ones', () => {
    expect(p.all('command')).toEqual(['a', 'b']);
    expect(p.raw('command')).toBe('b');
    expect(errorsOf(() => p.requireString('node'))).toEqual({ node: 'property is missing and it is not optional' });
    expect(errorsOf(() => p.requireString('e'))).toHaveProperty('e');
  });

  it('merges body over query', () => {
    const merged = Params.fromSearch(new URLSearchParams('a=1&b=2')).merge(new Params([['b', '3']]));
    expect(merged.raw('a')).toBe('1');
    expect(merged.raw('b')).toBe('3');
  });

  it('splits PVE lists on commas, semicolons and spaces', () => {
    expect(splitList('net1, scsi1;ide2  virtio0')).toEqual(['net1', 'scsi1', 'ide2', 'virtio0']);
    expect(splitList(undefined)).toEqual([]);
  });

  it('flattens JSON bodies', () => {
    const j = paramsFromJson({ vmid: 100, onboot: true, name: 'x', tags: ['a', 'b'], skip: null });
    expect(j.raw('vmid')).toBe('100');
    expect(j.raw('onboot')).toBe('1');
    expect(j.all('tags')).toEqual(['a', 'b']);
    expect(j.has('skip')).toBe(false);
    expect(errorsOf(() => paramsFromJson([1]))).toHaveProperty('body');
    expect(errorsOf(() => paramsFromJson({ a: { b: 1 } }))).toHaveProperty('a');
  });
});
