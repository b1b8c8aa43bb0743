/**
 * Real usage numbers: a running VM's `cpu`/`mem` in qemu rows, status/current and /cluster/resources come from its
 * virt-launcher pod's `compute` container in metrics.k8s.io, node `cpu`/`memory.used` from NodeMetrics — all read
 * from the cluster layer's sample, and zeros (never an error) once metrics-server goes away.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quantityToNumber } from '@/server/domain/quantity';
import { ADMIN_SECRET, px, startProxmoxHarness, waitTask, type ProxmoxHarness } from './harness';

interface MetricsItem {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  usage?: { cpu: string; memory: string };
  containers?: { name: string; usage: { cpu: string; memory: string } }[];
}

let h: ProxmoxHarness;
beforeAll(async () => {
  h = await startProxmoxHarness();
});
afterAll(async () => {
  await h?.close();
});

const G = 1024 ** 3;
const metricsList = async (path: string) =>
  (
    await h.corral.cluster.http.request<{ items: MetricsItem[] }>({
      method: 'GET',
      path: `/apis/metrics.k8s.io/v1beta1/${path}`,
      what: 'test read',
    })
  ).items;

async function setMetricsServer(on: boolean): Promise<void> {
  const res = await fetch(`${h.sim.url}/_sim/settings`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ metricsServer: on }),
  });
  expect(res.status).toBe(200);
}

/**
 * Reads the cluster, takes a fresh Corral sample, asks Corral, then reads the cluster again — until both cluster reads
 * agree, so the answer is known to come from a sample of exactly that reading.
 */
async function steadyReading<C, A>(
  readCluster: () => Promise<C>,
  ask: () => Promise<A>,
): Promise<{ cluster: C; answer: A }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const before = await readCluster();
    await h.corral.cluster.metrics.sampleNow();
    const answer = await ask();
    const after = await readCluster();
    if (JSON.stringify(before) === JSON.stringify(after)) return { cluster: after, answer };
  }
  throw new Error('the cluster metrics reading never held still across one request');
}

describe('usage from metrics.k8s.io', () => {
  it('fills VM and node cpu/mem from the sample, and falls back to zeros without metrics-server', async () => {
    const api = px(h.url, { token: `root@pam!ci=${ADMIN_SECRET}` });
    const created = await api.post('/nodes/corral-1/qemu', {
      vmid: 700,
      name: 'busy',
      memory: 1024,
      cores: 2,
      scsi0: 'local-lvm:1',
    });
    expect((await waitTask(api, created.body.data as string)).exitstatus).toBe('OK');
    expect(
      (await waitTask(api, (await api.post('/nodes/corral-1/qemu/700/status/start')).body.data as string)).exitstatus,
    ).toBe('OK');
    await expect
      .poll(
        async () => ((await api.get('/nodes/corral-1/qemu/700/status/current')).body.data as { status: string }).status,
        { timeout: 20_000 },
      )
      .toBe('running');
    // The launcher pod must be Running in the cache and in a sample; then every read comes from memory.
    await expect
      .poll(
        async () => {
          await h.corral.cluster.metrics.sampleNow();
          return h.corral.services.metrics.vm('tailvm', 'busy');
        },
        { timeout: 20_000 },
      )
      .not.toBeNull();

    // The embedded metrics-server's readings move every simulated sample, so each comparison takes the cluster's
    // reading, resamples, answers the Proxmox request and reads the cluster again; a window where the reading moved
    // is retried rather than compared against a newer sample.
    const podUsage = async () => {
      const launcher = (await metricsList('namespaces/tailvm/pods')).find(
        (p) => p.metadata.labels?.['kubevirt.io'] === 'virt-launcher' && p.metadata.name.includes('busy'),
      );
      return launcher?.containers?.find((c) => c.name === 'compute')?.usage;
    };
    const vmReading = await steadyReading(
      podUsage,
      async () => (await api.get('/nodes/corral-1/qemu/700/status/current')).body.data as Record<string, number>,
    );
    const compute = vmReading.cluster;
    expect(compute).toBeDefined();
    const cores = quantityToNumber(compute?.cpu);
    const bytes = quantityToNumber(compute?.memory);
    expect(cores).toBeGreaterThan(0);

    const status = vmReading.answer;
    const node =
      ((await api.get('/cluster/resources', { type: 'vm' })).body.data as { vmid: number; node: string }[]).find(
        (r) => r.vmid === 700,
      )?.node ?? '';
    expect(node).not.toBe('');
    expect(status.cpu).toBeCloseTo(Math.min(1, cores / 2), 6);
    expect(status.cpu).toBeGreaterThan(0);
    expect(status.mem).toBe(Math.min(G, Math.round(bytes)));
    expect(status.mem).toBeGreaterThan(0);

    // Rows and resources follow each new sample: prime /cluster/resources' row cache, let the reading move on, and
    // the next answer must carry the new sample's figures, the same as status/current.
    await api.get('/cluster/resources', { type: 'vm' });
    await expect
      .poll(async () => JSON.stringify(await podUsage()), { timeout: 20_000 })
      .not.toBe(JSON.stringify(compute));
    const rows = await steadyReading(podUsage, async () => {
      const current = (await api.get('/nodes/corral-1/qemu/700/status/current')).body.data as Record<string, number>;
      const listRow = ((await api.get(`/nodes/${node}/qemu`)).body.data as Record<string, number>[]).find(
        (r) => r.vmid === 700,
      );
      const resource = (
        (await api.get('/cluster/resources', { type: 'vm' })).body.data as Record<string, number>[]
      ).find((r) => r.vmid === 700);
      return { current, listRow, resource };
    });
    expect(rows.answer.listRow).toMatchObject({ cpu: rows.answer.current.cpu, mem: rows.answer.current.mem });
    expect(rows.answer.resource).toMatchObject({ cpu: rows.answer.current.cpu, mem: rows.answer.current.mem });
    expect(rows.answer.current.mem).toBe(Math.min(G, Math.round(quantityToNumber(rows.cluster?.memory))));
    expect(rows.answer.current.cpu).toBeCloseTo(Math.min(1, quantityToNumber(rows.cluster?.cpu) / 2), 6);

    // Node status: NodeMetrics usage over allocatable.
    const nodeReading = await steadyReading(
      async () => (await metricsList('nodes')).find((n) => n.metadata.name === node),
      async () => ({
        status: (await api.get(`/nodes/${node}/status`)).body.data as {
          cpu: number;
          cpuinfo: { cpus: number };
          memory: { used: number };
        },
        row: ((await api.get('/cluster/resources', { type: 'node' })).body.data as Record<string, unknown>[]).find(
          (r) => r.node === node,
        ),
      }),
    );
    const nodeMetrics = nodeReading.cluster;
    expect(nodeMetrics).toBeDefined();
    const nodeStatus = nodeReading.answer.status;
    expect(nodeStatus.memory.used).toBe(Math.round(quantityToNumber(nodeMetrics?.usage?.memory)));
    expect(nodeStatus.cpu).toBeGreaterThan(0);
    expect(nodeStatus.cpu).toBeLessThanOrEqual(1);
    expect(nodeReading.answer.row?.cpu).toBe(nodeStatus.cpu);

    // metrics-server removed: the next sample empties the readings; requests still answer 200 with zeros.
    await setMetricsServer(false);
    expect(await h.corral.cluster.metrics.sampleNow()).toBe(false);
    expect(h.corral.services.metrics.sampledAt()).toBe(0);
    expect(h.corral.services.metrics.vm('tailvm', 'busy')).toBeNull();
    const blind = await api.get('/nodes/corral-1/qemu/700/status/current');
    expect(blind.status).toBe(200);
    expect(blind.body.data).toMatchObject({ status: 'running', cpu: 0, mem: 0 });
    expect(((await api.get(`/nodes/${node}/status`)).body.data as { cpu: number }).cpu).toBe(0);
    await setMetricsServer(true);
    expect(await h.corral.cluster.metrics.sampleNow()).toBe(true);
  }, 90_000);
});
