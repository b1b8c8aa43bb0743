/**
 * Proxmox `/pools` onto Corral's pools, driven by proxmoxer (both API generations: `?poolid=` with nested ids and
 * `/pools/{poolid}`): create, list, add and move members, the `pool` field and `type: pool` rows of
 * `/cluster/resources`, PVE's refusals (exists, already a member, not empty), and the same pools seen through
 * `/api/folders`.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ADMIN_SECRET, startProxmoxHarness, type ProxmoxHarness } from './harness';

const SCRIPT = fileURLToPath(new URL('./proxmoxer_pools.py', import.meta.url));
type Step = { step: string } & Record<string, unknown>;
type Row = Record<string, unknown>;

let h: ProxmoxHarness;
const vmids: number[] = [];

beforeAll(async () => {
  h = await startProxmoxHarness();
  for (const name of ['alpha', 'beta']) {
    const res = await fetch(`${h.corral.url}/api/vms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name, containerDisk: 'quay.io/containerdisks/fedora:40', cpu: 1, mem: '1Gi' }),
    });
    expect(res.status).toBe(201);
    const row = (await (await fetch(`${h.corral.url}/api/vms/tailvm/${name}/row`)).json()) as { vmid: number };
    vmids.push(row.vmid);
  }
  const ct = await fetch(`${h.corral.url}/api/cts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'gamma', image: 'docker.io/library/debian:bookworm' }),
  });
  expect(ct.status).toBe(201);
});
afterAll(async () => {
  await h?.close();
});

function run(): Promise<Step[]> {
  return new Promise((resolve, reject) => {
    const args = [SCRIPT, `127.0.0.1:${h.port}`, 'root@pam', 'ci', ADMIN_SECRET, String(vmids[0]), String(vmids[1])];
    execFile('/usr/bin/python3', args, { timeout: 60_000 }, (err, stdout, stderr) => {
      const steps = stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Step);
      if (err)
        reject(new Error(`proxmoxer pools script failed after ${steps.map((s) => s.step).join(' → ')}:\n${stderr}`));
      else resolve(steps);
    });
  });
}

it('serves pools to proxmoxer as PVE does, on the same folders /api/folders shows', async () => {
  const steps = await run();
  const at = (name: string) => steps.find((s) => s.step === name)!;
  const [a, b] = vmids;
  expect(at('create-again').error).toMatch(/^409 Conflict: create pool failed: pool 'web' already exists/);
  expect(at('bad-id').error).toMatch(/^400 Bad Request: Parameter verification failed\./);
  expect(at('list').pools).toEqual([{ poolid: 'web', comment: 'front end' }, { poolid: 'web/db' }]);

  const fresh = at('members-new').pool as [{ poolid: string; comment: string; members: Row[] }];
  expect(fresh).toHaveLength(1);
  expect(fresh[0]).toMatchObject({ poolid: 'web', comment: 'front end' });
  expect(fresh[0].members).toEqual([
    expect.objectContaining({
      id: `qemu/${a}`,
      type: 'qemu',
      vmid: a,
      name: 'alpha',
      node: expect.any(String),
      pool: 'web',
    }),
    expect.objectContaining({ type: 'lxc', name: 'gamma', pool: 'web', id: expect.stringMatching(/^lxc\/\d+$/) }),
  ]);
  const old = at('members-old').pool as { comment: string; members: Row[]; poolid?: string };
  expect(old.poolid).toBeUndefined();
  expect(old.members.map((m) => m.type)).toEqual(['qemu', 'lxc']);

  const vmRows = at('resources-vm').rows as Row[];
  expect(vmRows.find((r) => r.vmid === a)?.pool).toBe('web');
  expect(vmRows.find((r) => r.vmid === b)?.pool).toBe('web/db');
  expect(vmRows.find((r) => r.name === 'gamma')).toMatchObject({ type: 'lxc', pool: 'web' });
  expect(at('resources-pool').rows).toEqual([
    { id: 'pool/web', type: 'pool', pool: 'web' },
    { id: 'pool/web/db', type: 'pool', pool: 'web/db' },
  ]);

  expect(at('in-other-pool').error).toMatch(new RegExp(`^409 Conflict: VM ${a} is already a pool member`));
  const moved = at('moved') as unknown as { ct: number; web: Row[]; db: Row[] };
  expect(moved.web.map((m) => m.vmid)).toEqual([moved.ct]);
  expect(moved.db.map((m) => m.vmid).sort()).toEqual([a, b].sort());
  expect(at('delete-non-empty').error).toMatch(/^409 Conflict: delete pool failed: pool 'web\/db' is not empty/);
  expect(at('remove-absent').error).toMatch(new RegExp(`VM ${a} is not a member of pool 'web/db'`));
  expect(at('after-delete').pools).toEqual([{ poolid: 'web', comment: 'renamed front' }]);
  expect(at('empty').pools).toEqual([]);
  expect(at('missing').error).toMatch(/^404 Not Found: pool 'web' does not exist/);

  // Every step went through Corral's pools: the task journal shows them, and nothing is left behind.
  const folders = (await (await fetch(`${h.corral.url}/api/folders`)).json()) as { folders: unknown[] };
  expect(folders.folders).toEqual([]);
  const tasks = (await (await fetch(`${h.corral.url}/api/tasks`)).json()) as { action: string }[];
  expect(tasks.map((t) => t.action)).toEqual(
    expect.arrayContaining(['pool-create', 'pool-add', 'pool-remove', 'pool-delete']),
  );
});
