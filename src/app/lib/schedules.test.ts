import { describe, expect, it } from 'vitest';
import { cronText, emptyForm, formOf, formProblem, targetOf, whatText } from './schedules';

describe('schedule form', () => {
  const ok = { ...emptyForm('snapshot'), name: 'nightly', tag: 'prod' };

  it('accepts a complete form and builds the target', () => {
    expect(formProblem(ok)).toBeNull();
    expect(targetOf(ok)).toEqual({ kind: 'tag', tag: 'prod' });
    const vm = { ...emptyForm('power', { namespace: 'tailvm', name: 'web' }), name: 'lab-off' };
    expect(formProblem(vm)).toBeNull();
    expect(targetOf(vm)).toEqual({ kind: 'vm', namespace: 'tailvm', name: 'web' });
  });

  it('names the field that is wrong', () => {
    expect(formProblem({ ...ok, name: '' })).toBe('Name: required');
    expect(formProblem({ ...ok, name: 'Nightly' })).toContain('Name:');
    expect(formProblem({ ...ok, cron: '0 25 * * *' })).toBe('When: hour: 25 is outside 0-23');
    expect(formProblem({ ...ok, tag: '' })).toContain('Tag:');
    expect(formProblem({ ...ok, keep: '0' })).toBe('Keep: a whole number from 1 to 100');
    expect(formProblem({ ...ok, keep: '2.5' })).toBe('Keep: a whole number from 1 to 100');
    expect(formProblem({ ...ok, type: 'power', keep: '0' })).toBeNull();
    expect(formProblem({ ...ok, targetKind: 'vm', vm: '' })).toBe('VM: pick one');
  });

  it('round-trips a row and words it', () => {
    const row = {
      name: 'n',
      type: 'snapshot' as const,
      cron: '0 2 * * *',
      enabled: false,
      target: { kind: 'tag' as const, tag: 'db' },
      keep: 3,
    };
    expect(
      formOf({ ...row, extension: 'snapshot-schedules', nextRun: null, active: false, lastRun: null }),
    ).toMatchObject({
      keep: '3',
      tag: 'db',
      enabled: false,
    });
    expect(whatText(row)).toBe('snapshot, keep 3');
    expect(whatText({ type: 'power', action: 'start' })).toBe('start');
    expect(cronText('0 2 * * *')).toBe('Nightly at 02:00');
    expect(cronText('5 4 * * *')).toBe('5 4 * * *');
  });
});
