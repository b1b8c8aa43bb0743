/**
 * Cold sync by watch-list (docs/scale.md "Cold sync"): where the apiserver serves `sendInitialEvents`, the watch
 * cache reads each kind's initial state as one watch that streams every object, ends the initial events with the
 * `k8s.io/initial-events-end` bookmark and then carries the changes; after a gap (410) it does so again and drops
 * what went missing. Where the apiserver refuses it (422, the embedded cluster told `watchList: false`), it reads
 * by paginated lists instead. One embedded cluster (no controllers) for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeCluster, loadKubeConfig } from '@/server/cluster';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { resourceKey, type NewObject } from '@/sim/store/types';
import { eventually } from './harness';

const FLEET = 30;
const VMS = resourceKey('kubevirt.io', 'virtualmachines');
const VM_PATH = '/apis/kubevirt.io/v1/virtualmachines';
let sim: EmbeddedCluster;
const seen: { path: string; query: URLSearchParams }[] = [];
const auth = { authorization: 'Bearer sim-admin-token' };

function vm(name: string): NewObject {
  return {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name, namespace: 'wl', labels: { 'corral.dev/vm': name } },
    spec: { runStrategy: 'Halted', template: { spec: { domain: { devices: {} } } } },
  };
}

/** Deletes a VM now (the embedded store gives VMs KubeVirt's finalizer, and no controller runs here to drop it). */
function remove(name: string): void {
  sim.store.mutate(VMS, 'wl', name, (o) => {
    o.metadata.finalizers = [];
  });
  sim.store.delete(VMS, 'wl', name);
}

let bumps = 0;
/**
 * Compacts the history past every cached version (a write to a kind the cache does not watch moves the revision
 * on) and drops the streams: resuming answers 410, so only a new initial state can show what changes next.
 */
function expire(): void {
  sim.store.create(resourceKey('', 'configmaps'), {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `bump-${++bumps}`, namespace: 'wl' },
  });
  sim.faults.expireWatches();
}

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', modules: [] });
  sim.store.create(resourceKey('', 'namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wl' } });
  for (let i = 0; i < FLEET; i++) sim.store.create(VMS, vm(`vm-${i}`));
  const decide = sim.faults.decide.bind(sim.faults);
  sim.faults.decide = (path, request) => {
    seen.push({ path, query: new URLSearchParams(request?.query?.toString() ?? '') });
    return decide(path, request);
  };
}, 60_000);
afterAll(async () => {
  await sim?.close();
});

const vmRequests = (from: number) => seen.slice(from).filter((r) => r.path === VM_PATH);
const isWatchList = (q: URLSearchParams) => q.get('watch') === 'true' && q.get('sendInitialEvents') === 'true';
const isList = (q: URLSearchParams) => q.get('watch') !== 'true';
const names = (cluster: KubeCluster) =>
  cluster.cache
    .list('VirtualMachine', 'wl')
    .map((o) => o.metadata.name)
    .sort();

describe('the embedded apiserver checks a watch-list as the apiserver does', () => {
  const watch = async (query: string) => {
    const res = await fetch(`${sim.url}${VM_PATH}?watch=true&timeoutSeconds=1&${query}`, { headers: auth });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as { message?: string } };
  };

  it('answers 422 naming the option for a watch-list without NotOlderThan or bookmarks, or with the gate off', async () => {
    const noMatch = await watch('sendInitialEvents=true&allowWatchBookmarks=true');
    expect(noMatch.status).toBe(422);
    expect(noMatch.body.message).toMatch(/resourceVersionMatch: Unsupported value/);
    const noBookmarks = await watch('sendInitialEvents=true&resourceVersionMatch=NotOlderThan');
    expect(noBookmarks.status).toBe(422);
    expect(noBookmarks.body.message).toMatch(/allowWatchBookmarks/);
    const matchAlone = await watch('resourceVersionMatch=NotOlderThan');
    expect(matchAlone.status).toBe(422);
    expect(matchAlone.body.message).toMatch(/resourceVersionMatch is forbidden for watch unless sendInitialEvents/);
    sim.context.settings.watchList = false;
    try {
      const gated = await watch('sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true');
      expect(gated.status).toBe(422);
      expect(gated.body.message).toMatch(/sendInitialEvents is forbidden for watch unless the WatchList feature gate/);
    } finally {
      sim.context.settings.watchList = true;
    }
  });
});

describe('the watch cache', () => {
  it('syncs by watch-list where served: no list request, every object, then the changes on the same stream', async () => {
    const from = seen.length;
    const cluster = new KubeCluster(loadKubeConfig({ yaml: sim.kubeconfig }), { rateLimit: { qps: 0, burst: 1 } });
    try {
      await cluster.start(20_000);
      expect(names(cluster)).toHaveLength(FLEET);
      const requests = vmRequests(from);
      expect(requests.filter((r) => isList(r.query))).toEqual([]);
      expect(requests.filter((r) => isWatchList(r.query))).toHaveLength(1);
      expect(requests[0]!.query.get('resourceVersionMatch')).toBe('NotOlderThan');
      expect(requests[0]!.query.get('allowWatchBookmarks')).toBe('true');
      expect(cluster.cache.status().every((s) => s.initialSync === 'watch-list' && s.lists === 1)).toBe(true);
      sim.store.mutate(VMS, 'wl', 'vm-3', (o) => {
        o.metadata.labels = { ...o.metadata.labels, followed: 'yes' };
      });
      await eventually(
        () => cluster.cache.get('VirtualMachine', 'wl', 'vm-3')?.metadata.labels?.followed === 'yes',
        5000,
        'the change through the watch-list stream',
      );
      // Still one stream: the change came on the watch-list's own watch.
      expect(vmRequests(from)).toHaveLength(1);
    } finally {
      await cluster.stop();
    }
  });

  it('after a gap (410) reads the whole state again by watch-list, dropping what was deleted meanwhile', async () => {
    const cluster = new KubeCluster(loadKubeConfig({ yaml: sim.kubeconfig }), { rateLimit: { qps: 0, burst: 1 } });
    try {
      await cluster.start(20_000);
      const from = seen.length;
      expire();
      remove('vm-0');
      sim.store.create(VMS, vm('vm-new'));
      sim.store.mutate(VMS, 'wl', 'vm-1', (o) => {
        o.metadata.labels = { ...o.metadata.labels, gap: 'yes' };
      });
      await eventually(
        () => names(cluster).includes('vm-new') && !names(cluster).includes('vm-0'),
        10_000,
        'the gap’s create and delete',
      );
      expect(cluster.cache.get('VirtualMachine', 'wl', 'vm-1')?.metadata.labels?.gap).toBe('yes');
      expect(names(cluster)).toHaveLength(FLEET);
      const requests = vmRequests(from);
      expect(requests.filter((r) => isList(r.query))).toEqual([]);
      // The resume from the old version (answered 410 in the stream), then one watch-list.
      expect(requests.filter((r) => isWatchList(r.query))).toHaveLength(1);
      expect(cluster.cache.status().find((s) => s.kind === 'VirtualMachine')?.lists).toBe(2);
    } finally {
      await cluster.stop();
      remove('vm-new');
      sim.store.create(VMS, vm('vm-0'));
    }
  });

  it('falls back to paginated lists where watch-list is refused, also after a gap', async () => {
    sim.context.settings.watchList = false;
    const from = seen.length;
    const cluster = new KubeCluster(loadKubeConfig({ yaml: sim.kubeconfig }), {
      rateLimit: { qps: 0, burst: 1 },
      listPageSize: 8,
      log: () => {},
    });
    try {
      await cluster.start(20_000);
      expect(names(cluster)).toHaveLength(FLEET);
      expect(cluster.cache.status().every((s) => s.initialSync === 'list')).toBe(true);
      const requests = vmRequests(from);
      // One refused watch-list, then the pages, then a plain watch from the list's version.
      expect(isWatchList(requests[0]!.query)).toBe(true);
      const pages = requests.filter((r) => isList(r.query));
      expect(pages).toHaveLength(Math.ceil(FLEET / 8));
      expect(pages.every((r) => r.query.get('limit') === '8')).toBe(true);
      const gapFrom = seen.length;
      expire();
      remove('vm-5');
      await eventually(() => !names(cluster).includes('vm-5'), 10_000, 'the gap’s delete');
      // Refused once: the relist goes straight to pages.
      expect(vmRequests(gapFrom).filter((r) => isWatchList(r.query))).toEqual([]);
      expect(vmRequests(gapFrom).filter((r) => isList(r.query))).toHaveLength(Math.ceil((FLEET - 1) / 8));
    } finally {
      await cluster.stop();
      sim.context.settings.watchList = true;
      sim.store.create(VMS, vm('vm-5'));
    }
  });
});
