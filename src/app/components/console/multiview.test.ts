import { describe, expect, it } from 'vitest';
import type { VmRow } from '../../lib/model';
import { chooseTiles, tileKey } from './Multiview';

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
  it("keeps namesakes on two clusters apart: a pick of lab's VM shows lab's tile, not home's", () => {
    const home = { ...vm('web'), context: 'home' } as VmRow;
    const lab = { ...vm('web'), context: 'lab' } as VmRow;
    expect(tileKey(home, 'home')).toBe('tailvm/web');
    expect(tileKey(lab, 'home')).toBe('lab//tailvm/web');
    expect(chooseTiles([home, lab], [], 9, 'home')).toEqual([home, lab]);
    expect(chooseTiles([home, lab], ['lab//tailvm/web'], 9, 'home')).toEqual([lab]);
    expect(chooseTiles([home, lab], ['tailvm/web'], 9, 'home')).toEqual([home]);
  });
});
