/**
 * One vmid per VM, two front doors: the `vmid` of every `/api/vms` row is the id `/api2/json/cluster/resources`
 * reports for the same VM — for a labelled VM, an unlabelled one (the crc32 fallback), two unlabelled VMs whose
 * fallbacks collide, and a label that takes an unlabelled VM's fallback id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LABEL_VMID } from '@/server/domain/labels';
import { fallbackVmid } from '@/server/domain/vmids';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let admin: ReturnType<typeof px>;
beforeAll(async () => {
  h = await startProxmoxHarness();
  admin = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
});
afterAll(async () => {
  await h?.close();
});

/** Two DNS-1123 names whose fallback ids collide (found by brute force; the birthday bound keeps it short). */
function collidingNames(): [string, string] {
  const seen = new Map<number, string>();
  for (let i = 0; i < 2_000_000; i++) {
    const name = `vm-${i.toString(36)}`;
    const id = fallbackVmid(name);
    const other = seen.get(id);
    if (other) return [other, name];
    seen.set(id, name);
  }
  throw new Error('no collision found');
}

const make = (name: string, labels: Record<string, string> = {}) =>
  h.corral.cluster.create('VirtualMachine', {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: 'tailvm', labels },
    spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
  });

const label = async (name: string) =>
  (await h.corral.cluster.fetch('VirtualMachine', 'tailvm', name))?.metadata.labels?.[LABEL_VMID];

async function restIds(): Promise<Map<string, number | null>> {
  const res = await fetch(`${h.corral.url}/api/vms`);
  expect(res.status).toBe(200);
  const rows = (await res.json()) as { namespace: string; name: string; vmid: number | null }[];
  return new Map(rows.map((r) => [r.name, r.vmid]));
}

async function proxmoxIds(): Promise<Map<string, number>> {
  const rows = (await admin.get('/cluster/resources', { type: 'vm' })).body.data as { vmid: number; name: string }[];
  return new Map(rows.map((r) => [r.name, r.vmid]));
}

/** Both doors list exactly `names` (plus whatever else exists) with the same vmid each, and no vmid twice. */
async function expectAgreement(names: string[]): Promise<Map<string, number>> {
  await expect
    .poll(
      async () => {
        const [rest, pve] = [await restIds(), await proxmoxIds()];
        return names.every((n) => rest.has(n)) && [...rest].every(([n, id]) => pve.get(n) === id);
      },
      { timeout: 10_000 },
    )
    .toBe(true);
  const [rest, pve] = [await restIds(), await proxmoxIds()];
  expect([...rest.keys()].sort()).toEqual([...pve.keys()].sort());
  for (const [name, id] of rest) {
    expect(typeof id, `vmid of ${name}`).toBe('number');
    expect(id, `vmid of ${name}`).toBe(pve.get(name));
  }
  expect(new Set(rest.values()).size).toBe(rest.size);
  return pve;
}

describe('vmid in /api/vms and /api2/json', () => {
  it('is the same id for every VM: labelled, unlabelled, and both sides of a collision', async () => {
    // Created through the Proxmox API: labelled with its vmid.
    const created = await admin.post('/nodes/corral-1/qemu', { vmid: 4242, name: 'pve-made', memory: 256 });
    expect((await waitTask(admin, created.body.data as string)).exitstatus).toBe('OK');

    // Unlabelled: the crc32 fallback, on both sides, and nothing is persisted.
    await make('lone');
    let ids = await expectAgreement(['pve-made', 'lone']);
    expect(ids.get('pve-made')).toBe(4242);
    expect(ids.get('lone')).toBe(fallbackVmid('lone'));
    expect(await label('lone')).toBeUndefined();

    // Two unlabelled VMs whose fallbacks collide: the first keeps it, the newcomer gets the lowest free id and
    // that id is persisted as its label.
    const [first, second] = collidingNames();
    await make(first);
    await expectAgreement([first]);
    await make(second);
    await expect.poll(() => label(second), { timeout: 10_000 }).toMatch(/^\d+$/);
    ids = await expectAgreement([first, second]);
    expect(ids.get(first)).toBe(fallbackVmid(first));
    expect(ids.get(second)).toBe(Number(await label(second)));
    expect(ids.get(second)).not.toBe(fallbackVmid(second));

    // A label that takes an unlabelled VM's fallback id: the label wins, the holder moves (and is labelled).
    await make('holder');
    await expectAgreement(['holder']);
    const taken = fallbackVmid('holder');
    await make('claimant', { [LABEL_VMID]: String(taken) });
    await expect.poll(() => label('holder'), { timeout: 10_000 }).toMatch(/^\d+$/);
    ids = await expectAgreement(['holder', 'claimant']);
    expect(ids.get('claimant')).toBe(taken);
    expect(ids.get('holder')).toBe(Number(await label('holder')));
    expect(ids.get('holder')).not.toBe(taken);

    // The cached list and the single-row read agree too.
    const one = await fetch(`${h.corral.url}/api/vms/tailvm/holder/row`);
    expect(((await one.json()) as { vmid: number }).vmid).toBe(ids.get('holder'));
  });
});
