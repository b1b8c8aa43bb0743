/**
 * The Proxmox door and the cluster rate limiter: the cluster requests a Proxmox call makes (and the task it starts)
 * queue as that Proxmox user's (the token id), not as Corral's own background work, so fairness between users
 * holds for Proxmox clients too (src/server/cluster/rate-limiter.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentKubeCaller, SYSTEM_CALLER } from '@/server/cluster/rate-limiter';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

let h: ProxmoxHarness;
let api: ReturnType<typeof px>;
const callers: string[] = [];
beforeAll(async () => {
  h = await startProxmoxHarness();
  api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
  const limiter = h.corral.cluster.http.limiter;
  const acquire = limiter.acquire.bind(limiter);
  limiter.acquire = (user, signal) => {
    callers.push(user ?? currentKubeCaller());
    return acquire(user, signal);
  };
}, 60_000);
afterAll(async () => {
  await h?.close();
});

describe('Proxmox calls under the rate limiter', () => {
  it('a create and a start queue as the token, background work as Corral', async () => {
    const from = callers.length;
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 9401,
      name: 'rate-vm',
      memory: 512,
      scsi0: 'local-lvm:1',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    const start = await api.post('/nodes/corral-1/qemu/9401/status/start');
    expect((await waitTask(api, start.body.data as string)).exitstatus).toBe('OK');
    const mine = callers.slice(from);
    expect(mine.filter((c) => c === 'root@pam!ci').length).toBeGreaterThanOrEqual(2);
    // Everything else in that window is Corral's own (watches, journal, metrics), never another user's name.
    expect(mine.every((c) => c === 'root@pam!ci' || c === SYSTEM_CALLER)).toBe(true);
  }, 60_000);
});
