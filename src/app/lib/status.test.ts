import { describe, expect, it } from 'vitest';
import { actionState, statusTone, type ActionFacts } from './status';

const facts = (status: string, over: Partial<ActionFacts> = {}): ActionFacts => ({
  status,
  running: status === 'Running' || status === 'Starting',
  otherReadyNodes: 2,
  ...over,
});

describe('statusTone', () => {
  it('classifies KubeVirt printable statuses', () => {
    expect(statusTone('Running')).toBe('running');
    expect(statusTone('Stopped')).toBe('stopped');
    expect(statusTone('Paused')).toBe('paused');
    expect(statusTone('Starting')).toBe('transition');
    expect(statusTone('Migrating')).toBe('transition');
    expect(statusTone('ErrorUnschedulable')).toBe('error');
    expect(statusTone('CrashLoopBackOff')).toBe('error');
  });
});

describe('actionState', () => {
  it('allows start only when stopped', () => {
    expect(actionState('start', facts('Stopped')).enabled).toBe(true);
    expect(actionState('start', facts('Running'))).toEqual({ enabled: false, reason: 'already running' });
  });
  it('explains stop, restart, pause and resume refusals', () => {
    expect(actionState('stop', facts('Stopped'))).toEqual({ enabled: false, reason: 'already stopped' });
    expect(actionState('restart', facts('Stopped')).reason).toBe('not running (Stopped)');
    expect(actionState('pause', facts('Paused')).reason).toBe('already paused');
    expect(actionState('unpause', facts('Running')).reason).toBe('not paused');
    expect(actionState('unpause', facts('Paused')).enabled).toBe(true);
  });
  it('gives the live-migration reason from the server', () => {
    const f = facts('Running', { liveMigratable: { ok: false, reason: 'RWO disk' } });
    expect(actionState('migrate', f)).toEqual({ enabled: false, reason: 'not live-migratable: RWO disk' });
    expect(actionState('migrate', facts('Running', { otherReadyNodes: 0 })).reason).toMatch(/no other ready node/);
    expect(actionState('migrate', facts('Running')).enabled).toBe(true);
    // Stopped: an offline move (pinned to the target node); starting/stopping VMs cannot move either way.
    expect(actionState('migrate', facts('Stopped')).enabled).toBe(true);
    expect(actionState('migrate', facts('Stopped', { otherReadyNodes: 0 })).reason).toMatch(/no other ready node/);
    expect(actionState('migrate', facts('Starting')).enabled).toBe(false);
  });
});
