import { describe, expect, it } from 'vitest';
import { CorralError } from '../errors';
import { FakeCluster, makeVm, makeVmi } from '../testing/fake-cluster';
import type { KObject } from './cluster-port';
import { createCorralServices } from './services';
import { eventRow, involves, vmEvents, vmObjects, watchVmEvents } from './vm-events';
import { GuestAgentUnavailable, guestInfo, parseTimezone, requireGuestAgent } from './vm-guest';

const event = (name: string, kind: string, objName: string, extra: Partial<KObject> = {}): KObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'tailvm', resourceVersion: '1' },
  involvedObject: { kind, name: objName, namespace: 'tailvm' },
  reason: 'Started',
  message: `${kind} ${objName}`,
  type: 'Normal',
  count: 1,
  firstTimestamp: '2026-12-01T10:00:00Z',
  lastTimestamp: '2026-12-01T10:00:00Z',
  ...extra,
});

function withVm() {
  const cluster = new FakeCluster();
  cluster.put(
    'VirtualMachine',
    makeVm('web', 'tailvm', {
      spec: {
        runStrategy: 'Always',
        template: {
          spec: {
            domain: { devices: { disks: [{ name: 'rootdisk', disk: {} }] } },
            volumes: [{ name: 'rootdisk', dataVolume: { name: 'web-disk' } }],
          },
        },
      },
    }),
  );
  return { cluster, services: createCorralServices(cluster) };
}

describe('VM events', () => {
  it("matches the VM's, VMI's, launcher pods' (any run's, by name) and disks' events, not a neighbour's", () => {
    const { services } = withVm();
    const objects = vmObjects(services.deps, 'tailvm', 'web');
    expect(involves(objects, event('a', 'VirtualMachine', 'web'))).toBe(true);
    expect(involves(objects, event('b', 'VirtualMachineInstance', 'web'))).toBe(true);
    expect(involves(objects, event('c', 'Pod', 'virt-launcher-web-x7k2p'))).toBe(true);
    expect(involves(objects, event('d', 'DataVolume', 'web-disk'))).toBe(true);
    expect(involves(objects, event('e', 'PersistentVolumeClaim', 'web-disk'))).toBe(true);
    expect(involves(objects, event('f', 'VirtualMachine', 'web2'))).toBe(false);
    expect(involves(objects, event('g', 'Pod', 'virt-launcher-web2-abcde'))).toBe(false);
    expect(involves(objects, event('h', 'Node', 'web'))).toBe(false);
    services.close();
  });

  it('maps an event to a row: last seen, first seen only when different, count, Warning', () => {
    expect(
      eventRow(event('x', 'Pod', 'p', { count: 5, lastTimestamp: '2026-12-01T10:05:00Z', type: 'Warning' })),
    ).toEqual({
      id: 'x',
      type: 'Warning',
      reason: 'Started',
      message: 'Pod p',
      count: 5,
      object: { kind: 'Pod', name: 'p' },
      time: '2026-12-01T10:05:00Z',
      firstTime: '2026-12-01T10:00:00Z',
    });
    // events.k8s.io-style: eventTime and series instead of the legacy timestamps.
    const modern = eventRow(
      event('y', 'Pod', 'p', {
        firstTimestamp: undefined,
        lastTimestamp: undefined,
        count: undefined,
        eventTime: '2026-12-01T11:00:00.000000Z',
        series: { count: 3, lastObservedTime: '2026-12-01T11:02:00.000000Z' },
      }),
    );
    expect(modern).toMatchObject({ count: 3, time: '2026-12-01T11:02:00.000000Z' });
  });

  it('lists newest first (same second: the later write first), bounded, filtered by type', async () => {
    const { cluster, services } = withVm();
    cluster.put('Event', event('old', 'VirtualMachine', 'web', { lastTimestamp: '2026-12-01T09:00:00Z' }));
    cluster.put('Event', event('new', 'VirtualMachineInstance', 'web', { lastTimestamp: '2026-12-01T10:00:00Z' }));
    const later = event('newer', 'Pod', 'virt-launcher-web-a', { lastTimestamp: '2026-12-01T10:00:00Z' });
    later.metadata.resourceVersion = '9';
    cluster.put('Event', later);
    cluster.put('Event', event('warn', 'DataVolume', 'web-disk', { type: 'Warning' }));
    cluster.put('Event', event('other', 'VirtualMachine', 'db'));
    const rows = await vmEvents(services.deps, 'tailvm', 'web');
    expect(rows.map((r) => r.id)).toEqual(['newer', 'new', 'warn', 'old']);
    expect((await vmEvents(services.deps, 'tailvm', 'web', { limit: 2 })).map((r) => r.id)).toEqual(['newer', 'new']);
    expect((await vmEvents(services.deps, 'tailvm', 'web', { type: 'Warning' })).map((r) => r.id)).toEqual(['warn']);
    await expect(vmEvents(services.deps, 'tailvm', 'nope')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    services.close();
  });

  it('pushes a resync, then only the VM’s events, and ends when its signal aborts', async () => {
    const { cluster, services } = withVm();
    const ac = new AbortController();
    const got: unknown[] = [];
    const done = (async () => {
      for await (const m of watchVmEvents(services.deps, 'tailvm', 'web', ac.signal)) {
        got.push(m);
        if (m.kind === 'resync') {
          cluster.put('Event', event('n1', 'VirtualMachine', 'db'));
          cluster.put('Event', event('n2', 'VirtualMachineInstance', 'web'));
        }
      }
    })();
    await expect.poll(() => got.length).toBe(2);
    expect(got).toMatchObject([{ kind: 'resync' }, { kind: 'event', event: { id: 'n2' } }]);
    ac.abort();
    await done;
    services.close();
  });
});

describe('guest info', () => {
  it('parses the timezone KubeVirt formats', () => {
    expect(parseTimezone('UTC, 0')).toEqual({ name: 'UTC', offsetSeconds: 0 });
    expect(parseTimezone('CET, 3600')).toEqual({ name: 'CET', offsetSeconds: 3600 });
    expect(parseTimezone('Pacific Standard Time, -28800')).toEqual({
      name: 'Pacific Standard Time',
      offsetSeconds: -28800,
    });
    expect(parseTimezone('')).toEqual({ name: '', offsetSeconds: 0 });
  });

  it('says why the agent cannot answer before asking the cluster', () => {
    const { cluster, services } = withVm();
    const problem = () => {
      try {
        requireGuestAgent(services.deps, 'tailvm', 'web');
        return 'ok';
      } catch (err) {
        return err instanceof GuestAgentUnavailable ? err.problem : (err as CorralError).code;
      }
    };
    expect(problem()).toBe('not-running');
    cluster.put('VirtualMachineInstance', makeVmi('web', 'tailvm', { phase: 'Scheduling' }));
    expect(problem()).toBe('not-running');
    expect(() => requireGuestAgent(services.deps, 'tailvm', 'web')).toThrow(
      'VM tailvm/web is not running yet (Scheduling): no guest agent to ask',
    );
    cluster.put('VirtualMachineInstance', makeVmi('web'));
    expect(problem()).toBe('no-agent');
    cluster.put(
      'VirtualMachineInstance',
      makeVmi('web', 'tailvm', { conditions: [{ type: 'Paused', status: 'True' }] }),
    );
    expect(problem()).toBe('paused');
    cluster.put(
      'VirtualMachineInstance',
      makeVmi('web', 'tailvm', { conditions: [{ type: 'AgentConnected', status: 'True' }] }),
    );
    expect(problem()).toBe('ok');
    expect(() => requireGuestAgent(services.deps, 'tailvm', 'nope')).toThrow(/not found/);
    expect(cluster.writes).toEqual([]);
    services.close();
  });

  it('maps the subresources, and an agent lost in between is still a 503', async () => {
    const { cluster, services } = withVm();
    cluster.put(
      'VirtualMachineInstance',
      makeVmi('web', 'tailvm', {
        conditions: [{ type: 'AgentConnected', status: 'True' }],
        interfaces: [{ name: 'default', interfaceName: 'eth0', mac: '52:54:00:00:00:01', ipAddresses: ['10.0.0.5'] }],
      }),
    );
    const sub = (verb: string, v: unknown) =>
      cluster.subresourceReads.set(`virtualmachineinstances/tailvm/web/${verb}`, v);
    sub('guestosinfo', {
      guestAgentVersion: '9.2.0',
      hostname: 'web.local',
      timezone: 'CET, 3600',
      os: { id: 'debian', name: 'Debian GNU/Linux', prettyName: 'Debian GNU/Linux 12 (bookworm)', machine: 'x86_64' },
    });
    sub('userlist', { items: [{ userName: 'admin', domain: 'CORP', loginTime: 1764583200.5 }] });
    sub('filesystemlist', {
      items: [{ diskName: 'sda1', mountPoint: '/data', fileSystemType: 'xfs', usedBytes: 10, totalBytes: 100 }],
    });
    const info = await guestInfo(services.deps, 'tailvm', 'web');
    expect(info).toMatchObject({
      hostname: 'web.local',
      timezone: { name: 'CET', offsetSeconds: 3600 },
      os: { id: 'debian', prettyName: 'Debian GNU/Linux 12 (bookworm)', versionId: '' },
      users: [{ name: 'admin', domain: 'CORP', loginTime: '2025-12-01T10:00:00.500Z' }],
      filesystems: [{ mountpoint: '/data', type: 'xfs', usedBytes: 10, totalBytes: 100, disks: ['sda1'] }],
      interfaces: [{ name: 'eth0', mac: '52:54:00:00:00:01', ips: ['10.0.0.5'] }],
    });
    sub('userlist', new CorralError('BAD_GATEWAY', 'VMI does not have guest agent connected'));
    await expect(guestInfo(services.deps, 'tailvm', 'web')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      problem: 'no-agent',
    });
    services.close();
  });
});
