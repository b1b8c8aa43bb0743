/**
 * Disk export through /api on the embedded cluster's VirtualMachineExport: the gunzipped download equals the
 * disk's raw image, Content-Disposition names the file, refusals (400/403/404/409/501) create nothing, a client
 * that disconnects mid-stream leaves no VirtualMachineExport behind, and a slow but flowing download outlives the
 * idle time-out.
 */
import http from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRawImage } from '@/sim/storage/disk-image';
import { createCorralClient, vmExportUrl } from '@/server/sdk';
import { eventually, startHarness, type Harness } from './harness';

const PVCS = '/persistentvolumeclaims';
const DVS = 'cdi.kubevirt.io/datavolumes';
const EXPORTS = 'export.kubevirt.io/virtualmachineexports';
const CONTENT = 'sim.corral.dev/disk-content';
const EXPORT_BYTES = 'sim.corral.dev/export-bytes';
const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';
const IDLE_MS = 1500;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    fleet: 'empty',
    speed: 50,
    corral: { limits: { idleTimeoutMs: IDLE_MS, keepAliveTimeoutMs: 500 } },
  });
});
afterAll(async () => {
  await h?.close();
});

const phaseOf = (o: unknown) => (o as { status?: { phase?: string } } | undefined)?.status?.phase;
const claimOf = (vm: string) => `${vm}-disk`;
const exportsLeft = () => h.sim.store.list(EXPORTS, 'tailvm').length;

async function createVm(name: string, content: string, bytes?: number): Promise<void> {
  expect((await h.post('/api/vms', { name, import: IMAGE_URL, disk: '2G', mem: '1G', cpu: 1 })).status).toBe(201);
  await eventually(
    () =>
      phaseOf(h.sim.store.get(PVCS, 'tailvm', claimOf(name))) === 'Bound' &&
      phaseOf(h.sim.store.get(DVS, 'tailvm', claimOf(name))) === 'Succeeded',
    30_000,
    `${name}'s disk imported`,
  );
  h.sim.store.mutate(PVCS, 'tailvm', claimOf(name), (pvc) => {
    pvc.metadata.annotations = {
      ...(pvc.metadata.annotations ?? {}),
      [CONTENT]: content,
      ...(bytes ? { [EXPORT_BYTES]: String(bytes) } : {}),
    };
  });
}

beforeAll(async () => {
  await createVm('expvm', 'the exported disk');
  await createVm('bigvm', 'a large disk', 96 * 2 ** 20);
}, 60_000);

describe('GET /api/vms/{ns}/{name}/export', () => {
  it('streams the gzipped raw disk, names the file and deletes the VirtualMachineExport', async () => {
    const res = await fetch(`${h.url}/api/vms/tailvm/expvm/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/gzip');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="expvm.img.gz"');
    const bytes = gunzipSync(Buffer.from(await res.arrayBuffer()));
    const expected = buildRawImage({ namespace: 'tailvm', volume: claimOf('expvm'), content: 'the exported disk' });
    expect(bytes.length).toBe(expected.length);
    expect(bytes.equals(expected)).toBe(true);
    await eventually(() => exportsLeft() === 0, 10_000, 'the VirtualMachineExport deleted');
    const task = ((await h.get('/api/tasks')).body as { action: string; status: string; target: string }[]).find(
      (t) => t.action === 'export' && t.target === 'tailvm/expvm',
    );
    expect(task?.status).toBe('done');
    expect((task as unknown as { log: string }).log).toMatch(/relaying the export server's gzip format/);
  }, 30_000);

  it('gzips the raw image itself when the export server offers no gzip format', async () => {
    // An export server that publishes only `raw` links: drop `gzip` the moment the links appear.
    const stop = h.sim.store.subscribe((ev) => {
      const links = (ev.object.status as { links?: { external?: { volumes?: { formats: { format: string }[] }[] } } })
        ?.links;
      if (ev.key !== EXPORTS || !links?.external?.volumes?.some((v) => v.formats.some((f) => f.format === 'gzip')))
        return;
      queueMicrotask(() =>
        h.sim.store.mutate(EXPORTS, ev.object.metadata.namespace, ev.object.metadata.name, (o) => {
          const st = o.status as { links: Record<string, { volumes: { formats: { format: string }[] }[] }> };
          for (const l of Object.values(st.links))
            for (const v of l.volumes) v.formats = v.formats.filter((f) => f.format !== 'gzip');
        }),
      );
    });
    try {
      const res = await fetch(`${h.url}/api/vms/tailvm/expvm/export`);
      expect(res.status).toBe(200);
      const bytes = gunzipSync(Buffer.from(await res.arrayBuffer()));
      const expected = buildRawImage({ namespace: 'tailvm', volume: claimOf('expvm'), content: 'the exported disk' });
      expect(bytes.equals(expected)).toBe(true);
    } finally {
      stop();
    }
    const task = ((await h.get('/api/tasks')).body as { action: string; target: string; log: string }[]).find(
      (t) => t.action === 'export' && t.target === 'tailvm/expvm',
    );
    expect(task?.log).toMatch(/gzipping the raw image on the fly/);
    await eventually(() => exportsLeft() === 0, 10_000, 'the VirtualMachineExport deleted');
  }, 30_000);

  it('qcow2 through qemu-img; 501 naming qemu-utils when qemu-img is missing', async () => {
    const res = await fetch(`${h.url}/api/vms/tailvm/expvm/export?format=qcow2`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="expvm.qcow2"');
    const body = Buffer.from(await res.arrayBuffer());
    expect(body.subarray(0, 4).toString('latin1')).toBe('QFI\xfb');
    const saved = process.env.CORRAL_QEMU_IMG;
    process.env.CORRAL_QEMU_IMG = '/nonexistent/qemu-img';
    try {
      const missing = await h.get('/api/vms/tailvm/expvm/export?format=qcow2');
      expect(missing.status).toBe(501);
      expect((missing.body as { error: string }).error).toMatch(/qemu-utils/);
    } finally {
      if (saved === undefined) delete process.env.CORRAL_QEMU_IMG;
      else process.env.CORRAL_QEMU_IMG = saved;
    }
    await eventually(() => exportsLeft() === 0, 10_000, 'no VirtualMachineExport left');
  }, 30_000);

  it('refuses bad input, read-only and cross-site callers, missing and running VMs — creating nothing', async () => {
    const cases: [string, number, RegExp, Record<string, string>?][] = [
      ['/api/vms/tailvm/expvm/export?format=zip', 400, /^format: must be one of raw\.gz, qcow2/],
      ['/api/vms/tailvm/expvm/export?colour=red', 400, /colour/],
      ['/api/vms/tailvm/expvm/export?format=qcow2&format=raw.gz', 400, /format: must be given once/],
      ['/api/vms/tailvm/Bad_Name/export', 400, /^name: /],
      ['/api/vms/tailvm/ghost/export', 404, /not found/],
      ['/api/vms/tailvm/expvm/export', 403, /cross-site/, { 'sec-fetch-site': 'cross-site' }],
    ];
    for (const [path, status, message, headers] of cases) {
      const r = await h.get(path, headers);
      expect({ path, status: r.status, error: (r.body as { error: string }).error }).toEqual({
        path,
        status,
        error: expect.stringMatching(message),
      });
    }
    const admins = process.env.CORRAL_ADMINS;
    process.env.CORRAL_ADMINS = 'alice@example';
    try {
      expect((await h.get('/api/vms/tailvm/expvm/export')).status).toBe(403);
    } finally {
      if (admins === undefined) delete process.env.CORRAL_ADMINS;
      else process.env.CORRAL_ADMINS = admins;
    }
    expect(exportsLeft()).toBe(0);

    expect((await h.post('/api/vms/tailvm/expvm/start')).status).toBe(200);
    await eventually(
      async () => ((await h.get('/api/vms/tailvm/expvm/row')).body as { running: boolean }).running,
      30_000,
      'running',
    );
    const running = await h.get('/api/vms/tailvm/expvm/export');
    expect(running.status).toBe(409);
    expect((running.body as { error: string }).error).toMatch(/stop it first/);
    expect(exportsLeft()).toBe(0);
    expect((await h.post('/api/vms/tailvm/expvm/stop')).status).toBe(200);
  }, 60_000);

  it('a client that disconnects mid-stream stops the export and leaves no VirtualMachineExport', async () => {
    const ac = new AbortController();
    const res = await fetch(`${h.url}/api/vms/tailvm/bigvm/export`, { signal: ac.signal });
    expect(res.status).toBe(200);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(first.value?.length).toBeGreaterThan(0);
    expect(exportsLeft()).toBe(1);
    ac.abort();
    await eventually(() => exportsLeft() === 0, 10_000, 'the VirtualMachineExport deleted after the abort');
    const task = await eventually(
      async () =>
        ((await h.get('/api/tasks')).body as { action: string; status: string; target: string; error: string }[]).find(
          (t) => t.action === 'export' && t.target === 'tailvm/bigvm' && t.status !== 'running',
        ),
      10_000,
      'the export task ended',
    );
    expect(task).toMatchObject({ status: 'error', error: expect.stringMatching(/disconnected/) });
  }, 30_000);

  it('a slow but flowing download is not cut by the idle time-out', async () => {
    const total = await new Promise<number>((resolve, reject) => {
      http
        .get(`${h.url}/api/vms/tailvm/bigvm/export`, (res) => {
          expect(res.statusCode).toBe(200);
          let received = 0;
          const started = Date.now();
          res.on('data', (chunk: Buffer) => {
            received += chunk.length;
            // Read at a trickle for three idle periods, then at full speed.
            if (Date.now() - started < IDLE_MS * 3) {
              res.pause();
              setTimeout(() => res.resume(), IDLE_MS / 3);
            }
          });
          res.on('end', () => resolve(received));
          res.on('error', reject);
          res.on('aborted', () => reject(new Error('download cut')));
        })
        .on('error', reject);
    });
    expect(total).toBeGreaterThan(0);
    await eventually(() => exportsLeft() === 0, 10_000, 'no VirtualMachineExport left');
    const task = ((await h.get('/api/tasks')).body as { action: string; status: string; target: string }[]).find(
      (t) => t.action === 'export' && t.target === 'tailvm/bigvm',
    );
    expect(task?.status).toBe('done');
  }, 60_000);
});

describe('SDK and OpenAPI', () => {
  it('the SDK reaches snapshots, clone and template, and gives the export URL', async () => {
    const corral = createCorralClient(h.url);
    expect(await corral.snapshots.list.query({ namespace: 'tailvm', vm: 'expvm' })).toEqual([]);
    await expect(corral.clones.create.mutate({ ns: 'tailvm', name: 'ghost', target: 'x' })).rejects.toMatchObject({
      data: { code: 'NOT_FOUND' },
    });
    expect(await corral.templates.set.mutate({ namespace: 'tailvm', name: 'expvm', on: false })).toMatchObject({
      isTemplate: false,
    });
    expect(vmExportUrl(`${h.url}/`, 'tailvm', 'expvm')).toBe(`${h.url}/api/vms/tailvm/expvm/export`);
    expect(vmExportUrl(h.url, 'tailvm', 'expvm', 'qcow2')).toBe(`${h.url}/api/vms/tailvm/expvm/export?format=qcow2`);
    const res = await fetch(vmExportUrl(h.url, 'tailvm', 'expvm'));
    expect(res.status).toBe(200);
    await res.arrayBuffer();
  }, 30_000);

  it('documents every new route with its real success status', async () => {
    const doc = (await h.get('/api/openapi.json')).body as {
      paths: Record<string, Record<string, { responses: Record<string, unknown>; parameters?: { name: string }[] }>>;
    };
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]?.[method]?.responses ?? {});
    expect(statuses('/vms/{namespace}/{vm}/snapshots', 'get')).toContain('200');
    expect(statuses('/vms/{namespace}/{vm}/snapshots', 'post')).toContain('202');
    expect(statuses('/vms/{namespace}/{vm}/snapshots/{snap}/restore', 'post')).toContain('202');
    expect(statuses('/vms/{namespace}/{vm}/snapshots/{snap}', 'delete')).toContain('200');
    expect(statuses('/vms/{ns}/{name}/clone', 'post')).toContain('202');
    expect(statuses('/vms/{namespace}/{name}/template', 'post')).toContain('200');
    expect(statuses('/vms/{namespace}/{name}/export', 'get')).toEqual(
      expect.arrayContaining(['200', '400', '404', '409', '501']),
    );
    expect(doc.paths['/vms/{namespace}/{name}/export']?.get?.parameters?.map((p) => p.name)).toEqual([
      'namespace',
      'name',
      'format',
      'context',
    ]);
  });
});
