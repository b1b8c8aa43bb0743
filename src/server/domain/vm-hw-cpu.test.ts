import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { FakeCluster, makeVm, makeVmi } from '../testing/fake-cluster';
import { identityFromHeaders, parseAdmins } from './identity';
import { createCorralServices } from './services';
import { scaleVm } from './vm-hw-cpu';

const caller = { identity: identityFromHeaders({ 'tailscale-user-login': 'alice' }, parseAdmins(undefined)) };

async function until(probe: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** A running VM whose instance cannot be live-migrated (a local disk), so a scale goes stop → patch → start. */
function runningVm(runStrategy: string) {
  const cluster = new FakeCluster();
  cluster.put(
    'VirtualMachine',
    makeVm('db', 'tailvm', { spec: { runStrategy }, status: { printableStatus: 'Running' } } as never),
  );
  cluster.put('VirtualMachineInstance', {
    ...makeVmi('db', 'tailvm', {
      conditions: [{ type: 'LiveMigratable', status: 'False', message: 'PVC db-disk is not shared' }],
    }),
    spec: { domain: { cpu: { sockets: 2, maxSockets: 8 }, memory: { guest: '4Gi' } } },
  });
  const services = createCorralServices(cluster, { waitTimeoutMs: 5000 });
  const stopped = () => {
    cluster.objects.get('VirtualMachineInstance')?.delete('tailvm/db');
    cluster.put('VirtualMachine', {
      ...cluster.cache.get('VirtualMachine', 'tailvm', 'db')!,
      status: { printableStatus: 'Stopped' },
    });
  };
  return { cluster, services, stopped };
}

describe('scaleVm stop → patch → start', () => {
  it('ends its task as error saying what was done and what to do when the restart fails', async () => {
    const { cluster, services, stopped } = runningVm('Always');
    const res = await scaleVm(services.deps, caller, 'tailvm', 'db', { cpu: 4 });
    expect(res).toMatchObject({ mode: 'restart', cpu: 4, mem: '4Gi' });
    expect(res.reason).toContain('not live-migratable (PVC db-disk is not shared)');
    await until(() => cluster.writes.some((w) => w.verb === 'stop'), 'the stop verb');
    stopped();
    await until(
      () => cluster.writes.some((w) => w.verb === 'patch' && JSON.stringify(w.body).includes('"sockets":4')),
      'the patch',
    );
    // The start is requested (runStrategy re-asserted), then KubeVirt cannot schedule it.
    await until(() => cluster.writes.filter((w) => w.verb === 'patch').length >= 2, 'the start');
    cluster.put('VirtualMachine', {
      ...cluster.cache.get('VirtualMachine', 'tailvm', 'db')!,
      status: { printableStatus: 'ErrorUnschedulable' },
    });
    await until(() => services.journal.get(res.task)?.status !== 'running', 'the scale task to end');
    const task = services.journal.get(res.task)!;
    expect(task.status).toBe('error');
    expect(task.error).toMatch(
      /^VM tailvm\/db was stopped and now has 4 vCPU\(s\), 4Gi, but starting it again failed: .*ErrorUnschedulable.*; start it \(POST \/api\/vms\/tailvm\/db\/start\)/,
    );
    services.close();
  });

  it('starts the VM again, unchanged, when saving the new size fails after the stop', async () => {
    const { cluster, services, stopped } = runningVm('Manual');
    const res = await scaleVm(services.deps, caller, 'tailvm', 'db', { memoryBytes: 8 * 2 ** 30 });
    expect(res.mode).toBe('restart');
    await until(() => cluster.writes.some((w) => w.verb === 'stop'), 'the stop verb');
    cluster.failOn = {
      verb: 'patch',
      kind: 'VirtualMachine',
      error: new CorralError('CONFLICT', 'object was modified'),
    };
    stopped();
    await until(() => cluster.writes.some((w) => w.verb === 'start'), 'the start verb');
    cluster.failOn = undefined;
    cluster.put('VirtualMachineInstance', makeVmi('db'));
    cluster.put('VirtualMachine', {
      ...cluster.cache.get('VirtualMachine', 'tailvm', 'db')!,
      status: { printableStatus: 'Running' },
    });
    await until(() => services.journal.get(res.task)?.status !== 'running', 'the scale task to end');
    const task = services.journal.get(res.task)!;
    expect(task.status).toBe('error');
    expect(task.error).toBe(
      'saving 2 vCPU(s), 8Gi for VM tailvm/db failed: object was modified; nothing was changed and it was started again',
    );
    expect(
      (
        cluster.cache.get('VirtualMachine', 'tailvm', 'db')?.spec as {
          template: { spec: { domain: { memory: unknown } } };
        }
      ).template.spec.domain.memory,
    ).toEqual({ guest: '4Gi' });
    services.close();
  });

  it('refuses an instancetype-sized, paused or unknown VM before writing anything', async () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachine', makeVm('it', 'tailvm', { spec: { instancetype: { name: 'u1.medium' } } } as never));
    const services = createCorralServices(cluster);
    await expect(scaleVm(services.deps, caller, 'tailvm', 'it', { cpu: 4 })).rejects.toThrow(
      /sized by instancetype u1.medium/,
    );
    await expect(scaleVm(services.deps, caller, 'tailvm', 'nope', { cpu: 4 })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    expect(cluster.writes).toEqual([]);
    services.close();
  });
});
