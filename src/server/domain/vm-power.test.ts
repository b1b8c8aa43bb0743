import { describe, expect, it } from 'vitest';
import { FakeCluster, makeVm, makeVmi } from '../testing/fake-cluster';
import { identityFromHeaders, parseAdmins } from './identity';
import { createCorralServices } from './services';
import { powerAction } from './vm-power';

const caller = { identity: identityFromHeaders({ 'tailscale-user-login': 'alice' }, parseAdmins(undefined)) };

describe('powerAction stop', () => {
  it('joins a shutdown already under way instead of refusing, and ends when the VM has stopped', async () => {
    const cluster = new FakeCluster();
    // Halted, instance already gone, status not yet caught up: what a client sees right after a rollback or a stop.
    cluster.put('VirtualMachine', makeVm('web', 'tailvm', { status: { printableStatus: 'Stopping' } }));
    const services = createCorralServices(cluster);
    const taskId = await powerAction(services.deps, caller, 'tailvm', 'web', 'stop', { timeoutMs: 5000 });
    expect(cluster.writes).toEqual([]); // nothing sent: KubeVirt is already stopping it
    expect(services.journal.get(taskId)).toMatchObject({ status: 'running' });

    cluster.put('VirtualMachine', makeVm('web', 'tailvm', { status: { printableStatus: 'Stopped' } }));
    expect(services.journal.get(taskId)).toMatchObject({ status: 'done' });
    expect(services.journal.get(taskId)?.log).toContain('already Stopping');
    services.close();
  });

  it('still refuses a VM that is simply stopped, and sends the stop verb to a running one', async () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachine', makeVm('off'));
    cluster.put('VirtualMachine', makeVm('on', 'tailvm', { status: { printableStatus: 'Running' } }));
    cluster.put('VirtualMachineInstance', makeVmi('on'));
    const services = createCorralServices(cluster);
    await expect(powerAction(services.deps, caller, 'tailvm', 'off', 'stop')).rejects.toThrow(
      /not running \(Stopped\)/,
    );
    await powerAction(services.deps, caller, 'tailvm', 'on', 'stop', { timeoutMs: 5000 });
    expect(cluster.writes).toMatchObject([
      { verb: 'stop', kind: 'virtualmachines', name: 'on', body: { gracePeriod: 0 } },
    ]);
    services.close();
  });
});
