/**
 * Moving a VM to a Proxmox VE host (ADR-0010, backend `pve`) without a real PVE: cluster `home`'s Corral moves to
 * "pve", which is cluster `lab`'s Corral answering its own Proxmox API (token auth) — so the PVE side runs Corral's
 * storage upload (content `import`), `import-from` create, task polling, start and deletes. Pinned: the destinations
 * list with a good, an unauthorized and an unreachable host; a refused preflight that touches nothing; a running VM
 * moved (stopped, its disk's bytes at lab equal to home's export, started there, the upload removed, the source kept
 * stopped); a fault at lab's create that rolls everything back and a retry that goes through.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { openVmExport } from '@/server/domain/vm-export';
import { createProxmoxHandler, type ProxmoxHandler } from '@/proxmox/index';
import { parseGrants } from '@/proxmox/auth/tokens';
import { PveClient } from '@/server/pve-client/client';
import { Readable } from 'node:stream';
import { eventually, hangRequests, httpClient, taskEnd } from './harness';
import {
  ADMIN,
  CONTENT,
  CORRAL_OPTIONS,
  createVm,
  DVS,
  exportedBytes,
  IMAGE_URL,
  NS,
  phaseOf,
  PVCS,
  startClusters,
  VMIS,
  VMS,
  type Preflight,
} from './two-clusters';

const PVE_VOLUME = 'corral.dev/pve-volume';
const SECRET = '3d9b1f7e-2a4c-4e8d-b6f0-9c1a2b3c4d5e';

let home: EmbeddedCluster;
let lab: EmbeddedCluster;
let pveCorral: RunningCorral;
let proxmox: ProxmoxHandler;
let corral: RunningCorral;

const api = httpClient(() => corral.url);
const { get, post } = api;
const lab$ = httpClient(() => pveCorral.url);

const ref = (name: string) => `kubevirt/home/${NS}/${name}`;
const importImages = () =>
  lab.store.list(DVS, NS).filter((dv) => dv.metadata.annotations?.[PVE_VOLUME]?.startsWith('local:import/'));

beforeAll(async () => {
  ({ home, lab } = await startClusters());
  pveCorral = await startCorral({ ...CORRAL_OPTIONS, kube: { yaml: lab.kubeconfig } });
  proxmox = createProxmoxHandler({
    services: pveCorral.services,
    grants: parseGrants(`root@pam!mover=${SECRET}`),
    log: () => undefined,
  });
  pveCorral.http.mountProxmox((req, res) => proxmox.handle(req, res));
  corral = await startCorral({
    ...CORRAL_OPTIONS,
    kube: { yaml: home.kubeconfig },
    pveHosts: [
      { name: 'pve', url: pveCorral.url, token: `root@pam!mover=${SECRET}`, pollMs: 50 },
      { name: 'pve-locked', url: pveCorral.url, token: 'root@pam!mover=not-the-secret' },
      { name: 'pve-gone', url: 'http://127.0.0.1:9', token: `root@pam!mover=${SECRET}` },
    ],
  });
  await Promise.all([corral.cluster.cache.waitForSync(20_000), pveCorral.cluster.cache.waitForSync(20_000)]);
  // A guest already on the PVE side, whose name a preflight must refuse.
  const taken = await lab$.post('/api/vms', { name: 'taken', import: IMAGE_URL, disk: '1G', mem: '1G', cpu: 1 });
  expect(taken.status).toBe(201);
  await Promise.all([
    createVm(api, home, 'web', { content: 'the disk of web', cpu: 2 }),
    createVm(api, home, 'db', { content: 'the disk of db', cpu: 2 }),
  ]);
}, 90_000);

afterAll(async () => {
  await corral?.close();
  proxmox?.close();
  await pveCorral?.close();
  await Promise.all([home?.close(), lab?.close()]);
});

describe("Corral's Proxmox API as the PVE host: storage upload", () => {
  it('takes an ISO into the library and refuses what PVE would, naming the parameter', async () => {
    const pve = new PveClient({ name: 'pve', url: pveCorral.url, token: `root@pam!mover=${SECRET}`, pollMs: 50 });
    try {
      const node = (await pve.nodes())[0]?.node ?? '';
      expect(node).not.toBe('');
      const iso = Buffer.from('an installer, byte for byte');
      const upid = await pve.upload(node, 'local', 'iso', 'tiny.iso', Readable.from([iso]), iso.length);
      expect(upid).toMatch(/^UPID:[^:]+:[0-9A-F]+:[0-9A-F]+:[0-9A-F]+:imgcopy:/);
      await pve.waitTask(node, upid, 10_000);
      const pvc = lab.store.get(PVCS, NS, 'tiny-iso');
      expect(pvc?.metadata.annotations?.[CONTENT]).toBe(
        `upload:sha256:${createHash('sha256').update(iso).digest('hex')} (${iso.length} bytes)`,
      );
      const listed = await lab$.get('/api2/json/nodes/' + node + '/storage/local/content?content=iso', {
        authorization: `PVEAPIToken=root@pam!mover=${SECRET}`,
      });
      expect((listed.body as { data: { volid: string }[] }).data.map((v) => v.volid)).toContain('local:iso/tiny-iso');
      await expect(pve.upload(node, 'local', 'import', 'disk.ova', Readable.from([iso]), iso.length)).rejects.toThrow(
        /400 .*filename: an import image must end in '.raw', '.qcow2', '.vmdk'/,
      );
      await expect(pve.upload(node, 'local-lvm', 'iso', 'a.iso', Readable.from([iso]), iso.length)).rejects.toThrow(
        /storage 'local-lvm' does not support content-type 'iso'/,
      );
    } finally {
      pve.close();
    }
  });
});

describe('move to a Proxmox VE host', () => {
  it('lists the PVE hosts as destinations, the refused ones with why, every one noting moves there are one way', async () => {
    const r = await get(`/api/move/destinations?ref=${encodeURIComponent(ref('web'))}`);
    expect(r.status).toBe(200);
    const rows = (
      r.body as { destinations: { backend: string; context: string; ok: boolean; reasons: string[]; note?: string }[] }
    ).destinations;
    expect(rows.map((d) => [d.backend, d.context, d.ok])).toEqual([
      ['kubevirt', 'home', false],
      ['pve', 'pve', true],
      ['pve', 'pve-locked', false],
      ['pve', 'pve-gone', false],
    ]);
    expect(rows[2]!.reasons).toEqual([expect.stringMatching(/PVE host pve-locked refuses Corral's API token \(401\)/)]);
    expect(rows[3]!.reasons).toEqual([expect.stringMatching(/PVE host pve-gone does not answer/)]);
    expect(rows[1]!.note).toMatch(/one way: .* no disk download/);
  });

  it('refuses a taken name and vmid with remedies, and touches nothing on either side', async () => {
    const before = lab.store.list(DVS, NS).length;
    const taken = (await lab$.get('/api/vms')).body as { name: string; vmid?: number }[];
    const vmid = (taken as { name: string; vmid?: number }[]).find((v) => v.name === 'taken')?.vmid;
    expect(vmid).toBeGreaterThanOrEqual(100);
    const r = await post('/api/move/preflight', {
      ref: ref('web'),
      toBackend: 'pve',
      toContext: 'pve',
      name: 'taken',
      vmid,
    });
    expect(r.status).toBe(200);
    const p = r.body as Preflight;
    expect(p.ok).toBe(false);
    expect(p.refusals.map((x) => x.reason)).toEqual([
      expect.stringMatching(new RegExp(`vmid ${vmid} is taken on pve \\(qemu taken on `)),
      expect.stringMatching(/a guest named taken already exists on pve/),
    ]);
    expect(p.refusals[1]!.remedy).toMatch(/another name/);
    expect(p.warnings).toContainEqual(expect.stringMatching(/MAC and IP addresses change/));
    expect(p.dropped).toContainEqual(expect.stringMatching(/labels and annotations other than tags/));
    expect(p.plan.disks).toEqual([expect.objectContaining({ to: 'scsi0', storageClass: 'local-lvm' })]);
    // A refused commit is a 409 with the same reasons.
    const commit = await post('/api/move', { ref: ref('web'), toBackend: 'pve', toContext: 'pve', name: 'taken' });
    expect(commit.status).toBe(409);
    expect((commit.body as { error: string }).error).toMatch(
      /^move refused: a guest named taken already exists on pve/,
    );
    // PVE-only fields mean nothing for a cluster, and a PVE host has no namespaces.
    const bad = await post('/api/move/preflight', {
      ref: ref('web'),
      toBackend: 'kubevirt',
      toContext: 'home',
      vmid: 200,
    });
    expect([bad.status, (bad.body as { error: string }).error]).toEqual([
      400,
      expect.stringMatching(/^vmid: only for/),
    ]);
    const ns = await post('/api/move/preflight', { ref: ref('web'), toBackend: 'pve', toNamespace: 'x' });
    expect([ns.status, (ns.body as { error: string }).error]).toEqual([400, expect.stringMatching(/^toNamespace:/)]);
    expect(lab.store.list(DVS, NS).length).toBe(before);
    expect(home.store.get(VMS, NS, 'web')).toBeDefined();
  });

  it('moves a running VM: its disk bytes land on the PVE side, it runs there, the upload is removed, the source kept', async () => {
    expect((await post(`/api/vms/${NS}/web/start`, {})).status).toBeLessThan(300);
    await eventually(() => phaseOf(home.store.get(VMIS, NS, 'web')) === 'Running', 20_000, 'web running');
    const r = await post('/api/move', { ref: ref('web'), toBackend: 'pve', toContext: 'pve' });
    expect(r.status).toBe(202);
    const accepted = r.body as { task: string; ref: string };
    expect(accepted.ref).toMatch(/^pve\/pve\/[^/]+\/web$/);
    const task = await taskEnd({ get }, accepted.task);
    expect([task.status, task.error]).toEqual(['done', '']);
    expect(task.log).toMatch(/stopping tailvm\/web/);
    expect(task.log).toMatch(/disk rootdisk: \d+ bytes stored as local:import\/vm-\d+-web-rootdisk\.raw/);
    expect(task.log).toMatch(/started VM \d+ on pve/);
    expect(task.log).toMatch(/removed local:import\/vm-\d+-web-rootdisk\.raw from pve/);
    // The bytes PVE's side stored are exactly the ones home exports (the clone carries the upload's digest).
    const bytes = await exportedBytes(openVmExport(corral.services.deps, ADMIN, NS, 'web'));
    const digest = `upload:sha256:${createHash('sha256').update(bytes).digest('hex')} (${bytes.length} bytes)`;
    const vm = lab.store.get(VMS, NS, 'web');
    expect(vm?.metadata.labels?.['corral.io/proxmox-vmid']).toMatch(/^\d+$/);
    const disks = lab.store
      .list(PVCS, NS)
      .filter((p) => p.metadata.labels?.['corral.dev/vm'] === 'web' || p.metadata.name?.startsWith('web-'));
    expect(disks.map((p) => p.metadata.annotations?.[CONTENT])).toContain(digest);
    await eventually(() => phaseOf(lab.store.get(VMIS, NS, 'web')) === 'Running', 20_000, 'web running on PVE');
    await eventually(() => importImages().length === 0, 10_000, 'the uploaded image removed');
    expect(home.store.get(VMS, NS, 'web')).toBeDefined();
    expect(phaseOf(home.store.get(VMIS, NS, 'web'))).not.toBe('Running');
  }, 60_000);

  it("a fault at the PVE side's create rolls back what the move made there, and the same move then goes through", async () => {
    lab.faults.set({
      failFraction: 1,
      failStatus: 500,
      pathPrefix: `/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines`,
    });
    let task;
    try {
      const r = await post('/api/move', { ref: ref('db'), toBackend: 'pve', toContext: 'pve', name: 'db2' });
      expect(r.status).toBe(202);
      task = await taskEnd({ get }, (r.body as { task: string }).task);
    } finally {
      lab.faults.clear();
    }
    expect(task.status).toBe('error');
    expect(task.log).toMatch(/disk rootdisk: \d+ bytes stored as local:import\/vm-\d+-db2-rootdisk\.raw/);
    expect(task.log).toMatch(/deleted local:import\/vm-\d+-db2-rootdisk\.raw on pve/);
    expect(task.log).toMatch(/the source tailvm\/db was not touched/);
    expect(task.log).toMatch(/nothing moved; fix the cause and move again/);
    await eventually(() => importImages().length === 0, 10_000, 'the uploaded image removed');
    expect(lab.store.get(VMS, NS, 'db2')).toBeUndefined();
    expect(home.store.get(VMS, NS, 'db')).toBeDefined();
    const again = await post('/api/move', {
      ref: ref('db'),
      toBackend: 'pve',
      toContext: 'pve',
      name: 'db2',
      deleteSource: true,
    });
    expect(again.status).toBe(202);
    const done = await taskEnd({ get }, (again.body as { task: string }).task);
    expect([done.status, done.error]).toEqual(['done', '']);
    expect(lab.store.get(VMS, NS, 'db2')).toBeDefined();
    await eventually(() => !home.store.get(VMS, NS, 'db'), 20_000, 'source deleted');
  }, 60_000);
  it('a cancel mid-upload cuts the upload, removes what the move made on the PVE side and restarts the source', async () => {
    const UPLOAD = '/v1beta1/upload';
    expect((await post(`/api/vms/${NS}/web/start`, {})).status).toBeLessThan(300);
    await eventually(() => phaseOf(home.store.get(VMIS, NS, 'web')) === 'Running', 20_000, 'web running');
    // The PVE side's CDI takes the upload and never answers: the move's upload is under way until stopped.
    const upload = hangRequests(lab.faults, UPLOAD);
    let task;
    try {
      const r = await post('/api/move', { ref: ref('web'), toBackend: 'pve', toContext: 'pve', name: 'web-c' });
      expect(r.status).toBe(202);
      const id = (r.body as { task: string }).task;
      await eventually(upload.reached, 20_000, 'the upload under way');
      expect(((await get(`/api/tasks/${id}`)).body as { cancellable?: boolean }).cancellable).toBe(true);
      const cancel = await post(`/api/tasks/${id}/cancel`, {});
      expect(cancel.status).toBe(202);
      task = await taskEnd({ get }, id, 20_000);
    } finally {
      upload.release();
    }
    expect([task.status, task.error]).toEqual(['error', 'cancelled by local']);
    expect(task.log).toMatch(/cancelled by local; rolling back/);
    expect(task.log).toMatch(
      /(deleted|is not on pve).*local:import\/vm-\d+-web-c-rootdisk\.raw|local:import\/vm-\d+-web-c-rootdisk\.raw (is not on pve|on pve)/,
    );
    expect(task.log).toMatch(/started the source tailvm\/web again/);
    expect(task.log).toMatch(/nothing moved\n/);
    await eventually(() => importImages().length === 0, 20_000, 'no uploaded image left on the PVE side');
    expect(lab.store.get(VMS, NS, 'web-c')).toBeUndefined();
    await eventually(() => phaseOf(home.store.get(VMIS, NS, 'web')) === 'Running', 20_000, 'source running again');
  }, 60_000);
});
