/**
 * The REST API over HTTP against the embedded cluster: statuses and bodies exactly as api.md, objects created in
 * the cluster per source, the read-only gate, the cross-site guard, and bad input answered with the field's name.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Kind, KObject } from '@/server/domain/cluster-port';
import { eventually, startHarness, type Harness } from './harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});
afterEach(() => {
  delete process.env.CORRAL_ADMINS;
});

const live = (kind: Kind, namespace: string, labelSelector?: string) =>
  h.corral.cluster.fetchList(kind, { namespace, labelSelector });
const fetchObj = (kind: Kind, namespace: string, name: string) => h.corral.cluster.fetch(kind, namespace, name);
const spec = (o: KObject | undefined) => JSON.stringify(o?.spec ?? {});
const rowOf = async (ns: string, name: string) =>
  ((await h.get('/api/vms')).body as { namespace: string; name: string }[]).find(
    (r) => r.namespace === ns && r.name === name,
  );

describe('health', () => {
  it('GET /healthz is ok\\n and /readyz is ready once synced', async () => {
    const health = await h.get('/healthz');
    expect(health.status).toBe(200);
    expect(health.text).toBe('ok\n');
    const ready = await h.get('/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready' });
  });
});

describe('POST /api/vms — every source', () => {
  it('containerDisk: 201 {name, namespace}, a VM booting that image, created stopped', async () => {
    const r = await h.post('/api/vms', {
      name: 'cd-vm',
      containerDisk: 'quay.io/containerdisks/fedora:42',
      mem: '2G',
      cpu: 3,
    });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'cd-vm', namespace: 'tailvm' });
    const vm = await fetchObj('VirtualMachine', 'tailvm', 'cd-vm');
    expect(spec(vm)).toContain('"containerDisk":{"image":"quay.io/containerdisks/fedora:42"}');
    expect(vm?.spec?.runStrategy).toBe('Halted');
    expect(vm?.metadata.labels?.['corral.dev/vm']).toBe('cd-vm');
    expect(spec(vm)).toContain('"memory":{"guest":"2Gi"}'); // 2G taken as GiB
    expect(spec(vm)).toContain('"sockets":3');
    const row = await eventually(() => rowOf('tailvm', 'cd-vm'), 5000, 'row');
    expect(Object.keys(row)).toEqual(
      expect.arrayContaining(['name', 'namespace', 'status', 'ready', 'running', 'cpu', 'mem', 'disk', 'ip', 'node']),
    );
    expect(row).toMatchObject({ cpu: 3, mem: '2Gi', ip: '', node: '' });
  });

  it('image: resolves the catalog entry; an unknown one is 400 naming the field', async () => {
    expect((await h.post('/api/vms', { name: 'img-vm', image: 'debian' })).status).toBe(201);
    expect(spec(await fetchObj('VirtualMachine', 'tailvm', 'img-vm'))).toContain('quay.io/containerdisks/debian:12');
    const bad = await h.post('/api/vms', { name: 'img-bad', image: 'windows-xp' });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: expect.stringMatching(/^image: unknown catalog image 'windows-xp'/) });
    expect(await fetchObj('VirtualMachine', 'tailvm', 'img-bad')).toBeUndefined();
  });

  it('import: DataVolume <vm>-disk importing the URL, the VM boots from it', async () => {
    expect(
      (await h.post('/api/vms', { name: 'imp-vm', import: 'https://example.com/img.qcow2', disk: '10G' })).status,
    ).toBe(201);
    const dv = await fetchObj('DataVolume', 'tailvm', 'imp-vm-disk');
    expect(dv?.spec).toMatchObject({
      source: { http: { url: 'https://example.com/img.qcow2' } },
      storage: { resources: { requests: { storage: '10Gi' } } },
    });
    expect(dv?.metadata.labels?.['corral.dev/vm']).toBe('imp-vm');
    expect(spec(await fetchObj('VirtualMachine', 'tailvm', 'imp-vm'))).toContain('"dataVolume":{"name":"imp-vm-disk"}');
  });

  it('iso: ISO DataVolume <vm>-iso plus a blank <vm>-disk; the installer cdrom boots first', async () => {
    expect((await h.post('/api/vms', { name: 'iso-vm', iso: 'https://example.com/install.iso' })).status).toBe(201);
    expect((await fetchObj('DataVolume', 'tailvm', 'iso-vm-iso'))?.spec).toMatchObject({
      source: { http: { url: 'https://example.com/install.iso' } },
    });
    expect((await fetchObj('DataVolume', 'tailvm', 'iso-vm-disk'))?.spec).toMatchObject({
      source: { blank: {} },
      storage: { resources: { requests: { storage: '20Gi' } } },
    });
    const s = spec(await fetchObj('VirtualMachine', 'tailvm', 'iso-vm'));
    expect(s).toContain('"cdrom":{"bus":"sata"},"bootOrder":1');
    expect(s).toContain('"dataVolume":{"name":"iso-vm-iso"}');
  });

  it('pvc: clones the PVC into <vm>-disk, never boots the library PVC in place', async () => {
    await h.corral.cluster.create('PersistentVolumeClaim', {
      metadata: { name: 'golden', namespace: 'tailvm' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '8Gi' } } },
    });
    await eventually(
      () => h.corral.cluster.cache.get('PersistentVolumeClaim', 'tailvm', 'golden'),
      5000,
      'golden PVC in cache',
    );
    expect((await h.post('/api/vms', { name: 'pvc-vm', pvc: 'golden' })).status).toBe(201);
    expect((await fetchObj('DataVolume', 'tailvm', 'pvc-vm-disk'))?.spec).toMatchObject({
      source: { pvc: { namespace: 'tailvm', name: 'golden' } },
    });
    const s = spec(await fetchObj('VirtualMachine', 'tailvm', 'pvc-vm'));
    expect(s).toContain('pvc-vm-disk');
    expect(s).not.toContain('"claimName":"golden"');
    const missing = await h.post('/api/vms', { name: 'pvc-missing', pvc: 'nope' });
    expect(missing).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^pvc: /) } });
  });

  it('bootc: 202 {task}; the build is a Job and the task is pollable', async () => {
    const r = await h.post('/api/vms', {
      name: 'boot-vm',
      bootc: 'quay.io/fedora/fedora-bootc:42',
      sshKey: 'ssh-ed25519 AAAAC3Nza user@host',
    });
    expect(r.status).toBe(202);
    const { task } = r.body as { task: string };
    expect(task).toMatch(/^bootc-boot-vm-/);
    const polled = await h.get(`/api/tasks/${task}`);
    expect(polled.status).toBe(200);
    expect(polled.body).toMatchObject({
      status: expect.stringMatching(/^(running|done|error)$/),
      log: expect.any(String),
      error: expect.any(String),
    });
    const job = await eventually(() => fetchObj('Job', 'tailvm', 'boot-vm-bootc-build'), 5000, 'build job');
    expect(JSON.stringify(job.spec)).toContain('quay.io/fedora/fedora-bootc:42');
    // It runs as the bootc extension's ServiceAccount (docs/extensions.md).
    expect(job.spec?.template).toMatchObject({ spec: { serviceAccountName: 'corral-bootc-builder' } });
    // The embedded cluster runs the Job to completion; then the VM is created on the built disk.
    const done = await eventually(
      async () => {
        const t = (await h.get(`/api/tasks/${task}`)).body as { status: string };
        return t.status !== 'running' ? t : undefined;
      },
      30_000,
      'bootc task end',
    );
    expect(done).toMatchObject({ status: 'done', error: '' });
    expect(spec(await fetchObj('VirtualMachine', 'tailvm', 'boot-vm'))).toContain(
      '"dataVolume":{"name":"boot-vm-disk"}',
    );
  });

  it('cloudInit goes into a Secret, never into the VM spec; a missing namespace is created', async () => {
    const userData = '#cloud-config\npassword: hunter2\nchpasswd: {expire: false}\n';
    const r = await h.post('/api/vms', {
      name: 'ci-vm',
      namespace: 'fresh-ns',
      containerDisk: 'quay.io/containerdisks/fedora:42',
      cloudInit: userData,
    });
    expect(r).toMatchObject({ status: 201, body: { name: 'ci-vm', namespace: 'fresh-ns' } });
    expect(await fetchObj('Namespace', '', 'fresh-ns')).toBeDefined();
    const secret = await fetchObj('Secret', 'fresh-ns', 'ci-vm-cloudinit');
    const data = secret?.data as Record<string, string>;
    expect(Buffer.from(data.userdata ?? '', 'base64').toString()).toBe(userData);
    const vm = await fetchObj('VirtualMachine', 'fresh-ns', 'ci-vm');
    expect(spec(vm)).toContain('"secretRef":{"name":"ci-vm-cloudinit"}');
    expect(JSON.stringify(vm)).not.toContain('hunter2');
  });

  it('a name that exists is 409', async () => {
    const r = await h.post('/api/vms', { name: 'cd-vm', containerDisk: 'quay.io/containerdisks/fedora:42' });
    expect(r).toMatchObject({ status: 409, body: { error: expect.stringContaining('already exists') } });
  });
});

describe('bad input → 400 naming the field', () => {
  const cases: [string, unknown, RegExp][] = [
    ['no source', { name: 'x1' }, /^source: exactly one of/],
    [
      'two sources',
      { name: 'x2', image: 'fedora', containerDisk: 'quay.io/a:b' },
      /^source: exactly one source is allowed, got containerDisk and image/,
    ],
    ['bad name', { name: 'Web_1', image: 'fedora' }, /^name: must be a DNS-1123 label/],
    ['name ending in a dash', { name: 'web-', image: 'fedora' }, /^name: must be a DNS-1123 label/],
    ['long name', { name: 'a'.repeat(64), image: 'fedora' }, /^name: must be at most 63/],
    ['malformed size', { name: 'x3', image: 'fedora', mem: 'lots' }, /^mem: must be a size/],
    ['absurd cpu', { name: 'x4', image: 'fedora', cpu: 4096 }, /^cpu: must be at most 512/],
    ['zero disk', { name: 'x6', image: 'fedora', disk: '0Gi' }, /^disk: must be between 1Gi and 64Ti/],
    ['absurd disk', { name: 'x7', image: 'fedora', disk: '99999999999999999999P' }, /^disk: must be a size/],
    ['huge disk', { name: 'x7', image: 'fedora', disk: '65Ti' }, /^disk: must be between 1Gi and 64Ti/],
    ['tiny memory', { name: 'x8', image: 'fedora', mem: '1Mi' }, /^mem: must be between 64Mi and 4Ti/],
    ['start as a string', { name: 'x9', image: 'fedora', start: 'false' }, /^start: /],
    ['unknown field', { name: 'x10', image: 'fedora', cores: 2 }, /Unrecognized key: "cores"/],
    ['cpu as text', { name: 'x5', image: 'fedora', cpu: 'many' }, /^cpu: /],
  ];
  it.each(cases)('%s', async (_what, body, message) => {
    const r = await h.post('/api/vms', body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: expect.stringMatching(message) });
  });

  it('an unknown action is a 404 naming the path (issue 9: an unknown sub-path, not the action enum 400)', async () => {
    const r = await h.post('/api/vms/tailvm/cd-vm/explode', {});
    expect(r).toMatchObject({
      status: 404,
      body: { error: expect.stringMatching(/^Not found: no route POST \/api\/vms\/tailvm\/cd-vm\/explode$/) },
    });
  });

  it('malformed JSON is 400', async () => {
    const res = await fetch(`${h.url}/api/vms`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: 'Malformed JSON body' });
  });
});

describe('lookups and state', () => {
  it('unknown VM → 404 {"error"} only', async () => {
    const r = await h.get('/api/vms/tailvm/ghost');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'VM tailvm/ghost not found' });
    expect((await h.post('/api/vms/tailvm/ghost/start', {})).status).toBe(404);
    expect((await h.del('/api/vms/tailvm/ghost')).status).toBe(404);
  });

  it('GET /api/vms/{ns}/{name} is the raw VirtualMachine', async () => {
    const r = await h.get('/api/vms/tailvm/cd-vm');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: { name: 'cd-vm' } });
  });

  it('pausing a stopped VM → 409 with the reason', async () => {
    const r = await h.post('/api/vms/tailvm/img-vm/pause');
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: expect.stringContaining('is not running') });
  });

  it('GET /api/vms filters by namespace and tag; a bad filter is 400', async () => {
    const inNs = (await h.get('/api/vms?namespace=fresh-ns')).body as { name: string }[];
    expect(inNs.map((r) => r.name)).toEqual(['ci-vm']);
    expect((await h.get('/api/vms?tag=no-such-tag')).body).toEqual([]);
    expect(await h.get('/api/vms?namespace=Bad_NS')).toMatchObject({
      status: 400,
      body: { error: expect.stringMatching(/^namespace: /) },
    });
  });

  it('unknown route → 404 {"error"}', async () => {
    expect(await h.get('/api/nothing-here')).toMatchObject({ status: 404, body: { error: 'Not found' } });
  });
});

describe('tags', () => {
  it('round-trip through the row and are label-selectable', async () => {
    const on = await h.post('/api/vms/tailvm/cd-vm/tags', { tag: 'prod', on: true });
    expect(on).toMatchObject({ status: 200, body: { tag: 'prod', on: true } });
    await eventually(async () => (await rowOf('tailvm', 'cd-vm')) as { tags?: string[] } | undefined, 5000).then(
      () => undefined,
    );
    await eventually(
      async () => ((await rowOf('tailvm', 'cd-vm')) as unknown as { tags: string[] }).tags.includes('prod'),
      5000,
      'tag in row',
    );
    const selected = await live('VirtualMachine', 'tailvm', 'corral.dev/tag.prod');
    expect(selected.map((v) => v.metadata.name)).toEqual(['cd-vm']);
    expect((await h.post('/api/vms/tailvm/cd-vm/tags', { tag: 'prod', on: false })).body).toEqual({
      tag: 'prod',
      on: false,
    });
    expect(await live('VirtualMachine', 'tailvm', 'corral.dev/tag.prod')).toEqual([]);
    expect((await h.post('/api/vms/tailvm/cd-vm/tags', { tag: 'bad tag!', on: true })).status).toBe(400);
  });
});

describe('delete', () => {
  it('shows the plan, then leaves nothing labelled for the VM', async () => {
    expect(
      (
        await h.post('/api/vms', {
          name: 'del-vm',
          import: 'https://example.com/d.qcow2',
          cloudInit: '#cloud-config\n',
        })
      ).status,
    ).toBe(201);
    const plan = await h.get('/api/vms/tailvm/del-vm/deletion-plan');
    expect(plan.status).toBe(200);
    const kinds = (plan.body as { objects: { kind: string; name: string }[] }).objects.map(
      (o) => `${o.kind}/${o.name}`,
    );
    expect(kinds).toEqual(
      expect.arrayContaining(['VirtualMachine/del-vm', 'DataVolume/del-vm-disk', 'Secret/del-vm-cloudinit']),
    );
    const r = await h.del('/api/vms/tailvm/del-vm');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ status: 'deleted' });
    for (const kind of ['VirtualMachine', 'DataVolume', 'Secret', 'PersistentVolumeClaim'] as Kind[]) {
      await eventually(
        async () => (await live(kind, 'tailvm', 'corral.dev/vm=del-vm')).length === 0,
        10_000,
        `${kind} gone`,
      );
    }
  });
});

describe('identity and safety', () => {
  it('read-only callers get 403 on every state change; reads still work', async () => {
    process.env.CORRAL_ADMINS = 'alice@github';
    const mallory = { 'tailscale-user-login': 'mallory@github' };
    expect((await h.get('/api/whoami', mallory)).body).toMatchObject({
      login: 'mallory@github',
      admin: false,
      enforced: true,
    });
    for (const r of [
      await h.post('/api/vms', { name: 'ro-vm', image: 'fedora' }, mallory),
      await h.post('/api/vms/tailvm/cd-vm/start', {}, mallory),
      await h.post('/api/vms/tailvm/cd-vm/tags', { tag: 'x', on: true }, mallory),
      await h.del('/api/vms/tailvm/cd-vm', mallory),
    ]) {
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: expect.stringContaining('read-only') });
    }
    expect((await h.get('/api/vms', mallory)).status).toBe(200);
    const alice = { 'tailscale-user-login': 'alice@github', 'tailscale-user-name': 'Alice' };
    expect((await h.get('/api/whoami', alice)).body).toMatchObject({
      login: 'alice@github',
      name: 'Alice',
      admin: true,
    });
    expect((await h.post('/api/vms/tailvm/cd-vm/tags', { tag: 'alice', on: true }, alice)).status).toBe(200);
  });

  it('cross-site posts are refused with 403', async () => {
    const evil = await h.post('/api/vms', { name: 'csrf-vm', image: 'fedora' }, { origin: 'https://evil.example' });
    expect(evil).toMatchObject({ status: 403, body: { error: expect.stringContaining('cross-site') } });
    const fetchMeta = await h.post('/api/vms/tailvm/cd-vm/start', {}, { 'sec-fetch-site': 'cross-site' });
    expect(fetchMeta.status).toBe(403);
    const form = await fetch(`${h.url}/api/vms/tailvm/cd-vm/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'a=b',
    });
    expect(form.status).toBe(403);
    const del = await h.del('/api/vms/tailvm/cd-vm', { origin: 'https://evil.example' });
    expect(del.status).toBe(403);
    expect(await fetchObj('VirtualMachine', 'tailvm', 'csrf-vm')).toBeUndefined();
    const same = await h.post(
      '/api/vms/tailvm/cd-vm/tags',
      { tag: 'same', on: true },
      { origin: h.url, 'sec-fetch-site': 'same-origin' },
    );
    expect(same.status).toBe(200);
  });
});

describe('cluster facts', () => {
  it('capabilities say plainly that this is the demo cluster', async () => {
    const r = await h.get('/api/capabilities');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      demo: true,
      cluster: 'embedded demo cluster',
      bootc: false, // until the bootc extension is installed (extensions.test.ts)
      defaultNamespace: 'tailvm',
    });
  });

  it('images, nodes, instancetypes and tasks answer with their documented shapes', async () => {
    const images = (await h.get('/api/images')).body as {
      name: string;
      containerDisk: string;
      defaultUser: string;
      category: string;
    }[];
    expect(images.find((i) => i.name === 'fedora')).toMatchObject({
      containerDisk: 'quay.io/containerdisks/fedora:42',
      defaultUser: 'fedora',
      category: 'server',
    });
    expect(Array.isArray((await h.get('/api/nodes')).body)).toBe(true);
    expect((await h.get('/api/instancetypes')).body).toMatchObject({
      instancetypes: expect.any(Array),
      preferences: expect.any(Array),
    });
    const tasks = (await h.get('/api/tasks')).body as { startedAt: string }[];
    expect(tasks.length).toBeGreaterThan(3);
    const times = tasks.map((t) => t.startedAt);
    expect([...times].sort().reverse()).toEqual(times); // newest first
    expect((await h.get('/api/tasks/nope')).status).toBe(404);
  });

  it('serves the OpenAPI document and a browsable reference page', async () => {
    const doc = await h.get('/api/openapi.json');
    expect(doc.status).toBe(200);
    expect((doc.body as { openapi: string }).openapi).toBe('3.1.0');
    const page = await h.get('/api/docs');
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.text).toContain('/api/openapi.json');
  });
});
