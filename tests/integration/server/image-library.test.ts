/**
 * The image library through /api on the embedded cluster: custom sources in ConfigMap corral-sources (20 concurrent
 * writers lose nothing, idempotent by name, strict input), imported images (a CDI import followed to Succeeded with
 * rising progress, a failing URL reported with its reason), and bootc capability derived from the cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, type Harness } from './harness';
import { countRequests } from '../faults/helpers';

const IMAGE_URL = 'https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 20 });
});
afterAll(async () => {
  await h?.close();
});

interface Source {
  name: string;
  kind: string;
  uri: string;
  custom?: boolean;
  description: string;
}
interface DvRow {
  name: string;
  namespace: string;
  size: string;
  phase: string;
  progress: number | null;
  source: string;
  contentType: string;
  error: string;
  restarts: number;
}
interface Task {
  id: string;
  status: string;
  error?: string;
  log?: string;
  progress: number;
}

const sources = async () => (await h.get('/api/sources')).body as Source[];
const configMapSources = () => {
  const cm = h.sim.store.get('/configmaps', 'tailvm', 'corral-sources');
  return JSON.parse((cm?.data as Record<string, string>)['sources.json'] ?? '[]') as Source[];
};

describe('custom sources', () => {
  it('20 concurrent POSTs all land: no lost update, and no retry storm within one process', async () => {
    const requests = countRequests(h.sim);
    const replies = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        h.post('/api/sources', { name: `img-${i}`, kind: 'containerDisk', uri: `quay.io/me/img:${i}` }),
      ),
    );
    for (const [i, r] of replies.entries()) expect(r.body).toEqual({ status: 'ok', name: `img-${i}` });
    expect(
      configMapSources()
        .map((s) => s.name)
        .sort(),
    ).toEqual(Array.from({ length: 20 }, (_, i) => `img-${i}`).sort());
    // One process's writes go one at a time: a read and a write each (the first write creates the ConfigMap through
    // its collection). Writers racing each other would lose the precondition and read and write again, many times.
    const touched = requests.paths.filter((p) => p.endsWith('/configmaps/corral-sources'));
    expect(touched.length, touched.join(', ')).toBeLessThanOrEqual(2 * 20);
    const listed = await sources();
    expect(listed).toHaveLength(20);
    expect(listed.every((s) => s.custom === true && s.kind === 'containerDisk')).toBe(true);
    // The catalog reads the same list after the curated images.
    const catalog = (await h.get('/api/images')).body as Source[];
    expect(catalog.filter((s) => s.custom).map((s) => s.name)).toEqual(listed.map((s) => s.name));
  }, 30_000);

  it('is idempotent by name: a second POST replaces the entry in place', async () => {
    const first = { name: 'jammy', kind: 'url', uri: 'https://cloud-images.ubuntu.com/jammy/current/j.img' };
    expect((await h.post('/api/sources', first)).status).toBe(200);
    expect((await h.post('/api/sources', first)).status).toBe(200);
    const replaced = { ...first, uri: 'https://example.org/jammy.qcow2', description: 'Jammy, mirrored' };
    expect((await h.post('/api/sources', replaced)).body).toEqual({ status: 'ok', name: 'jammy' });
    const jammy = (await sources()).filter((s) => s.name === 'jammy');
    expect(jammy).toEqual([
      expect.objectContaining({ kind: 'url', uri: replaced.uri, description: replaced.description }),
    ]);
  });

  it('refuses bad input with 400 naming the field, and a curated name with 409', async () => {
    const bad: [unknown, RegExp][] = [
      [{ name: 'x', kind: 'url', uri: 'file:///etc/passwd' }, /uri.*http/],
      [{ name: 'x', kind: 'iso', uri: 'ftp://mirror/x.iso' }, /uri.*http/],
      [{ name: 'x', kind: 'containerDisk', uri: 'Not A Reference' }, /uri.*image reference/],
      [{ name: 'Bad_Name', kind: 'url', uri: 'https://a.example.org/x.img' }, /name.*DNS-1123/],
      [{ name: 'x', kind: 'tarball', uri: 'https://a.example.org/x.img' }, /kind/],
      [{ name: 'x', kind: 'url', uri: 'https://a.example.org/x.img', extra: 1 }, /extra/],
    ];
    for (const [body, message] of bad) {
      const r = await h.post('/api/sources', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.text).toMatch(message);
    }
    const curated = await h.post('/api/sources', { name: 'fedora', kind: 'containerDisk', uri: 'quay.io/x/y:1' });
    expect(curated.status).toBe(409);
    expect(curated.text).toMatch(/curated/);
  });

  it('DELETE removes one entry; a missing one is 404', async () => {
    expect((await h.del('/api/sources/img-3')).body).toEqual({ status: 'removed' });
    expect(configMapSources().some((s) => s.name === 'img-3')).toBe(false);
    expect(configMapSources()).toHaveLength(20); // 19 images + jammy
    const missing = await h.del('/api/sources/img-3');
    expect(missing.status).toBe(404);
    expect(missing.text).toMatch(/img-3 not found/);
  });

  it('the embedded apiserver refuses a stale resourceVersion (what the retry relies on)', async () => {
    const cm = h.sim.store.get('/configmaps', 'tailvm', 'corral-sources');
    const stale = String(Number(cm?.metadata.resourceVersion) - 1);
    const res = await fetch(`${h.sim.url}/api/v1/namespaces/tailvm/configmaps/corral-sources`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { resourceVersion: stale }, data: { 'sources.json': '[]' } }),
    });
    expect(res.status).toBe(409);
    expect(configMapSources().length).toBe(20);
  });
});

describe('imported images (DataVolumes)', () => {
  it('an import reaches Succeeded with progress rising, as a task', async () => {
    const seen: number[] = [];
    const stop = h.corral.services.cluster.onChange((e) => {
      if (e.kind === 'DataVolume' && e.object.metadata.name === 'noble') {
        const p = /^([\d.]+)%$/.exec(String(e.object.status?.progress ?? ''));
        if (p) seen.push(Number(p[1]));
      }
    });
    const r = await h.post('/api/datavolumes', { name: 'noble', url: IMAGE_URL, size: '2Gi' });
    expect(r.status).toBe(201);
    const { task } = r.body as { name: string; namespace: string; task: string };
    expect(r.body).toMatchObject({ name: 'noble', namespace: 'tailvm' });
    const progressSeen: number[] = [];
    const done = await eventually(
      async () => {
        const row = ((await h.get('/api/datavolumes')).body as DvRow[]).find((d) => d.name === 'noble');
        if (row?.progress !== null && row?.progress !== undefined) progressSeen.push(row.progress);
        return row?.phase === 'Succeeded' ? row : undefined;
      },
      60_000,
      'import Succeeded',
    );
    stop();
    expect(done).toMatchObject({ size: '2Gi', progress: 100, source: IMAGE_URL, contentType: 'disk', error: '' });
    expect(new Set(seen).size).toBeGreaterThan(2);
    for (let i = 1; i < seen.length; i++) expect(seen[i]!).toBeGreaterThanOrEqual(seen[i - 1]!);
    expect(progressSeen.some((p) => p > 0 && p < 100)).toBe(true);
    const t = await eventually(async () => {
      const got = (await h.get(`/api/tasks/${task}`)).body as Task;
      return got.status === 'done' ? got : undefined;
    });
    expect(t.progress).toBe(100);
    expect(t.log).toMatch(/ImportInProgress/);
  }, 90_000);

  it('a failing URL ends the task in error with the reason; the row carries it too', async () => {
    const r = await h.post('/api/datavolumes', {
      name: 'nohost',
      url: 'https://images.corral.invalid/disk.qcow2',
      size: '1Gi',
    });
    expect(r.status).toBe(201);
    const { task } = r.body as { task: string };
    // Each failed attempt backs off 10 s, 20 s … of cluster time; at speed 20 three attempts take a few seconds.
    const t = await eventually(
      async () => {
        const got = (await h.get(`/api/tasks/${task}`)).body as Task;
        return got.status === 'error' ? got : undefined;
      },
      60_000,
      'import task error',
    );
    expect(t.error).toMatch(/no such host/);
    const row = ((await h.get('/api/datavolumes')).body as DvRow[]).find((d) => d.name === 'nohost');
    expect(row?.phase).not.toBe('Succeeded');
    expect(row?.error).toMatch(/no such host/);
    expect(row?.restarts).toBeGreaterThanOrEqual(3);
  }, 90_000);

  it('ISO URLs are install media; refusals are 400/404/409', async () => {
    const iso = await h.post('/api/datavolumes', {
      name: 'installer',
      url: 'https://mirror.example.org/alpine.iso',
      size: '2Gi',
    });
    expect(iso.status).toBe(201);
    const row = ((await h.get('/api/datavolumes')).body as DvRow[]).find((d) => d.name === 'installer');
    expect(row?.contentType).toBe('iso');
    expect((await h.post('/api/datavolumes', { name: 'installer', url: IMAGE_URL, size: '2Gi' })).status).toBe(409);
    const bad: [unknown, RegExp][] = [
      [{ name: 'x', url: 'file:///etc/passwd', size: '2Gi' }, /url.*http/],
      [{ name: 'x', size: '2Gi' }, /exactly one of url and registry/],
      [{ name: 'x', url: IMAGE_URL, registry: 'quay.io/a/b:1', size: '2Gi' }, /exactly one/],
      [{ name: 'x', url: IMAGE_URL, size: '100Ti' }, /size/],
      [{ name: 'x', url: IMAGE_URL, size: '2Gi', namespace: 'nope' }, /namespace/],
      [{ name: 'X!', url: IMAGE_URL, size: '2Gi' }, /name/],
    ];
    for (const [body, message] of bad) {
      const res = await h.post('/api/datavolumes', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.text).toMatch(message);
    }
    expect((await h.del('/api/datavolumes/tailvm/missing')).status).toBe(404);
    expect((await h.del('/api/datavolumes/tailvm/installer')).body).toMatchObject({ status: 'deleted' });
    await eventually(
      async () => !((await h.get('/api/datavolumes')).body as DvRow[]).some((d) => d.name === 'installer'),
      10_000,
      'installer gone from the list',
    );
  }, 30_000);

  it("a VM's disk DataVolume is not an imported image", async () => {
    expect((await h.post('/api/vms', { name: 'vmx', import: IMAGE_URL, disk: '2G', mem: '1G', cpu: 1 })).status).toBe(
      201,
    );
    await eventually(() => h.corral.services.cluster.cache.get('DataVolume', 'tailvm', 'vmx-disk'), 10_000, 'vm disk');
    expect(((await h.get('/api/datavolumes')).body as DvRow[]).some((d) => d.name === 'vmx-disk')).toBe(false);
    const refused = await h.del('/api/datavolumes/tailvm/vmx-disk');
    expect(refused.status).toBe(409);
    expect(refused.text).toMatch(/disk of VM vmx/);
  });
});

describe('capabilities.bootc', () => {
  it('is decided from the cluster and says why not', async () => {
    // The build Job runs as the bootc extension's ServiceAccount (docs/extensions.md).
    expect((await h.post('/api/plugins/bootc/install', {})).status).toBe(200);
    const ok = (await h.get('/api/capabilities')).body as { bootc: boolean; bootcWhyNot: string[] };
    expect(ok).toMatchObject({ bootc: true, bootcWhyNot: [] });
    const label = (value: string | null) =>
      h.sim.store.mutate('/namespaces', undefined, 'tailvm', (ns) => {
        const labels = { ...(ns.metadata.labels ?? {}) };
        if (value === null) delete labels['pod-security.kubernetes.io/enforce'];
        else labels['pod-security.kubernetes.io/enforce'] = value;
        ns.metadata.labels = labels;
      });
    label('restricted');
    try {
      const no = (await h.get('/api/capabilities')).body as { bootc: boolean; bootcWhyNot: string[] };
      expect(no.bootc).toBe(false);
      expect(no.bootcWhyNot).toEqual([expect.stringMatching(/Pod Security "restricted".*privileged/)]);
    } finally {
      label(null);
    }
  });
});

describe('VM create import sources', () => {
  it('refuses a non-http(s) import or iso URL with 400 naming the field', async () => {
    for (const field of ['import', 'iso']) {
      const r = await h.post('/api/vms', { name: 'fromfile', [field]: 'file:///etc/shadow' });
      expect(r.status).toBe(400);
      expect(r.text).toMatch(new RegExp(`${field}.*http`));
    }
    expect(h.corral.services.cluster.cache.get('VirtualMachine', 'tailvm', 'fromfile')).toBeUndefined();
  });
});
