import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { TaskCancelled, TaskJournal } from './tasks';
import { openExport } from './vm-export';

/** A cluster whose VirtualMachineExport is Ready at once, with a raw link of claim `web-disk` and its token. */
function cluster(removed: string[]): DomainDeps {
  const ready: KObject = {
    metadata: {},
    status: {
      phase: 'Ready',
      tokenSecretRef: 'export-token',
      links: { internal: { volumes: [{ name: 'web-disk', formats: [{ format: 'raw', url: 'https://x/disk.img' }] }] } },
    },
  };
  return {
    journal: new TaskJournal(),
    config: { pollMs: 10, waitTimeoutMs: 1000 },
    cluster: {
      info: { context: 'home' },
      create: async () => ({}),
      fetch: async (kind: string) =>
        kind === 'Secret' ? { metadata: {}, data: { token: Buffer.from('t0ken').toString('base64') } } : ready,
      remove: async (_kind: string, _ns: string, name: string) => void removed.push(name),
    },
  } as unknown as DomainDeps;
}

const open = (deps: DomainDeps) =>
  openExport(deps, { identity: { login: 'alice' } } as Parameters<typeof openExport>[1], 'tailvm', 'web', {
    source: { apiGroup: 'kubevirt.io', kind: 'VirtualMachine', name: 'web' },
    volume: 'web-disk',
    labels: {},
  });

describe("an export session's task", () => {
  it('ends stopped, not cancelled, when the task using it was cancelled (this one takes no cancel)', async () => {
    const removed: string[] = [];
    const deps = cluster(removed);
    const session = await open(deps);
    expect(session.token).toBe('t0ken');
    await session.close(new TaskCancelled('bob'));
    const task = deps.journal.get(session.task.id)!;
    expect(task).toMatchObject({ action: 'export', status: 'error' });
    expect(task.error).toBe('stopped: the task using this export was cancelled by bob');
    expect(task.cancelledBy).toBeUndefined();
    expect(task.log).toMatch(/error: stopped: the task using this export was cancelled by bob$/);
    expect(removed).toEqual([session.object]);
  });

  it('ends with the error it is closed with, or done', async () => {
    const failed = cluster([]);
    const a = await open(failed);
    await a.close(new CorralError('CONFLICT', 'the client disconnected; export stopped'));
    expect(failed.journal.get(a.task.id)?.error).toBe('the client disconnected; export stopped');
    const fine = cluster([]);
    const b = await open(fine);
    await b.close();
    await b.close(new TaskCancelled('bob'));
    expect(fine.journal.get(b.task.id)).toMatchObject({ status: 'done', error: '' });
  });
});
