import { describe, expect, it } from 'vitest';
import {
  bootList,
  controlState,
  move,
  orphanPending,
  pendingFor,
  pendingText,
  runStrategyProblem,
  scaleMode,
} from './vm-hardware';

describe('vm-hardware', () => {
  it('turns a Control into a button state with its reason', () => {
    expect(controlState({ allowed: true, reason: '' })).toEqual({ enabled: true, reason: '' });
    expect(controlState({ allowed: false, reason: 'stop the VM first' })).toEqual({
      enabled: false,
      reason: 'stop the VM first',
    });
    expect(controlState({ allowed: false, reason: '' }).enabled).toBe(false);
    expect(controlState(undefined).enabled).toBe(false);
  });

  it('finds pending changes per row and the ones without a row', () => {
    const pending = [
      { field: 'cpu', current: '1', pending: '2' },
      { field: 'nic net1', current: 'absent', pending: 'added' },
      { field: 'nic net2', current: 'present', pending: 'removed' },
    ];
    expect(pendingFor(pending, 'cpu')?.pending).toBe('2');
    expect(pendingFor(pending, 'memory')).toBeUndefined();
    expect(orphanPending(pending, 'nic', ['default', 'net1']).map((p) => p.field)).toEqual(['nic net2']);
    expect(pendingText(pending[0]!)).toBe('1 → 2 at the next restart');
    expect(pendingText(pending[1]!)).toMatch(/next restart/);
  });

  it('moves items in the boot order, clamped at the ends', () => {
    expect(move(['a', 'b', 'c'], 2, -1)).toEqual(['a', 'c', 'b']);
    expect(move(['a', 'b', 'c'], 0, -1)).toEqual(['a', 'b', 'c']);
    expect(move(['a', 'b', 'c'], 0, 5)).toEqual(['b', 'c', 'a']);
  });

  it('lists the ordered devices first, then the rest', () => {
    expect(bootList(['net1', 'rootdisk', 'gone'], ['rootdisk', 'cloudinit', 'default', 'net1'])).toEqual([
      { name: 'net1', enabled: true },
      { name: 'rootdisk', enabled: true },
      { name: 'cloudinit', enabled: false },
      { name: 'default', enabled: false },
    ]);
  });

  it('says whether a scale is live or needs a restart', () => {
    expect(scaleMode(false, undefined).live).toBe(false);
    expect(scaleMode(true, { allowed: true, reason: '' }).live).toBe(true);
    expect(scaleMode(true, { allowed: false, reason: 'not live-migratable' }).text).toContain('not live-migratable');
  });

  it('refuses run strategies that are power actions', () => {
    expect(runStrategyProblem('Always', 'Halted', false)).toMatch(/start/);
    expect(runStrategyProblem('Halted', 'Always', true)).toMatch(/stop/);
    expect(runStrategyProblem('Manual', 'Always', true)).toBeNull();
  });
});
