/**
 * Guest info and events through /api on the embedded cluster (api.md "Guest info"): the agent's full report for a
 * Fedora guest, 503 with the reason for a guest without an agent and for a stopped VM, 404; events newest first
 * with a failed import's Warning, the type filter and its 400; the live feed (observe.eventsLive) pushing a start's
 * events and ending when its caller goes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appRouter } from '@/server/routers/_app';
import type { GuestInfo, VmEvent, VmEventsLiveMessage } from '@/server/schemas/vm-observe';
import { createCallerFactory, createContextInner } from '@/server/trpc';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  await Promise.all([
    create('agent-vm', { containerDisk: 'quay.io/containerdisks/fedora:42' }),
    create('noagent-vm', { image: 'cirros' }),
    create('off-vm', { containerDisk: 'quay.io/containerdisks/fedora:42' }, false),
    create('bad-import', { import: 'https://images.corral.invalid/disk.qcow2', disk: '2G' }, false),
  ]);
  await Promise.all(['agent-vm', 'noagent-vm'].map(running));
}, 60_000);
afterAll(async () => {
  await h?.close();
});

type Dict = Record<string, unknown>;
const errorOf = (r: { body: unknown }) => (r.body as { error: string }).error;

async function create(name: string, source: Dict, start = true): Promise<void> {
  const r = await h.post('/api/vms', { name, cpu: 1, mem: '1G', start, ...source });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
}
const status = async (vm: string) => ((await h.get(`/api/vms/tailvm/${vm}/row`)).body as { status: string }).status;
const running = (vm: string) => eventually(async () => (await status(vm)) === 'Running', 30_000, `${vm} running`);

describe('GET /api/vms/{ns}/{name}/guestinfo', () => {
  it('answers the guest agent report of a running Fedora guest', async () => {
    const r = await eventually(
      async () => {
        const g = await h.get('/api/vms/tailvm/agent-vm/guestinfo');
        return g.status === 200 ? g : undefined;
      },
      30_000,
      'agent connected',
    );
    const info = r.body as GuestInfo;
    expect(info.os).toMatchObject({
      id: 'fedora',
      name: 'Fedora Linux',
      prettyName: 'Fedora Linux 42 (Cloud Edition)',
      versionId: '42',
      kernelRelease: expect.stringContaining('fc42'),
      machine: 'x86_64',
    });
    expect(info.hostname).toBe('agent-vm');
    expect(info.agentVersion).toMatch(/^\d+\.\d+/);
    expect(info.timezone).toEqual({ name: 'UTC', offsetSeconds: 0 });
    expect(info.users).toEqual([{ name: 'fedora', loginTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(info.filesystems).toHaveLength(1);
    const root = info.filesystems[0]!;
    expect(root).toMatchObject({ mountpoint: '/', type: 'btrfs', disks: ['vda4'] });
    expect(root.usedBytes).toBeGreaterThan(0);
    expect(root.totalBytes).toBeGreaterThan(root.usedBytes);
    expect(info.interfaces.length).toBeGreaterThan(0);
    expect(info.interfaces[0]).toMatchObject({ mac: expect.stringMatching(/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i) });
    expect(info.interfaces[0]!.ips.length).toBeGreaterThan(0);
  });

  it('is 503 naming the missing agent for a guest without one', async () => {
    const r = await h.get('/api/vms/tailvm/noagent-vm/guestinfo');
    expect(r.status).toBe(503);
    expect(errorOf(r)).toMatch(/guest agent .* is not connected/);
  });

  it('is 503 saying the VM is not running for a stopped VM', async () => {
    const r = await h.get('/api/vms/tailvm/off-vm/guestinfo');
    expect(r.status).toBe(503);
    expect(errorOf(r)).toMatch(/is not running \(Stopped\)/);
  });

  it('is 404 for a VM that does not exist, 400 for a bad name', async () => {
    const r = await h.get('/api/vms/tailvm/nope/guestinfo');
    expect(r.status).toBe(404);
    expect(errorOf(r)).toContain('nope');
    expect((await h.get('/api/vms/tailvm/Bad_Name/guestinfo')).status).toBe(400);
    expect((await h.get('/api/vms/tailvm/agent-vm/guestinfo?verbose=1')).status).toBe(400);
  });
});

describe('GET /api/vms/{ns}/{name}/events', () => {
  const events = async (vm: string, query = '') => {
    const r = await h.get(`/api/vms/tailvm/${vm}/events${query}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body as VmEvent[];
  };

  it("lists the VM's, VMI's and launcher pod's events, newest first", async () => {
    const list = await eventually(async () => {
      const l = await events('agent-vm');
      return l.some((e) => e.object.kind === 'VirtualMachineInstance' && e.reason === 'Started') ? l : undefined;
    });
    const kinds = new Set(list.map((e) => e.object.kind));
    expect(kinds).toContain('VirtualMachine');
    expect(kinds).toContain('VirtualMachineInstance');
    expect(kinds).toContain('Pod');
    expect(
      list.filter((e) => e.object.kind === 'Pod').every((e) => e.object.name.startsWith('virt-launcher-agent-vm-')),
    ).toBe(true);
    const times = list.map((e) => Date.parse(e.time));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    for (const e of list) {
      expect(e).toMatchObject({ id: expect.any(String), reason: expect.any(String), count: expect.any(Number) });
      expect(['Normal', 'Warning']).toContain(e.type);
    }
    // Another VM's events are not mixed in.
    expect(list.some((e) => e.object.name.includes('noagent-vm'))).toBe(false);
  });

  it("includes a failed import's Warning from its DataVolume, and filters by type", async () => {
    // CDI retries a failing import: one Warning whose count grows (ImportFailed only once it gives up).
    const warning = await eventually(
      async () =>
        (await events('bad-import')).find((e) => e.type === 'Warning' && e.object.kind === 'DataVolume' && e.count > 1),
      30_000,
      'import warning',
    );
    expect(warning.object).toEqual({ kind: 'DataVolume', name: 'bad-import-disk' });
    expect(warning.message).toMatch(/images\.corral\.invalid: no such host/);
    expect(Date.parse(warning.firstTime ?? warning.time)).toBeLessThanOrEqual(Date.parse(warning.time));
    const warnings = await events('bad-import', '?type=Warning');
    expect(warnings.length).toBeGreaterThan(0);
    expect(warnings.every((e) => e.type === 'Warning')).toBe(true);
    const normal = await events('bad-import', '?type=Normal');
    expect(normal.every((e) => e.type === 'Normal')).toBe(true);
    expect(normal.some((e) => e.id === warning.id)).toBe(false);
    expect(normal.length + warnings.length).toBe((await events('bad-import')).length);
  });

  it('refuses another type with 400 naming the allowed ones, 404 for a missing VM', async () => {
    const r = await h.get('/api/vms/tailvm/agent-vm/events?type=Error');
    expect(r.status).toBe(400);
    expect(errorOf(r)).toMatch(/type: must be one of Normal, Warning/);
    expect((await h.get('/api/vms/tailvm/nope/events')).status).toBe(404);
    expect((await h.get('/api/vms/tailvm/agent-vm/events?limit=5')).status).toBe(400);
  });
});

describe('observe.eventsLive', () => {
  it("pushes a start's events as they happen and ends when the caller goes", async () => {
    // The caller's signal is what the SSE transport aborts when the browser goes.
    const ac = new AbortController();
    const live = createCallerFactory(appRouter)(
      createContextInner({
        services: h.corral.services,
        identity: { login: 'alice', name: 'Alice', admin: true, enforced: true },
      }),
      { signal: ac.signal },
    );
    const got: VmEventsLiveMessage[] = [];
    const stream = await live.observe.eventsLive({ namespace: 'tailvm', name: 'off-vm' });
    const pump = (async () => {
      for await (const m of stream) got.push(m);
    })();
    pump.catch(() => undefined); // awaited below; a failure fails the test there
    await eventually(() => got[0]?.kind === 'resync', 5000, 'resync');
    expect((await h.post('/api/vms/tailvm/off-vm/start')).status).toBe(200);
    const started = await eventually(
      () =>
        got.find(
          (m) => m.kind === 'event' && m.event.object.kind === 'VirtualMachineInstance' && m.event.reason === 'Started',
        ),
      20_000,
      'Started event pushed',
    );
    expect(started.kind === 'event' && started.event.object.name).toBe('off-vm');
    // Only this VM's objects arrive.
    expect(got.every((m) => m.kind === 'resync' || m.event.object.name.includes('off-vm'))).toBe(true);
    ac.abort();
    await pump; // the stream ends: the watch behind it is closed
  });
});
