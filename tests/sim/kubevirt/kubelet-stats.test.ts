/**
 * The kubelets' stats endpoints of the embedded cluster (through the apiserver's node proxy): the Summary API's
 * per-pod network counters and cAdvisor's disk counters — cumulative, growing with the pod's load, per node.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawGet, startHarness, type Harness, type Wire } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'demo', speed: 50 });
});
afterAll(async () => {
  await h?.cluster.close();
});

const text = async (path: string) => {
  const res = await fetch(`${h.url}${path}`, { headers: { Authorization: 'Bearer sim-admin-token' } });
  return { status: res.status, body: await res.text() };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `namespace/pod` → summed reads/writes, skipping the pod cgroup's own line. */
function diskCounters(body: string): Map<string, { reads: number; writes: number }> {
  const out = new Map<string, { reads: number; writes: number }>();
  for (const line of body.split('\n')) {
    const m =
      /^container_fs_(reads|writes)_bytes_total\{container="([^"]*)".*namespace="([^"]*)",pod="([^"]*)"\} (\S+) \d+$/.exec(
        line,
      );
    if (!m || m[2] === '') continue;
    const key = `${m[3]}/${m[4]}`;
    const e = out.get(key) ?? { reads: 0, writes: 0 };
    e[m[1] === 'reads' ? 'reads' : 'writes'] += Number(m[5]);
    out.set(key, e);
  }
  return out;
}

describe('kubelet stats through the node proxy', () => {
  it('Summary API: the running pods of that node with growing network counters', async () => {
    const first = await rawGet(h, '/api/v1/nodes/corral-1/proxy/stats/summary');
    expect(first.status).toBe(200);
    expect(first.json.node.nodeName).toBe('corral-1');
    const launchers = (first.json.pods as Wire[]).filter((p) => String(p.podRef.name).startsWith('virt-launcher-'));
    expect(launchers.length).toBeGreaterThan(0);
    const pods = (await rawGet(h, '/api/v1/pods')).json.items as Wire[];
    for (const p of first.json.pods as Wire[]) {
      const pod = pods.find((x) => x.metadata.name === p.podRef.name && x.metadata.namespace === p.podRef.namespace);
      expect(pod?.spec.nodeName).toBe('corral-1');
      expect(p.network.interfaces[0]).toMatchObject({ name: 'eth0', rxBytes: p.network.rxBytes });
    }
    const web = launchers[0]!;
    expect(web.containers.map((c: Wire) => c.name)).toContain('compute');
    await sleep(2100); // the Summary's timestamps are whole seconds
    const second = await rawGet(h, '/api/v1/nodes/corral-1/proxy/stats/summary');
    const again = (second.json.pods as Wire[]).find((p) => p.podRef.uid === web.podRef.uid)!;
    expect(Date.parse(again.network.time)).toBeGreaterThan(Date.parse(web.network.time));
    expect(again.network.rxBytes).toBeGreaterThan(web.network.rxBytes);
    expect(again.network.txBytes).toBeGreaterThan(web.network.txBytes);
    // Plausible for a VM: between 100 B/s and 100 MB/s.
    const rate =
      (again.network.rxBytes - web.network.rxBytes) /
      ((Date.parse(again.network.time) - Date.parse(web.network.time)) / 1000);
    expect(rate).toBeGreaterThan(100);
    expect(rate).toBeLessThan(100e6);
  });

  it('cAdvisor: disk counters per container and the pod cgroup, valid exposition text, growing', async () => {
    const first = await text('/api/v1/nodes/corral-2/proxy/metrics/cadvisor');
    expect(first.status).toBe(200);
    expect(first.body).toContain('# TYPE container_fs_reads_bytes_total counter');
    expect(first.body).toContain('# TYPE container_fs_writes_bytes_total counter');
    expect(first.body).toMatch(/container_fs_reads_bytes_total\{container="compute",device="[^"]+",/);
    // The pod cgroup line equals the sum of its containers.
    const podLine = /container_fs_reads_bytes_total\{container="",[^}]*pod="(virt-launcher-db-[^"]+)"\} (\d+)/.exec(
      first.body,
    );
    expect(podLine).not.toBeNull();
    const before = diskCounters(first.body);
    expect(before.get(`tailvm/${podLine![1]}`)?.reads).toBe(Number(podLine![2]));
    await sleep(300);
    const after = diskCounters((await text('/api/v1/nodes/corral-2/proxy/metrics/cadvisor')).body);
    const key = `tailvm/${podLine![1]}`;
    expect(after.get(key)!.reads).toBeGreaterThan(before.get(key)!.reads);
    expect(after.get(key)!.writes).toBeGreaterThan(before.get(key)!.writes);
  });

  it("Summary API: a container pod's claim-backed volumes with used and capacity bytes; a VM's disks are not listed", async () => {
    const pods: Wire[] = [];
    for (const node of ['corral-1', 'corral-2', 'corral-3'])
      pods.push(...((await rawGet(h, `/api/v1/nodes/${node}/proxy/stats/summary`)).json.pods as Wire[]));
    for (const p of pods.filter((x) => String(x.podRef.name).startsWith('virt-launcher-')))
      expect(p.volume).toBeUndefined();
    const cts = pods.filter((x) => Array.isArray(x.volume) && x.volume.length > 0);
    expect(cts.length).toBeGreaterThan(0); // the demo fleet's containers
    for (const p of cts) {
      const v = (p.volume as Wire[])[0]!;
      const claim = (
        await rawGet(h, `/api/v1/namespaces/${p.podRef.namespace}/persistentvolumeclaims/${v.pvcRef.name}`)
      ).json;
      expect(claim.metadata.labels['corral.dev/ct-name']).toBe(p.podRef.name);
      expect(v.capacityBytes).toBeGreaterThan(0);
      expect(v.usedBytes).toBeGreaterThanOrEqual(0);
      expect(v.usedBytes + v.availableBytes).toBe(v.capacityBytes);
    }
  });

  it('a paused VM moves (almost) nothing; a busy one much more', async () => {
    // Demo fleet: ci-runner is paused on corral-2, db runs there.
    const read = async () => diskCounters((await text('/api/v1/nodes/corral-2/proxy/metrics/cadvisor')).body);
    const a = await read();
    await sleep(500);
    const b = await read();
    const growth = (prefix: string) => {
      const key = [...b.keys()].find((k) => k.startsWith(`tailvm/virt-launcher-${prefix}-`))!;
      return b.get(key)!.reads - (a.get(key)?.reads ?? 0);
    };
    expect(growth('ci-runner')).toBe(0);
    expect(growth('db')).toBeGreaterThan(0);
  });

  it('answers 404 for an unknown node and 405 for a write', async () => {
    const missing = await rawGet(h, '/api/v1/nodes/nope/proxy/stats/summary');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ kind: 'Status', reason: 'NotFound', message: 'nodes "nope" not found' });
    const res = await fetch(`${h.url}/api/v1/nodes/corral-1/proxy/stats/summary`, {
      method: 'POST',
      headers: { Authorization: 'Bearer sim-admin-token' },
    });
    expect(res.status).toBe(405);
  });
});
