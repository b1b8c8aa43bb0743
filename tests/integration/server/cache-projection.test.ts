/**
 * The watch cache keeps a projection of each object (src/server/cluster/projection.ts, docs/scale.md "Memory"):
 * a VM written with managedFields and a last-applied copy is served in rows, tree and hardware view exactly as
 * before, its raw object (`GET /api/vms/{ns}/{name}`, the YAML view) still has everything the apiserver stores, and
 * the cache's copy lacks only the dropped parts. One embedded cluster and Corral for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resourceKey } from '@/sim/store/types';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
const VMS = resourceKey('kubevirt.io', 'virtualmachines');
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
  const created = await h.post('/api/vms', { name: 'proj-vm', cpu: 2, mem: '2G', start: false, image: 'cirros' });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  // What kubectl apply and other managers leave on an object (the embedded apiserver keeps no managedFields itself).
  h.sim.store.mutate(VMS, 'tailvm', 'proj-vm', (o) => {
    o.metadata.managedFields = [
      { manager: 'kubectl-client-side-apply', operation: 'Update', fieldsType: 'FieldsV1', fieldsV1: { 'f:spec': {} } },
    ];
    o.metadata.annotations = { ...o.metadata.annotations, [LAST_APPLIED]: JSON.stringify({ kind: 'VirtualMachine' }) };
  });
  await eventually(
    () =>
      h.corral.cluster.cache.get('VirtualMachine', 'tailvm', 'proj-vm')?.metadata.resourceVersion ===
      h.sim.store.get(VMS, 'tailvm', 'proj-vm')?.metadata.resourceVersion,
    10_000,
    'the cache has the written VM',
  );
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('a VM in the projected cache', () => {
  it('the cache copy lacks managedFields and the last-applied copy, keeps spec, status and other annotations', () => {
    const stored = h.sim.store.get(VMS, 'tailvm', 'proj-vm')!;
    const cached = h.corral.cluster.cache.get('VirtualMachine', 'tailvm', 'proj-vm')!;
    expect(cached.metadata.managedFields).toBeUndefined();
    expect(cached.metadata.annotations?.[LAST_APPLIED]).toBeUndefined();
    const { [LAST_APPLIED]: _dropped, ...kept } = stored.metadata.annotations ?? {};
    expect(cached.metadata.annotations).toEqual(kept);
    expect(cached.metadata.labels).toEqual(stored.metadata.labels);
    expect(cached.spec).toEqual(stored.spec);
    expect(cached.status).toEqual(stored.status);
  });

  it('GET /api/vms/{ns}/{name} (the YAML view) answers the object as stored, read from the apiserver', async () => {
    const r = await h.get('/api/vms/tailvm/proj-vm');
    expect(r.status).toBe(200);
    const body = r.body as { metadata: { managedFields?: unknown[]; annotations?: Record<string, string> } };
    expect(body.metadata.managedFields).toHaveLength(1);
    expect(body.metadata.annotations?.[LAST_APPLIED]).toBe(JSON.stringify({ kind: 'VirtualMachine' }));
    expect((await h.get('/api/vms/tailvm/no-such-vm')).status).toBe(404);
  });

  it('rows and the hardware view show it as before: cpu, memory, disk, status', async () => {
    const rows = (await h.get('/api/vms')).body as { name: string; cpu: number; mem: string; status: string }[];
    const row = rows.find((x) => x.name === 'proj-vm');
    expect(row).toMatchObject({ cpu: 2, status: 'Stopped' });
    const hw = await h.get('/api/vms/tailvm/proj-vm/hardware');
    expect(hw.status, JSON.stringify(hw.body)).toBe(200);
    expect(hw.body).toMatchObject({
      cpu: { vcpus: 2 },
      memory: { size: '2Gi' },
      disks: [{ name: 'rootdisk', kind: 'containerDisk', bus: 'virtio' }],
      options: { runStrategy: 'Halted' },
    });
  });
});
