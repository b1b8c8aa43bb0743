import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { FakeCluster, makeVm, makeVmi } from '../testing/fake-cluster';
import { identityFromHeaders, parseAdmins } from './identity';
import { createCorralServices } from './services';
import { refusal } from './vm-actions';
import { printableStatus, rootVolume, vmCpu, vmiAddress, vmTags } from './vm-facts';
import { buildVmRow } from './vm-rows';
import { buildVirtualMachine, composeUserData } from './vm-spec';

const caller = { identity: identityFromHeaders({ 'tailscale-user-login': 'alice' }, parseAdmins(undefined)) };

describe('vm facts', () => {
  it('reads status, cpu, address and tags', () => {
    const vm = makeVm('web', 'tailvm', {
      metadata: { labels: { 'corral.dev/tag.prod': 'true', 'corral.dev/tag.db': 'true', other: 'x' } },
    });
    expect(printableStatus(vm)).toBe('Stopped');
    expect(printableStatus({ metadata: {} })).toBe('Stopped');
    expect(vmCpu(vm)).toBe(2);
    expect(vmCpu(vm, makeVmi('web', 'tailvm', { currentCPUTopology: { sockets: 4, cores: 2, threads: 1 } }))).toBe(8);
    expect(vmiAddress(makeVmi('web'))).toBe('10.0.0.5');
    expect(vmiAddress(undefined)).toBe('');
    expect(vmTags(vm)).toEqual(['db', 'prod']);
  });

  it('finds the boot disk by bootOrder, skipping cdroms', () => {
    const vm = buildVirtualMachine({
      name: 'i',
      namespace: 'n',
      root: { dataVolume: 'i-disk' },
      isoDataVolume: 'i-iso',
      source: {},
      runStrategy: 'Halted',
    });
    expect(rootVolume(vm)).toMatchObject({ volume: 'rootdisk', kind: 'dataVolume', claim: 'i-disk' });
  });
});

describe('refusal (409 reasons)', () => {
  const stopped = makeVm('web');
  const running = makeVm('web', 'tailvm', { status: { printableStatus: 'Running' } });
  const vmi = makeVmi('web');
  const paused = makeVmi('web', 'tailvm', { conditions: [{ type: 'Paused', status: 'True' }] });
  it.each([
    ['pause', stopped, undefined, /not running/],
    ['unpause', running, vmi, /not paused/],
    ['start', running, vmi, /already running/],
    ['stop', stopped, undefined, /not running/],
    ['restart', stopped, undefined, /start it instead/],
    ['migrate', stopped, undefined, /only a running VM/],
    ['pause', running, paused, /already paused/],
  ] as const)('%s is refused', (action, vm, instance, why) => {
    expect(refusal(action, vm, instance)).toMatch(why);
  });
  it.each([
    ['start', stopped, undefined],
    ['pause', running, vmi],
    ['unpause', running, paused],
    ['stop', running, vmi],
  ] as const)('%s is allowed', (action, vm, instance) => {
    expect(refusal(action, vm, instance)).toBeUndefined();
  });
  it("migrate is refused with KubeVirt's reason when not live-migratable", () => {
    const notShared = makeVmi('web', 'tailvm', {
      conditions: [{ type: 'LiveMigratable', status: 'False', message: 'PVC web-disk is not shared' }],
    });
    expect(refusal('migrate', running, notShared)).toMatch(/PVC web-disk is not shared/);
  });
});

describe('cloud-init user data', () => {
  it("merges an SSH key into the caller's cloud-config", () => {
    expect(composeUserData(undefined, undefined, 'fedora')).toBeUndefined();
    expect(composeUserData('#cloud-config\npackages: [htop]', 'ssh-ed25519 AAA a@b', 'fedora')).toBe(
      '#cloud-config\npackages: [htop]\nuser: fedora\nssh_authorized_keys:\n  - "ssh-ed25519 AAA a@b"\n',
    );
    expect(composeUserData('#cloud-config\nssh_authorized_keys:\n  - k', 'ssh-rsa X y', undefined)).toBe(
      '#cloud-config\nssh_authorized_keys:\n  - k\n',
    );
  });
});

describe('services on a fake cluster', () => {
  it('rows merge VMI placement and follow cache events', () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachine', makeVm('web', 'tailvm', { status: { printableStatus: 'Running', ready: true } }));
    const services = createCorralServices(cluster);
    expect(services.vms.list()[0]).toMatchObject({ name: 'web', status: 'Running', running: false, ip: '', node: '' });
    cluster.put('VirtualMachineInstance', makeVmi('web'));
    expect(services.vms.row('tailvm', 'web')).toMatchObject({
      running: true,
      ip: '10.0.0.5',
      node: 'corral-1',
      cpu: 2,
      mem: '4Gi',
    });
    expect(JSON.parse(services.vms.listJson().toString())).toEqual(services.vms.list());
    services.close();
  });

  it('keeps namespace/name order as VMs arrive and drops deleted ones', async () => {
    const cluster = new FakeCluster();
    const services = createCorralServices(cluster);
    expect(services.vms.list()).toEqual([]);
    cluster.put('VirtualMachine', makeVm('b'));
    cluster.put('VirtualMachine', makeVm('a'));
    cluster.put('VirtualMachine', makeVm('c', 'alpha'));
    expect(services.vms.list().map((r) => `${r.namespace}/${r.name}`)).toEqual(['alpha/c', 'tailvm/a', 'tailvm/b']);
    await cluster.remove('VirtualMachine', 'tailvm', 'a');
    expect(JSON.parse(services.vms.listJson().toString()).map((r: { name: string }) => r.name)).toEqual(['c', 'b']);
    services.close();
  });

  it('a create that fails part-way removes what it created and says so', async () => {
    const cluster = new FakeCluster();
    cluster.put('Namespace', { metadata: { name: 'tailvm' } });
    cluster.failOn = {
      verb: 'create',
      kind: 'VirtualMachine',
      error: new CorralError('UNPROCESSABLE', 'admission webhook denied the request'),
    };
    const services = createCorralServices(cluster);
    const err = await services.vms
      .create(caller, { name: 'web', import: 'https://x/y.qcow2', cloudInit: '#cloud-config\n' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorralError);
    expect((err as CorralError).code).toBe('UNPROCESSABLE');
    expect((err as CorralError).message).toMatch(
      /admission webhook denied.*everything created so far was removed again/,
    );
    expect(await cluster.fetchList('DataVolume')).toEqual([]);
    expect(await cluster.fetchList('Secret')).toEqual([]);
    expect(services.tasks.list()[0]).toMatchObject({ action: 'create', status: 'error' });
    services.close();
  });

  it('delete reports a failed step instead of claiming success', async () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachine', makeVm('web'));
    cluster.put('DataVolume', {
      metadata: { name: 'web-disk', namespace: 'tailvm', labels: { 'corral.dev/vm': 'web' } },
    });
    cluster.failOn = {
      verb: 'remove',
      kind: 'DataVolume',
      error: new CorralError('FORBIDDEN', 'datavolumes is forbidden'),
    };
    const services = createCorralServices(cluster);
    const err = (await services.vms.delete(caller, 'tailvm', 'web').catch((e: unknown) => e)) as CorralError;
    expect(err.code).toBe('BAD_GATEWAY');
    expect(err.message).toMatch(
      /only partly deleted; failed: DataVolume web-disk \(datavolumes is forbidden\)\. Deleted: VirtualMachine\/tailvm\/web/,
    );
    services.close();
  });

  it('delete keeps a Secret or disk that another VM still uses (a clone shares its source cloud-init Secret)', async () => {
    const cluster = new FakeCluster();
    const withVolumes = (name: string, claim: string) =>
      makeVm(name, 'tailvm', {
        spec: {
          template: {
            spec: {
              volumes: [
                { name: 'rootdisk', persistentVolumeClaim: { claimName: claim } },
                { name: 'cloudinit', cloudInitNoCloud: { secretRef: { name: 'web-cloudinit' } } },
              ],
            },
          },
        },
      });
    cluster.put('VirtualMachine', withVolumes('web', 'web-disk'));
    cluster.put('VirtualMachine', withVolumes('web-clone', 'web-clone-disk'));
    const services = createCorralServices(cluster);
    const planned = async (name: string) =>
      (await services.vms.deletionPlan('tailvm', name)).objects.map((o) => `${o.kind}/${o.name}`);
    expect(await planned('web-clone')).toEqual(['VirtualMachine/web-clone', 'PersistentVolumeClaim/web-clone-disk']);
    await cluster.remove('VirtualMachine', 'tailvm', 'web');
    expect(await planned('web-clone')).toEqual([
      'VirtualMachine/web-clone',
      'PersistentVolumeClaim/web-clone-disk',
      'Secret/web-cloudinit',
    ]);
    services.close();
  });

  it('actions call the KubeVirt verb on the right subresource', async () => {
    const cluster = new FakeCluster();
    cluster.put('VirtualMachine', makeVm('web', 'tailvm', { status: { printableStatus: 'Running' } }));
    cluster.put('VirtualMachineInstance', makeVmi('web'));
    const services = createCorralServices(cluster);
    await services.vms.action(caller, 'tailvm', 'web', 'pause');
    await services.vms.action(caller, 'tailvm', 'web', 'restart');
    expect(cluster.writes.map((w) => `${w.verb}:${w.kind}`)).toEqual([
      'pause:virtualmachineinstances',
      'restart:virtualmachines',
    ]);
    const vm = cluster.cache.get('VirtualMachine', 'tailvm', 'web');
    expect(buildVmRow(vm!, cluster.cache, 100).running).toBe(true);
    services.close();
  });
});
