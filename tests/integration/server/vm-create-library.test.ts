/**
 * Creating a VM from the image library (POST /api/vms with `dataVolume` or `isoDataVolume`) on the embedded cluster:
 * an imported disk becomes a CDI clone as the root disk; an uploaded ISO is attached read-only as a cdrom that boots
 * first, beside a blank root disk, and survives the VM's deletion; a missing image is a 400 naming the field, an
 * unfinished one (an upload cut off) a 409 naming its phase — through `pvc` too.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startHarness, taskDone, type Harness } from './harness';

const IMAGE_URL = 'https://cloud-images.ubuntu.com/noble/current/noble-server-cloudimg-amd64.img';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ fleet: 'empty', speed: 20 });
  const imported = await h.post('/api/datavolumes', { name: 'golden', url: IMAGE_URL, size: '2Gi' });
  expect(imported.status).toBe(201);
  const iso = await fetch(`${h.url}/api/datavolumes/tailvm/installer/upload?size=1Gi&contentType=iso`, {
    method: 'POST',
    headers: { 'content-type': 'application/octet-stream' },
    body: randomBytes(256 * 1024),
  });
  expect(iso.status).toBe(200);
  await eventually(
    async () => {
      const rows = (await h.get('/api/datavolumes')).body as { name: string; phase: string }[];
      return ['golden', 'installer'].every((n) => rows.find((r) => r.name === n)?.phase === 'Succeeded');
    },
    30_000,
    'golden and installer Succeeded',
  );
}, 60_000);
afterAll(async () => {
  await h?.close();
});

type Dict = Record<string, unknown>;
const vmSpec = (name: string) => {
  const vm = h.sim.store.get('kubevirt.io/virtualmachines', 'tailvm', name);
  const tpl = (vm?.spec as Dict).template as Dict;
  const spec = tpl.spec as { domain: { devices: { disks: Dict[] } }; volumes: Dict[] };
  return { vm, disks: spec.domain.devices.disks, volumes: spec.volumes };
};

/** Starts an upload, sends part of it once CDI is ready, then hangs up: the DataVolume stays UploadReady. */
async function cutUpload(name: string): Promise<void> {
  await new Promise<void>((resolve) => {
    const req = request(new URL(`${h.url}/api/datavolumes/tailvm/${name}/upload?size=1Gi&contentType=iso`), {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(8 * 1024 * 1024) },
    });
    req.on('error', () => resolve());
    req.flushHeaders();
    void eventually(
      async () => h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', name)?.status,
      20_000,
      'DataVolume',
    ).then(() =>
      eventually(
        () =>
          (h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', name)?.status as Dict | undefined)?.phase ===
          'UploadReady',
        20_000,
        'UploadReady',
      ).then(() => req.write(randomBytes(1024 * 1024), () => setTimeout(() => (req.destroy(), resolve()), 200))),
    );
  });
  await eventually(
    () =>
      h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', name)?.metadata.annotations?.['corral.dev/upload-error'],
    10_000,
    'the cut-off noted on the DataVolume',
  );
}

describe('create a VM from the image library', () => {
  it('dataVolume: the root disk is a CDI clone of the imported image, at least as large as it', async () => {
    const res = await h.post('/api/vms', {
      name: 'from-golden',
      dataVolume: 'golden',
      disk: '1Gi',
      cpu: 1,
      mem: '1Gi',
    });
    expect(res.status).toBe(201);
    await taskDone(h, (res.body as { task: string }).task);
    const disk = h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'from-golden-disk');
    expect((disk?.spec as Dict).source).toEqual({ pvc: { namespace: 'tailvm', name: 'golden' } });
    expect(JSON.stringify((disk?.spec as Dict).storage)).toContain('"2Gi"');
    const { vm, volumes } = vmSpec('from-golden');
    expect(volumes).toContainEqual({ name: 'rootdisk', dataVolume: { name: 'from-golden-disk' } });
    expect(vm?.metadata.annotations?.['corral.dev/source']).toBe('{"dataVolume":"golden"}');
    await eventually(
      () =>
        (h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'from-golden-disk')?.status as Dict | undefined)
          ?.phase === 'Succeeded',
      30_000,
      'the clone Succeeded',
    );
  }, 60_000);

  it('isoDataVolume: the ISO is a read-only cdrom booted first, beside a blank root disk; deleting the VM keeps it', async () => {
    const res = await h.post('/api/vms', { name: 'from-iso', isoDataVolume: 'installer', disk: '4Gi', start: true });
    expect(res.status).toBe(201);
    await taskDone(h, (res.body as { task: string }).task);
    const { disks, volumes } = vmSpec('from-iso');
    expect(disks).toContainEqual({ name: 'installer', cdrom: { bus: 'sata' }, bootOrder: 1 });
    expect(disks).toContainEqual({ name: 'rootdisk', disk: { bus: 'virtio' }, bootOrder: 2 });
    expect(volumes).toContainEqual({
      name: 'installer',
      persistentVolumeClaim: { claimName: 'installer', readOnly: true },
    });
    const root = h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'from-iso-disk');
    expect((root?.spec as Dict).source).toEqual({ blank: {} });
    await eventually(
      async () =>
        ((await h.get('/api/vms')).body as { name: string; status: string }[]).find((v) => v.name === 'from-iso')
          ?.status === 'Running',
      30_000,
      'from-iso Running',
    );

    const deleted = await h.del('/api/vms/tailvm/from-iso');
    expect(deleted.status).toBe(200);
    const removed = (deleted.body as { removed: string[] }).removed;
    expect(removed).toContain('DataVolume/tailvm/from-iso-disk');
    expect(removed.filter((r) => r.endsWith('/installer'))).toEqual([]);
    expect(h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'installer')).toBeDefined();
    expect(
      h.sim.store.get('/persistentvolumeclaims', 'tailvm', 'installer')?.metadata.deletionTimestamp,
    ).toBeUndefined();
    const rows = (await h.get('/api/datavolumes')).body as { name: string; phase: string }[];
    expect(rows.find((r) => r.name === 'installer')?.phase).toBe('Succeeded');
  }, 60_000);

  it('refuses a missing image with 400 naming the field, and the wrong kind of image', async () => {
    const cases: [Dict, RegExp][] = [
      [{ name: 'x1', dataVolume: 'nope' }, /^dataVolume: no imported image \(DataVolume\) 'nope' in namespace tailvm/],
      [{ name: 'x2', isoDataVolume: 'nope' }, /^isoDataVolume: no imported image/],
      [
        { name: 'x3', dataVolume: 'golden', namespace: 'elsewhere' },
        /^dataVolume: no imported image .* in namespace elsewhere/,
      ],
      [
        { name: 'x4', dataVolume: 'installer' },
        /^dataVolume: tailvm\/installer is an ISO, not a disk image; use isoDataVolume/,
      ],
      [
        { name: 'x5', isoDataVolume: 'golden' },
        /^isoDataVolume: tailvm\/golden is a disk image, not an ISO; use dataVolume/,
      ],
      [
        { name: 'x6', dataVolume: 'from-golden-disk' },
        /^dataVolume: DataVolume tailvm\/from-golden-disk is a disk of VM from-golden/,
      ],
      [
        { name: 'x7', dataVolume: 'golden', pvc: 'golden' },
        /^source: exactly one source is allowed, got pvc and dataVolume/,
      ],
      [{ name: 'x8', isoDataVolume: 'Bad_Name' }, /^isoDataVolume: /],
    ];
    for (const [body, message] of cases) {
      const res = await h.post('/api/vms', body);
      expect({ body, status: res.status, error: (res.body as { error: string }).error }).toEqual({
        body,
        status: 400,
        error: expect.stringMatching(message),
      });
    }
    const names = h.sim.store.list('kubevirt.io/virtualmachines', 'tailvm').map((v) => v.metadata.name);
    expect(names.filter((n) => /^x\d$/.test(n ?? ''))).toEqual([]);
    expect(h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'x1-disk')).toBeUndefined();
  });

  it('an upload that was cut off is a 409 naming its phase, whether named as an ISO, a disk or a PVC', async () => {
    await cutUpload('half-iso');
    for (const body of [
      { name: 'y1', isoDataVolume: 'half-iso' },
      { name: 'y2', pvc: 'half-iso' },
    ]) {
      const res = await h.post('/api/vms', body);
      const field = Object.keys(body)[1];
      expect({ status: res.status, error: (res.body as { error: string }).error }).toEqual({
        status: 409,
        error: expect.stringMatching(
          new RegExp(
            `^${field}: DataVolume tailvm/half-iso is UploadReady \\(upload cut off after \\d+ bytes.*\\), not Succeeded`,
          ),
        ),
      });
    }
    expect(h.sim.store.get('kubevirt.io/virtualmachines', 'tailvm', 'y1')).toBeUndefined();
    expect(h.sim.store.get('cdi.kubevirt.io/datavolumes', 'tailvm', 'y2-disk')).toBeUndefined();
  }, 60_000);
});
