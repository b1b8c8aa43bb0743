/**
 * Power actions against the embedded cluster's KubeVirt controllers: a VM created stopped reaches Running with a
 * node and an IP after start, pauses and resumes, live-migrates as a task, and stops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 50 });
});
afterAll(async () => {
  await h?.close();
});

interface Row {
  name: string;
  status: string;
  running: boolean;
  ip: string;
  node: string;
}
const row = async (name: string) => (await h.get(`/api/vms/tailvm/${name}/row`)).body as Row;

describe('lifecycle', () => {
  it('start → Running with node and IP; pause/unpause; migrate as a task; stop', async () => {
    expect((await h.post('/api/vms', { name: 'life', image: 'cirros', mem: '1G', cpu: 1 })).status).toBe(201);
    expect((await row('life')).status).toBe('Stopped');
    expect(await h.post('/api/vms/tailvm/life/start')).toMatchObject({ status: 200, body: { status: 'ok' } });
    const running = await eventually(
      async () => {
        const r = await row('life');
        return r.status === 'Running' && r.ip && r.node ? r : undefined;
      },
      30_000,
      'Running with node and IP',
    );
    expect(running.running).toBe(true);
    expect((await h.post('/api/vms/tailvm/life/start')).status).toBe(409);

    expect((await h.post('/api/vms/tailvm/life/pause')).status).toBe(200);
    await eventually(async () => (await row('life')).status === 'Paused', 20_000, 'Paused');
    expect((await h.post('/api/vms/tailvm/life/pause')).status).toBe(409);
    expect((await h.post('/api/vms/tailvm/life/unpause')).status).toBe(200);
    await eventually(async () => (await row('life')).status === 'Running', 20_000, 'Running again');

    const nodes = ((await h.get('/api/nodes')).body as { name: string; cpuVendor: string }[]).filter(
      (n) => n.name !== running.node,
    );
    const source = ((await h.get('/api/nodes')).body as { name: string; cpuVendor: string }[]).find(
      (n) => n.name === running.node,
    );
    const target = nodes.find((n) => n.cpuVendor === source?.cpuVendor);
    const migrate = await h.post('/api/vms/tailvm/life/migrate', target ? { targetNode: target.name } : {});
    if (migrate.status === 409) {
      // The VM's storage may not be live-migratable in this cluster: the refusal must say why.
      expect((migrate.body as { error: string }).error).toMatch(/cannot be live-migrated|not running/);
    } else {
      expect(migrate.status).toBe(202);
      const { task } = migrate.body as { task: string };
      const done = await eventually(
        async () => {
          const t = (await h.get(`/api/tasks/${task}`)).body as { status: string };
          return t.status !== 'running' ? t : undefined;
        },
        30_000,
        'migration task end',
      );
      if (target) {
        expect(done, JSON.stringify(done)).toMatchObject({ status: 'done' });
        expect((await row('life')).node).toBe(target.name);
      } else {
        // No other node shares the source's CPU vendor: KubeVirt cannot place the target, and the task says so.
        expect(done).toMatchObject({ status: 'error', error: expect.stringContaining('failed') });
      }
    }

    expect((await h.post('/api/vms/tailvm/life/stop')).status).toBe(200);
    await eventually(async () => (await row('life')).status === 'Stopped', 30_000, 'Stopped');
    expect((await h.post('/api/vms/tailvm/life/pause')).status).toBe(409);
  });
});
