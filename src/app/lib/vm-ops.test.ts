import { describe, expect, it } from 'vitest';
import type { SnapshotRow, TaskRow } from './model';
import {
  cloneState,
  cloneTargetProblem,
  exportState,
  exportUrl,
  latestTask,
  newestFirst,
  NO_SNAPSHOT_CLASS,
  rollbackState,
  snapshotNameProblem,
  SNAPSHOT_TASKS,
  suggestSnapshotName,
  takeSnapshotState,
  templateState,
  type OpsFacts,
} from './vm-ops';

const stopped: OpsFacts = { status: 'Stopped', running: false, template: false, hasDisk: true, canSnapshot: true };
const running: OpsFacts = { ...stopped, status: 'Running', running: true };

const snap = (name: string, creationTime: string, over: Partial<SnapshotRow> = {}): SnapshotRow => ({
  name,
  phase: 'Succeeded',
  creationTime,
  ready: true,
  ...over,
});

const task = (over: Partial<TaskRow>): TaskRow => ({
  id: 't',
  action: 'snapshot',
  target: 'ns/vm',
  caller: 'me',
  status: 'running',
  progress: 10,
  log: '',
  error: '',
  startedAt: '2026-12-01T10:00:00Z',
  endedAt: null,
  ...over,
});

describe('what a VM state allows', () => {
  it('clone: stopped, or running with a guest agent; without a snapshot class only a stopped VM (another namespace)', () => {
    expect(cloneState(stopped).enabled).toBe(true);
    expect(cloneState(running).reason).toMatch(/^stop the VM first/);
    expect(cloneState({ ...running, agent: true }).enabled).toBe(true);
    expect(cloneState({ ...stopped, canSnapshot: false }).enabled).toBe(true);
    expect(cloneState({ ...running, agent: true, canSnapshot: false }).reason).toBe(
      `${NO_SNAPSHOT_CLASS} (stop the VM to clone it into another namespace)`,
    );
  });
  it('clone target: within the namespace needs a snapshot, into another one a stopped VM', () => {
    expect(cloneTargetProblem(stopped, 'tailvm', 'tailvm')).toBeNull();
    expect(cloneTargetProblem(stopped, 'tailvm', 'other')).toBeNull();
    expect(cloneTargetProblem({ ...stopped, canSnapshot: false }, 'tailvm', 'tailvm')).toMatch(
      /needs a snapshot .*pick another namespace/,
    );
    expect(cloneTargetProblem({ ...stopped, canSnapshot: false }, 'tailvm', 'other')).toBeNull();
    expect(cloneTargetProblem({ ...running, agent: true }, 'tailvm', 'tailvm')).toBeNull();
    expect(cloneTargetProblem({ ...running, agent: true }, 'tailvm', 'other')).toMatch(
      /^stop the VM first to clone it into another namespace/,
    );
    expect(cloneTargetProblem(running, 'tailvm', 'tailvm')).toMatch(/no guest agent/);
  });
  it('template: marking needs a stopped VM, unmarking does not', () => {
    expect(templateState(stopped).enabled).toBe(true);
    expect(templateState(running).reason).toBe('stop the VM first (Running)');
    expect(templateState({ ...running, template: true }).enabled).toBe(true);
  });
  it('export: a stopped VM with a PVC disk', () => {
    expect(exportState(stopped).enabled).toBe(true);
    expect(exportState(running).reason).toMatch(/^stop the VM first/);
    expect(exportState({ ...stopped, hasDisk: false }).reason).toMatch(/container disk/);
  });
  it('take snapshot: capability, list refusal, running task', () => {
    expect(takeSnapshotState(running, {}).enabled).toBe(true);
    expect(takeSnapshotState({ ...stopped, canSnapshot: false }, {}).reason).toBe(NO_SNAPSHOT_CLASS);
    expect(takeSnapshotState(stopped, { listError: 'snapshot API missing' }).reason).toBe('snapshot API missing');
    expect(takeSnapshotState(stopped, { runningTask: task({ action: 'rollback' }) }).reason).toBe(
      'wait for the running rollback task',
    );
  });
  it('rollback: only a ready snapshot', () => {
    expect(rollbackState(snap('a', '2026-12-01T10:00:00Z')).enabled).toBe(true);
    expect(rollbackState(snap('a', '', { ready: false, phase: 'InProgress' })).reason).toBe(
      'not ready to restore from yet (InProgress)',
    );
    expect(rollbackState(snap('a', '', { ready: false, phase: 'Failed', error: 'boom' })).reason).toBe(
      'the snapshot failed: boom',
    );
  });
});

describe('snapshots', () => {
  it('orders newest first', () => {
    const rows = [
      snap('a', '2026-12-01T10:00:00Z'),
      snap('c', '2026-12-01T12:00:00Z'),
      snap('b', '2026-12-01T11:00:00Z'),
    ];
    expect(newestFirst(rows).map((r) => r.name)).toEqual(['c', 'b', 'a']);
  });
  it('checks names as the server does', () => {
    expect(snapshotNameProblem('before-upgrade_1')).toBeNull();
    expect(snapshotNameProblem('1st')).toBe('Must start with a letter');
    expect(snapshotNameProblem('a b')).toMatch(/" " is not allowed/);
    expect(snapshotNameProblem('current')).toMatch(/reserved/);
    expect(snapshotNameProblem('x'.repeat(41))).toMatch(/At most 40/);
    expect(snapshotNameProblem(suggestSnapshotName(new Date(2026, 11, 1, 9, 5, 7)))).toBeNull();
    expect(suggestSnapshotName(new Date(2026, 11, 1, 9, 5, 7))).toBe('snap-20261201-090507');
  });
  it('finds the newest matching task since a moment', () => {
    const tasks = [
      task({ id: '1', startedAt: '2026-12-01T10:00:00Z' }),
      task({ id: '2', startedAt: '2026-12-01T11:00:00Z', action: 'rollback' }),
      task({ id: '3', startedAt: '2026-12-01T12:00:00Z', target: 'ns/other' }),
      task({ id: '4', startedAt: '2026-12-01T12:30:00Z', action: 'migrate' }),
    ];
    expect(latestTask(tasks, 'ns/vm', SNAPSHOT_TASKS)?.id).toBe('2');
    expect(latestTask(tasks, 'ns/vm', SNAPSHOT_TASKS, Date.parse('2026-12-01T11:30:00Z'))).toBeUndefined();
  });
});

it('builds the export URL', () => {
  expect(exportUrl('tailvm', 'db', 'qcow2')).toBe('/api/vms/tailvm/db/export?format=qcow2');
  expect(exportUrl('tailvm', 'db', 'raw.gz')).toBe('/api/vms/tailvm/db/export?format=raw.gz');
});
