import { describe, expect, it } from 'vitest';
import { pveState } from './status';

describe('pveState', () => {
  it.each([
    ['Running', 'running', 'running', undefined],
    ['Paused', 'running', 'paused', undefined],
    ['Migrating', 'running', 'running', 'migrate'],
    ['Stopping', 'running', 'shutdown', undefined],
    ['Starting', 'stopped', 'prelaunch', undefined],
    ['Provisioning', 'stopped', 'prelaunch', 'create'],
    ['Stopped', 'stopped', 'stopped', undefined],
    ['ErrorUnschedulable', 'stopped', 'stopped', undefined],
    ['CrashLoopBackOff', 'stopped', 'stopped', undefined],
  ])('%s → status %s, qmpstatus %s, lock %s', (printable, status, qmp, lock) => {
    const s = pveState(printable);
    expect(s.status).toBe(status);
    expect(s.qmpstatus).toBe(qmp);
    expect(s.lock).toBe(lock);
  });
});
