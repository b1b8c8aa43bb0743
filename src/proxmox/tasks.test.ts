import { describe, expect, it } from 'vitest';
import type { Task } from '@/server/schemas/tasks';
import { UpidRegistry, taskListRow, taskLog, taskMatches, taskStatus, taskType, upidPid } from './tasks';
import { parseUpid } from './translate/upid';

function task(over: Partial<Task> = {}): Task {
  return {
    id: 'start-web-1-1',
    action: 'start',
    target: 'tailvm/web',
    caller: 'root@pam!ci',
    status: 'running',
    progress: 0,
    log: '10:00:00 start requested\n10:00:01 status Running',
    error: '',
    startedAt: '2026-11-30T10:00:00.000Z',
    endedAt: null,
    ...over,
  };
}

describe('UpidRegistry', () => {
  it('mints one UPID per task, naming node, type, vmid and user', () => {
    const reg = new UpidRegistry(10, 0x65000000);
    const upid = reg.upidFor(task(), { node: 'corral-2', vmid: 101, user: 'root@pam!ci' });
    const pid = upidPid('start-web-1-1').toString(16).toUpperCase().padStart(8, '0');
    expect(upid).toMatch(new RegExp(`^UPID:corral-2:${pid}:65000000:[0-9A-F]{8}:qmstart:101:root@pam!ci:$`));
    expect(reg.upidFor(task(), { node: 'other', user: 'x@y' })).toBe(upid);
    expect(parseUpid(upid)?.starttime).toBe(Date.parse('2026-11-30T10:00:00Z') / 1000);
    expect(reg.resolve(upid)).toEqual({ taskId: 'start-web-1-1', upid: parseUpid(upid) });
  });

  it('does not resolve foreign, stale or forged UPIDs', () => {
    const reg = new UpidRegistry(10, 0x65000000);
    const upid = reg.upidFor(task(), { node: 'corral-2', vmid: 101, user: 'root@pam' });
    expect(reg.resolve(upid.replace('qmstart', 'qmstop'))).toBeUndefined();
    expect(reg.resolve(upid.replace(':65000000:', ':65000001:'))).toBeUndefined();
    expect(reg.resolve('garbage')).toBeUndefined();
  });

  it('resolves a UPID minted by an earlier process or another replica through the journal lookup', () => {
    const before = new UpidRegistry(10, 0x65000000);
    const upid = before.upidFor(task(), { node: 'corral-2', vmid: 101, user: 'root@pam!ci' });
    const journal = [task(), task({ id: 'other-1', startedAt: '2026-11-30T10:00:00.000Z' })];
    const lookups: [number, number][] = [];
    const after = new UpidRegistry(10, 0x66000000, (pid, starttime) => {
      lookups.push([pid, starttime]);
      return journal.find((t) => upidPid(t.id) === pid && Date.parse(t.startedAt) / 1000 === starttime)?.id;
    });
    expect(after.resolve(upid)).toEqual({ taskId: 'start-web-1-1', upid: parseUpid(upid) });
    expect(lookups).toEqual([[upidPid('start-web-1-1'), Date.parse('2026-11-30T10:00:00Z') / 1000]]);
    // A pid no journal task has stays unresolved.
    expect(after.resolve(upid.replace(/^UPID:corral-2:[0-9A-F]{8}/, 'UPID:corral-2:00000007'))).toBeUndefined();
  });

  it('forgets the oldest beyond its capacity', () => {
    const reg = new UpidRegistry(2, 1);
    const first = reg.upidFor(task({ id: 'a' }), { node: 'n', user: 'u@pam' });
    reg.upidFor(task({ id: 'b' }), { node: 'n', user: 'u@pam' });
    reg.upidFor(task({ id: 'c' }), { node: 'n', user: 'u@pam' });
    expect(reg.resolve(first)).toBeUndefined();
  });
});

describe('task rendering', () => {
  const reg = new UpidRegistry(10, 0x65000000);
  const upidText = reg.upidFor(task(), { node: 'corral-2', vmid: 101, user: 'root@pam!ci' });
  const upid = parseUpid(upidText)!;

  it('reports running without an exit status, then stopped with OK or the error', () => {
    expect(taskStatus(task(), upid, upidText)).toMatchObject({
      status: 'running',
      pid: upidPid('start-web-1-1'),
      type: 'qmstart',
      user: 'root@pam',
      tokenid: 'ci',
    });
    expect(taskStatus(task(), upid, upidText)).not.toHaveProperty('exitstatus');
    expect(taskStatus(task({ status: 'done' }), upid, upidText)).toMatchObject({ status: 'stopped', exitstatus: 'OK' });
    expect(taskStatus(task({ status: 'error', error: 'no space left' }), upid, upidText)).toMatchObject({
      status: 'stopped',
      exitstatus: 'no space left',
    });
  });

  it('numbers log lines and ends them like PVE', () => {
    expect(taskLog(task({ status: 'done' }))).toEqual([
      { n: 1, t: '10:00:00 start requested' },
      { n: 2, t: '10:00:01 status Running' },
      { n: 3, t: 'TASK OK' },
    ]);
    expect(taskLog(task({ status: 'error', error: 'boom' }), 2, 5)).toEqual([{ n: 3, t: 'TASK ERROR: boom' }]);
  });

  it('lists tasks with the exit status in `status`', () => {
    expect(taskListRow(task({ status: 'done', endedAt: '2026-11-30T10:00:05.000Z' }), upid, upidText)).toMatchObject({
      status: 'OK',
      endtime: upid.starttime + 5,
    });
    expect(taskListRow(task(), upid, upidText)).not.toHaveProperty('status');
  });

  it('maps Corral actions to PVE task types', () => {
    expect(taskType('delete')).toBe('qmdestroy');
    expect(taskType('bootc')).toBe('bootc');
    expect(taskType('a:b c')).toBe('abc');
  });
});

describe('taskMatches (GET /nodes/{node}/tasks filters)', () => {
  const upid = parseUpid('UPID:corral-2:00000001:65000000:65123456:qmstart:101:root@pam!ci:')!;
  const done = task({ status: 'done', endedAt: '2026-11-30T10:00:05.000Z' });
  const failed = task({ status: 'error', error: 'boom', endedAt: '2026-11-30T10:00:05.000Z' });
  const running = task();
  const base = { node: 'corral-2' };

  it('keeps the node and, like PVE, only ended tasks unless source says otherwise', () => {
    expect(taskMatches(done, upid, base)).toBe(true);
    expect(taskMatches(done, upid, { node: 'corral-1' })).toBe(false);
    expect(taskMatches(running, upid, base)).toBe(false);
    expect(taskMatches(running, upid, { ...base, source: 'active' })).toBe(true);
    expect(taskMatches(done, upid, { ...base, source: 'active' })).toBe(false);
    expect(taskMatches(running, upid, { ...base, source: 'all' })).toBe(true);
  });

  it('filters vmid, exact type, user substring (any case), errors, status types and start times', () => {
    expect(taskMatches(done, upid, { ...base, vmid: 101 })).toBe(true);
    expect(taskMatches(done, upid, { ...base, vmid: 102 })).toBe(false);
    expect(taskMatches(done, upid, { ...base, typefilter: 'qmstart' })).toBe(true);
    expect(taskMatches(done, upid, { ...base, typefilter: 'qmsta' })).toBe(false);
    expect(taskMatches(done, upid, { ...base, userfilter: 'ROOT@' })).toBe(true);
    expect(taskMatches(done, upid, { ...base, userfilter: 'alice' })).toBe(false);
    expect(taskMatches(done, upid, { ...base, errors: true })).toBe(false);
    expect(taskMatches(failed, upid, { ...base, errors: true })).toBe(true);
    expect(taskMatches(failed, upid, { ...base, statusfilter: new Set(['ok']) })).toBe(false);
    expect(taskMatches(failed, upid, { ...base, statusfilter: new Set(['error']) })).toBe(true);
    expect(taskMatches(done, upid, { ...base, since: 0x65123456, until: 0x65123456 })).toBe(true);
    expect(taskMatches(done, upid, { ...base, since: 0x65123457 })).toBe(false);
    expect(taskMatches(done, upid, { ...base, until: 0x65123455 })).toBe(false);
  });
});
