import { describe, expect, it } from 'vitest';
import type { VmRow } from '../../lib/model';
import { chooseTiles } from './Multiview';

const vm = (name: string) => ({ namespace: 'tailvm', name, running: true }) as VmRow;

describe('chooseTiles', () => {
  const running = ['a', 'b', 'c', 'd'].map(vm);
  it('shows the first N running VMs by default', () => {
    expect(chooseTiles(running, [], 2).map((v) => v.name)).toEqual(['a', 'b']);
  });
  it('shows the picked VMs in the order picked, skipping ones that stopped', () => {
    expect(chooseTiles(running, ['tailvm/d', 'tailvm/gone', 'tailvm/b'], 9).map((v) => v.name)).toEqual(['d', 'b']);
  });
  it('falls back to the first N when none of the picked VMs runs', () => {
    expect(chooseTiles(running, ['tailvm/gone'], 3).map((v) => v.name)).toEqual(['a', 'b', 'c']);
  });
});
