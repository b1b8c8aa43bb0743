/**
 * Cold sync in pages: the embedded apiserver answers `limit`/`continue` like a real one (src/sim/http/list-pages.ts)
 * and, where watch-list is not served, the watch cache reads its initial lists page by page (`listPageSize`), ending
 * with every object and watching from the first page's resourceVersion, so a change made while the pages were read
 * is not lost.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeCluster, loadKubeConfig } from '@/server/cluster';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { eventually } from './harness';

const FLEET = 150;
let sim: EmbeddedCluster;
const seen: { method: string; path: string; query: string }[] = [];
const auth = { authorization: 'Bearer sim-admin-token' };

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: FLEET, speed: 50 });
  const decide = sim.faults.decide.bind(sim.faults);
  sim.faults.decide = (path, request) => {
    seen.push({ method: request?.method ?? '', path, query: request?.query?.toString() ?? '' });
    return decide(path, request);
  };
}, 60_000);
afterAll(async () => {
  await sim?.close();
});

interface List {
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: { metadata: { namespace: string; name: string } }[];
}

const list = async (query: string) => {
  const res = await fetch(`${sim.url}/apis/kubevirt.io/v1/virtualmachines?${query}`, { headers: auth });
  return { status: res.status, body: (await res.json()) as List & { message?: string } };
};

describe('paginated lists on the embedded apiserver', () => {
  it('limit/continue pages cover the whole list once, in order, under the first page’s resourceVersion', async () => {
    const whole = (await list('')).body;
    expect(whole.items).toHaveLength(FLEET);
    expect(whole.metadata.continue).toBeUndefined();
    const names: string[] = [];
    let token = '';
    let pages = 0;
    let rv = '';
    do {
      const { status, body } = await list(`limit=40${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expect(status).toBe(200);
      pages++;
      rv ||= body.metadata.resourceVersion;
      expect(body.metadata.resourceVersion).toBe(rv);
      expect(body.items.length).toBeLessThanOrEqual(40);
      names.push(...body.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`));
      if (body.metadata.continue) expect(body.metadata.remainingItemCount).toBe(FLEET - names.length);
      token = body.metadata.continue ?? '';
    } while (token);
    expect(pages).toBe(Math.ceil(FLEET / 40));
    expect(names).toEqual(whole.items.map((i) => `${i.metadata.namespace}/${i.metadata.name}`));
  });

  it('a bad limit or continue token is a 400 naming it', async () => {
    const limit = await list('limit=ten');
    expect(limit.status).toBe(400);
    expect(limit.body.message).toMatch(/^limit: Invalid value/);
    const token = await list('limit=5&continue=not-a-token');
    expect(token.status).toBe(400);
    expect(token.body.message).toMatch(/continue key is not valid/);
  });
});

describe('the watch cache lists in pages where watch-list is not served', () => {
  it('syncs every VM through pages of 40 and then follows changes from the first page’s version', async () => {
    // An apiserver without the WatchList gate refuses the cache's watch-list (422); it falls back to pages.
    sim.context.settings.watchList = false;
    const from = seen.length;
    const cluster = new KubeCluster(loadKubeConfig({ yaml: sim.kubeconfig }), { listPageSize: 40 });
    try {
      await cluster.start(30_000);
      expect(cluster.cache.list('VirtualMachine')).toHaveLength(FLEET);
      const vmLists = seen
        .slice(from)
        .filter((r) => r.path === '/apis/kubevirt.io/v1/virtualmachines' && !r.query.includes('watch='));
      expect(vmLists.map((r) => new URLSearchParams(r.query).get('limit'))).toEqual(
        Array(Math.ceil(FLEET / 40)).fill('40'),
      );
      expect(vmLists.filter((r) => new URLSearchParams(r.query).get('continue'))).toHaveLength(
        Math.ceil(FLEET / 40) - 1,
      );
      // The watch that follows sees a change made now.
      const first = cluster.cache.list('VirtualMachine')[0]!;
      const { namespace = '', name = '' } = first.metadata;
      await cluster.patch('VirtualMachine', namespace, name, { metadata: { labels: { paged: 'yes' } } });
      await eventually(
        () => cluster.cache.get('VirtualMachine', namespace, name)?.metadata.labels?.paged === 'yes',
        5000,
        'the change through the watch',
      );
    } finally {
      sim.context.settings.watchList = true;
      await cluster.stop();
    }
  });
});
