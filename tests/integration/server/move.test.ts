/**
 * Cross-cluster move (ADR-0010) on two embedded clusters (`home`, `lab`) served by one Corral: destinations with
 * reasons, a preflight that refuses with reasons and touches nothing, a commit refused with 409, a move whose disk
 * at the destination exports the very bytes the source's did (a running VM: stopped, moved, started there, the
 * source kept stopped), and a move failed part-way by the destination refusing the VM create that leaves both
 * sides as they were (the uploaded DataVolume gone, the source running again) and can be retried. The moved VM
 * joins the source's pool (beside a kept source, instead of a deleted one), the destination's journal shows the
 * move as a `move-in` task, and a cancel mid-copy stops the upload and rolls both sides back. A CT moves the same
 * way, its claim's files travelling as the export's tar.gz into an archive DataVolume: the destination's export
 * hands out the same files (names, types, modes, contents) as the source's, streamed and staged.
 */
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { openExport, openVmExport } from '@/server/domain/vm-export';
import { readTar } from '@/sim/storage/tar';
import { volumeFiles } from '@/sim/storage/volume-files';
import { eventually, hangRequests, httpClient, taskEnd } from './harness';
import {
  ADMIN,
  CONTENT,
  CORRAL_OPTIONS,
  DVS,
  NS,
  PVCS,
  VMIS,
  VMS,
  createVm as importVm,
  exportedBytes as sessionBytes,
  phaseOf,
  startClusters,
  type Preflight,
} from './two-clusters';

/** Where CDI's upload proxy takes uploads (the path a hung proxy is simulated on). */
const UPLOAD = '/v1beta1/upload';

const SCS = 'storage.k8s.io/storageclasses';

let home: EmbeddedCluster;
let lab: EmbeddedCluster;
let corral: RunningCorral;

const { get, post } = httpClient(() => corral.url);

const ref = (context: string, name: string) => `kubevirt/${context}/${NS}/${name}`;
const sim = (context: string) => (context === 'home' ? home : lab);

interface TaskBody {
  id: string;
  action: string;
  target: string;
  status: string;
  error: string;
  log: string;
  cancellable?: true;
  cancelledBy?: string;
}

const poolMembers = async (path: string) =>
  ((await get('/api/folders')).body as { folders: { path: string; members: { ref: string }[] }[] }).folders
    .find((f) => f.path === path)
    ?.members.map((m) => m.ref);

/** The destination's `move-in` entry of `target` (newest first) in `context`'s journal. */
const moveIn = async (context: string, target: string) =>
  ((await get(`/api/tasks?context=${context}`)).body as TaskBody[]).find(
    (t) => t.action === 'move-in' && t.target === `${NS}/${target}`,
  );

/** VM `name` in `context`, its disk imported (holding `content` when given). */
const createVm = (context: string, name: string, content?: string) =>
  importVm({ post }, sim(context), name, { context, ...(content ? { content } : {}) });

async function startVm(context: string, name: string): Promise<void> {
  expect((await post(`/api/vms/${NS}/${name}/start`, { context })).status).toBeLessThan(300);
  await eventually(() => phaseOf(sim(context).store.get(VMIS, NS, name)) === 'Running', 20_000, `${name} running`);
}

/** The raw bytes KubeVirt's export server hands out for a stopped VM's boot disk in `context`. */
const exportedBytes = (context: string, name: string) =>
  sessionBytes(openVmExport(corral.registry.get(context).deps, ADMIN, NS, name));

beforeAll(async () => {
  ({ home, lab } = await startClusters());
  corral = await startCorral({
    ...CORRAL_OPTIONS,
    kube: { yaml: home.kubeconfig },
    moreClusters: [{ kube: { yaml: lab.kubeconfig }, demo: true }],
  });
  await eventually(() => corral.registry.status().every((c) => c.ready), 20_000, 'both clusters synced');
  await Promise.all([
    createVm('home', 'web', 'the disk of web'),
    createVm('home', 'db', 'the disk of db'),
    createVm('lab', 'taken'),
  ]);
}, 90_000);

afterAll(async () => {
  await corral?.close();
  await Promise.all([home?.close(), lab?.close()]);
});

describe('move destinations and preflight', () => {
  it('lists every served cluster; the source cluster is refused with why', async () => {
    const r = await get(`/api/move/destinations?ref=${encodeURIComponent(ref('home', 'web'))}`);
    expect(r.status).toBe(200);
    const body = r.body as { destinations: { context: string; ok: boolean; reasons: string[] }[] };
    expect(body.destinations.map((d) => [d.context, d.ok])).toEqual([
      ['home', false],
      ['lab', true],
    ]);
    expect(body.destinations[0]!.reasons[0]).toMatch(/same cluster and namespace as the source/);
  });

  it('refuses with every reason and a remedy each, and touches nothing', async () => {
    const before = lab.store.list(DVS, NS).length;
    const r = await post('/api/move/preflight', {
      ref: ref('home', 'web'),
      toBackend: 'kubevirt',
      toContext: 'lab',
      name: 'taken',
      toNamespace: 'nowhere',
    });
    expect(r.status).toBe(200);
    const p = r.body as Preflight;
    expect(p.ok).toBe(false);
    expect(p.refusals.map((x) => x.reason)).toEqual([expect.stringMatching(/namespace nowhere does not exist/)]);
    expect(p.refusals[0]!.remedy).toMatch(/create namespace nowhere/);
    const clash = (
      await post('/api/move/preflight', {
        ref: ref('home', 'web'),
        toBackend: 'kubevirt',
        toContext: 'lab',
        name: 'taken',
      })
    ).body as Preflight;
    expect(clash.refusals.map((x) => x.reason)).toEqual([
      expect.stringMatching(/a VM tailvm\/taken already exists in context lab/),
      expect.stringMatching(/a disk tailvm\/taken-disk already exists in context lab/),
    ]);
    const same = (
      await post('/api/move/preflight', { ref: ref('home', 'web'), toBackend: 'kubevirt', toContext: 'home' })
    ).body as Preflight;
    expect(same.ok).toBe(false);
    expect(same.refusals[0]!.reason).toMatch(/same cluster and namespace as the source \(home, tailvm\)/);
    const fine = (
      await post('/api/move/preflight', { ref: ref('home', 'web'), toBackend: 'kubevirt', toContext: 'lab' })
    ).body as Preflight;
    expect(fine.ok).toBe(true);
    expect(fine.warnings.join('\n')).toMatch(/MAC addresses change/);
    expect(fine.warnings.join('\n')).toMatch(/IP addresses change/);
    expect(fine.plan.disks.map((d) => d.to)).toEqual(['web-disk']);
    expect(lab.store.list(DVS, NS).length).toBe(before);
    expect(lab.store.get(VMS, NS, 'web')).toBeUndefined();
  });

  it('refuses a disk whose StorageClass the destination lacks, naming it and the remedy', async () => {
    const cls = (home.store.get(PVCS, NS, 'web-disk')!.spec as { storageClassName: string }).storageClassName;
    const saved = lab.store.get(SCS, undefined, cls)!;
    lab.store.delete(SCS, undefined, cls);
    try {
      const p = (
        await post('/api/move/preflight', { ref: ref('home', 'web'), toBackend: 'kubevirt', toContext: 'lab' })
      ).body as Preflight;
      expect(p.refusals).toEqual([
        {
          reason: `StorageClass ${cls} (disk rootdisk) is missing in context lab`,
          remedy: expect.stringMatching(new RegExp(`^create StorageClass ${cls} in lab, or move the disk`)),
        },
      ]);
    } finally {
      const { resourceVersion: _rv, uid: _uid, creationTimestamp: _ct, ...metadata } = saved.metadata;
      lab.store.create(SCS, { ...saved, metadata });
    }
  });

  it('bad input is a 400 naming the field; an unknown ref or context a 404', async () => {
    const base = { ref: ref('home', 'web'), toBackend: 'kubevirt', toContext: 'lab' };
    const cases: [unknown, number, RegExp][] = [
      [{ ...base, colour: 'red' }, 400, /colour/],
      [{ ...base, toBackend: 'pve' }, 400, /^toBackend: must be kubevirt/],
      [{ ...base, name: 'Bad_Name' }, 400, /^name: /],
      [{ ...base, deleteSource: 'yes' }, 400, /^deleteSource: /],
      [{ ...base, ref: 'web' }, 400, /^ref: must be backend\/context\/namespace\/name/],
      [{ ...base, ref: ref('mars', 'web') }, 404, /context mars is not served/],
      [{ ...base, ref: ref('home', 'ghost') }, 404, /VM tailvm\/ghost not found/],
      [{ ...base, toContext: 'mars' }, 404, /^toContext: context mars is not served/],
    ];
    for (const [body, status, message] of cases) {
      const r = await post('/api/move/preflight', body);
      expect([r.status, (r.body as { error: string }).error]).toEqual([status, expect.stringMatching(message)]);
    }
    expect((await get('/api/move/destinations?ref=kubevirt/home/tailvm/web&x=1')).status).toBe(400);
  });

  it('a refused commit is a 409 with the same list and starts no task', async () => {
    const tasks = ((await get('/api/tasks')).body as unknown[]).length;
    const r = await post('/api/move', {
      ref: ref('home', 'web'),
      toBackend: 'kubevirt',
      toContext: 'lab',
      name: 'taken',
    });
    expect(r.status).toBe(409);
    expect((r.body as { error: string }).error).toMatch(
      /^move refused: a VM tailvm\/taken already exists in context lab \(give the moved VM another name .*\); a disk tailvm\/taken-disk already exists/,
    );
    expect(((await get('/api/tasks')).body as unknown[]).length).toBe(tasks);
  });
});

describe('move commit', () => {
  it('moves a running VM: the destination disk exports the same bytes, it runs there, the source stays stopped', async () => {
    await startVm('home', 'web');
    const preflight = (
      await post('/api/move/preflight', { ref: ref('home', 'web'), toBackend: 'kubevirt', toContext: 'lab' })
    ).body as Preflight;
    expect(preflight.plan.source.running).toBe(true);
    expect((await post('/api/folders', { path: 'prod' })).status).toBe(201);
    expect((await post('/api/folders/members', { path: 'prod', ref: ref('home', 'web') })).status).toBe(200);
    const r = await post('/api/move', { ref: ref('home', 'web'), toBackend: 'kubevirt', toContext: 'lab' });
    expect(r.status).toBe(202);
    const accepted = r.body as { task: string; context: string; ref: string };
    expect(accepted).toEqual({ task: expect.stringMatching(/^move-web-/), context: 'home', ref: ref('lab', 'web') });
    const task = await taskEnd({ get }, accepted.task);
    expect([task.status, task.error]).toEqual(['done', '']);
    expect(task.log).toMatch(/stopping tailvm\/web/);
    expect(task.log).toMatch(
      /disk rootdisk: \d+ bytes uploaded into web-disk|disk .*: \d+ bytes uploaded into web-disk/,
    );
    expect(task.log).toMatch(/verified: 1 DataVolume Succeeded/);
    expect(task.log).toMatch(/started tailvm\/web in lab/);
    // The source was kept, so both instances sit in its pool; the destination's journal followed the move.
    expect(task.log).toMatch(/pool: kubevirt\/lab\/tailvm\/web added to pool 'prod'/);
    expect(await poolMembers('prod')).toEqual([ref('home', 'web'), ref('lab', 'web')]);
    const mirror = (await moveIn('lab', 'web'))!;
    expect([mirror.status, mirror.log]).toEqual(['done', expect.stringContaining(`follows task ${accepted.task}`)]);
    expect(mirror.log).toMatch(/verified: 1 DataVolume Succeeded/);
    expect(task.log).toContain(`shows in lab's journal as task ${mirror.id}`);
    await eventually(() => phaseOf(lab.store.get(VMIS, NS, 'web')) === 'Running', 20_000, 'moved VM running');
    expect(home.store.get(VMIS, NS, 'web')).toBeUndefined();
    const moved = lab.store.get(VMS, NS, 'web')!;
    expect(moved.metadata.annotations?.['corral.dev/moved-from']).toBe(ref('home', 'web'));
    expect(JSON.stringify(moved.spec)).not.toMatch(/macAddress/);
    // Stop the moved VM and compare what each side's export server hands out.
    expect((await post(`/api/vms/${NS}/web/stop`, { context: 'lab' })).status).toBeLessThan(300);
    await eventually(() => !lab.store.get(VMIS, NS, 'web'), 20_000, 'moved VM stopped');
    await eventually(() => !corral.registry.get('lab').cluster.cache.get('VirtualMachineInstance', NS, 'web'), 10_000);
    const [src, dst] = [await exportedBytes('home', 'web'), await exportedBytes('lab', 'web')];
    expect(src.length).toBeGreaterThan(0);
    expect(dst.equals(src)).toBe(true);
  }, 60_000);

  it('a fault at the destination part-way rolls it back, restarts the source, and the move can be retried (staged, deleting the source)', async () => {
    await startVm('home', 'db');
    const faultPath = `/apis/kubevirt.io/v1/namespaces/${NS}/virtualmachines`;
    lab.faults.set({ failFraction: 1, failStatus: 500, pathPrefix: faultPath });
    let task;
    try {
      const r = await post('/api/move', { ref: ref('home', 'db'), toBackend: 'kubevirt', toContext: 'lab' });
      expect(r.status).toBe(202);
      task = await taskEnd({ get }, (r.body as { task: string }).task);
    } finally {
      lab.faults.clear();
    }
    expect(task.status).toBe('error');
    expect(task.log).toMatch(/bytes uploaded into db-disk/);
    expect(task.log).toMatch(/deleted DataVolume tailvm\/db-disk in lab/);
    expect(task.log).toMatch(/started the source tailvm\/db again \(runStrategy Always\)/);
    expect(task.log).toMatch(/nothing moved; fix the cause and move again/);
    await eventually(() => !lab.store.get(DVS, NS, 'db-disk') && !lab.store.get(PVCS, NS, 'db-disk'), 10_000, 'gone');
    expect(lab.store.get(VMS, NS, 'db')).toBeUndefined();
    await eventually(() => phaseOf(home.store.get(VMIS, NS, 'db')) === 'Running', 20_000, 'source running again');
    expect(home.store.get(VMS, NS, 'db')).toBeDefined();
    // The same move, run again without the fault, goes through; the deleted source's place in its pool goes to it.
    expect((await post('/api/folders/members', { path: 'prod', ref: ref('home', 'db') })).status).toBe(200);
    await eventually(() => !corral.registry.get('lab').cluster.cache.get('DataVolume', NS, 'db-disk'), 10_000);
    const again = await post('/api/move', {
      ref: ref('home', 'db'),
      toBackend: 'kubevirt',
      toContext: 'lab',
      deleteSource: true,
      scratch: true,
    });
    expect(again.status).toBe(202);
    const done = await taskEnd({ get }, (again.body as { task: string }).task);
    expect([done.status, done.error]).toEqual(['done', '']);
    expect(done.log).toMatch(/bytes uploaded into db-disk \(staged on Corral\)/);
    await eventually(() => !home.store.get(VMS, NS, 'db'), 20_000, 'source deleted');
    expect(lab.store.get(VMS, NS, 'db')).toBeDefined();
    expect(done.log).toMatch(
      /pool: kubevirt\/lab\/tailvm\/db added to pool 'prod'; kubevirt\/home\/tailvm\/db removed/,
    );
    expect(await poolMembers('prod')).toEqual([ref('home', 'web'), ref('lab', 'web'), ref('lab', 'db')]);
  }, 60_000);
});

describe('move cancel', () => {
  it('a cancel mid-copy stops the upload, rolls both sides back, and the task (in both journals) ends cancelled', async () => {
    await startVm('home', 'web');
    // The destination's upload proxy takes the request and never answers: the copy is under way until stopped.
    const upload = hangRequests(lab.faults, UPLOAD);
    let task: TaskBody;
    try {
      const r = await post('/api/move', {
        ref: ref('home', 'web'),
        toBackend: 'kubevirt',
        toContext: 'lab',
        name: 'web-c',
      });
      expect(r.status).toBe(202);
      const id = (r.body as { task: string }).task;
      await eventually(upload.reached, 20_000, 'the upload under way');
      expect(((await get(`/api/tasks/${id}`)).body as TaskBody).cancellable).toBe(true);
      const cancel = await post(`/api/tasks/${id}/cancel`, {});
      expect([cancel.status, (cancel.body as TaskBody).cancelledBy]).toEqual([202, 'local']);
      task = (await taskEnd({ get }, id, 15_000)) as unknown as TaskBody;
    } finally {
      upload.release();
    }
    expect([task.status, task.error, task.cancelledBy]).toEqual(['error', 'cancelled by local', 'local']);
    expect(task.log).toMatch(/cancel requested by local/);
    expect(task.log).toMatch(/cancelled by local; rolling back/);
    expect(task.log).toMatch(/deleted DataVolume tailvm\/web-c-disk in lab/);
    expect(task.log).toMatch(/started the source tailvm\/web again \(runStrategy Always\)/);
    expect(task.log).toMatch(/nothing moved\n.*error: cancelled by local$/);
    const mirror = (await moveIn('lab', 'web-c'))!;
    expect([mirror.status, mirror.error]).toEqual(['error', 'cancelled by local']);
    // Both sides as before: nothing of web-c in lab, web running in home, its pool unchanged.
    await eventually(() => !lab.store.get(DVS, NS, 'web-c-disk') && !lab.store.get(PVCS, NS, 'web-c-disk'), 10_000);
    expect(lab.store.get(VMS, NS, 'web-c')).toBeUndefined();
    await eventually(() => phaseOf(home.store.get(VMIS, NS, 'web')) === 'Running', 20_000, 'source running again');
    expect(await poolMembers('prod')).not.toContain(ref('lab', 'web-c'));
    // A task that ended is refused; so is one that cannot stop part-way, an unknown id, and a stray field.
    const again = await post(`/api/tasks/${task.id}/cancel`, {});
    expect([again.status, (again.body as { error: string }).error]).toEqual([
      409,
      expect.stringMatching(/has already ended \(failed\)/),
    ]);
    const unknown = await post('/api/tasks/move-nothing-1-1/cancel', {});
    expect(unknown.status).toBe(404);
    const stray = await post(`/api/tasks/${task.id}/cancel`, { force: true });
    expect([stray.status, (stray.body as { error: string }).error]).toEqual([400, expect.stringMatching(/force/)]);
  }, 60_000);

  it('a running task that registered no cancel is refused with 409', async () => {
    const journal = corral.registry.get('home').journal;
    const running = journal.start('start', `${NS}/web`, 'local');
    try {
      const r = await post(`/api/tasks/${running.id}/cancel`, { context: 'home' });
      expect([r.status, (r.body as { error: string }).error]).toEqual([
        409,
        expect.stringMatching(/cannot be cancelled/),
      ]);
    } finally {
      running.done();
    }
  });
});

describe('CT move (kind ct)', () => {
  const PODS = '/pods';
  const ctRef = (context: string, name: string) => `kubevirt/${context}/${NS}/${name}`;
  const podPhase = (cluster: EmbeddedCluster, name: string) => phaseOf(cluster.store.get(PODS, NS, name));
  const body = (name: string, extra: Record<string, unknown> = {}) => ({
    ref: ctRef('home', name),
    kind: 'ct',
    toBackend: 'kubevirt',
    toContext: 'lab',
    ...extra,
  });

  async function createCt(context: string, name: string, content?: string): Promise<void> {
    const r = await post('/api/cts', { name, image: 'docker.io/library/debian:bookworm', disk: '1Gi', context });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const cluster = sim(context);
    await eventually(() => podPhase(cluster, name) === 'Running', 20_000, `CT ${name} running`);
    if (content)
      cluster.store.mutate(PVCS, NS, `${name}-data`, (pvc) => {
        pvc.metadata.annotations = { ...(pvc.metadata.annotations ?? {}), [CONTENT]: content };
      });
  }

  /**
   * The files (path → type, mode, contents) KubeVirt's export server hands out for the claim `<ct>-data` (the CT
   * stopped) in `context`: a CT's claim is a plain filesystem, exported only as files (its tar.gz, not raw).
   */
  async function claimFiles(context: string, ct: string): Promise<Map<string, string>> {
    const deps = corral.registry.get(context).deps;
    const claim = `${ct}-data`;
    const session = await openExport(deps, ADMIN, NS, ct, {
      source: { kind: 'PersistentVolumeClaim', name: claim },
      volume: claim,
      labels: {},
      archive: true,
    });
    try {
      expect(session.format).toBe('tar.gz');
      const res = await fetch(session.url, { headers: { 'x-kubevirt-export-token': session.token } });
      expect(res.status).toBe(200);
      const files = readTar(gunzipSync(Buffer.from(await res.arrayBuffer())));
      return new Map(files.map((f) => [f.path, `${f.type} ${f.mode.toString(8)} ${f.data.toString('base64')}`]));
    } finally {
      await session.close();
    }
  }

  beforeAll(async () => {
    await Promise.all([
      createCt('home', 'box', 'the volume of box'),
      createCt('home', 'cache', 'the volume of cache'),
      createCt('lab', 'taken-ct'),
    ]);
  }, 60_000);

  it('lists destinations and refuses with reasons, touching nothing; bad input is a 400 naming the field', async () => {
    const d = await get(`/api/move/destinations?kind=ct&ref=${encodeURIComponent(ctRef('home', 'box'))}`);
    expect(d.status).toBe(200);
    expect(
      (d.body as { destinations: { context: string; ok: boolean }[] }).destinations.map((x) => [x.context, x.ok]),
    ).toEqual([
      ['home', false],
      ['lab', true],
    ]);
    const taken = (await post('/api/move/preflight', body('box', { name: 'taken-ct', toNamespace: 'nowhere' })))
      .body as Preflight;
    expect(taken.ok).toBe(false);
    expect(taken.refusals.map((r) => r.reason)).toEqual([
      expect.stringMatching(/namespace nowhere does not exist in context lab/),
    ]);
    const clash = (await post('/api/move/preflight', body('box', { name: 'taken-ct' }))).body as Preflight;
    expect(clash.refusals).toEqual([
      { reason: 'a CT tailvm/taken-ct already exists in context lab', remedy: expect.stringMatching(/another name/) },
    ]);
    const same = (await post('/api/move/preflight', body('box', { toContext: 'home' }))).body as Preflight;
    expect(same.refusals[0]!.reason).toMatch(/same cluster and namespace as the source \(home, tailvm\)/);
    const fine = (await post('/api/move/preflight', body('box'))).body as Preflight;
    expect([fine.ok, fine.plan.source.running, fine.plan.disks.map((x) => x.to)]).toEqual([true, true, ['box-data']]);
    expect(fine.warnings.join('\n')).toMatch(/IP address changes/);
    expect(fine.warnings.join('\n')).toMatch(/the volume travels as its files \(a tar\): their owners are not kept/);
    expect(fine.plan.steps[0]).toBe('stop CT tailvm/box');
    expect(lab.store.get(PVCS, NS, 'box-data')).toBeUndefined();
    expect(podPhase(home, 'box')).toBe('Running');
    const cases: [unknown, number, RegExp][] = [
      [body('box', { kind: 'lxc' }), 400, /^kind: must be vm or ct/],
      [body('box', { toBackend: 'pve' }), 400, /^kind: a CT moves only between served clusters/],
      [body('ghost'), 404, /^ref: CT tailvm\/ghost not found in context home/],
      [body('web'), 404, /^ref: CT tailvm\/web not found/],
    ];
    for (const [input, status, message] of cases) {
      const r = await post('/api/move/preflight', input);
      expect([r.status, (r.body as { error: string }).error]).toEqual([status, expect.stringMatching(message)]);
    }
    const refused = await post('/api/move', body('box', { name: 'taken-ct' }));
    expect([refused.status, (refused.body as { error: string }).error]).toEqual([
      409,
      expect.stringMatching(/^move refused: a CT tailvm\/taken-ct already exists in context lab/),
    ]);
  });

  /** What a claim holds, read off the embedded cluster itself, in claimFiles' shape. */
  async function simFiles(cluster: EmbeddedCluster, claim: string): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const f of volumeFiles(cluster.store.get(PVCS, NS, claim)!)) {
      const chunks: Buffer[] = [];
      for await (const c of f.open() as AsyncIterable<Buffer>) chunks.push(c);
      out.set(f.path, `${f.type} ${f.mode.toString(8)} ${Buffer.concat(chunks).toString('base64')}`);
    }
    return out;
  }

  it('moves a running CT: its volume holds the same files at the destination, it runs there, the source stays stopped', async () => {
    expect((await post('/api/folders', { path: 'cts' })).status).toBe(201);
    expect((await post('/api/folders/members', { path: 'cts', ref: ctRef('home', 'box') })).status).toBe(200);
    const r = await post('/api/move', body('box'));
    expect(r.status).toBe(202);
    expect(r.body).toEqual({ task: expect.stringMatching(/^ct-move-box-/), context: 'home', ref: ctRef('lab', 'box') });
    const task = await taskEnd({ get }, (r.body as { task: string }).task);
    expect([task.status, task.error], task.log).toEqual(['done', '']);
    expect(task.log).toMatch(/stopping CT tailvm\/box/);
    expect(task.log).toMatch(/volume box-data is a filesystem: its files travel as tar\.gz from the export/);
    expect(task.log).toMatch(/volume box-data: \d+ bytes of tar uploaded into box-data/);
    expect(task.log).toMatch(/verified: CT tailvm\/box in lab exists/);
    expect(task.log).toMatch(/started CT tailvm\/box in lab/);
    // The source was kept, so both sit in its pool; lab's journal followed the move.
    expect(task.log).toMatch(/pool: kubevirt\/lab\/tailvm\/box added to pool 'cts'/);
    expect(await poolMembers('cts')).toEqual([ctRef('home', 'box'), ctRef('lab', 'box')]);
    const mirror = (await moveIn('lab', 'box'))!;
    expect([mirror.status, mirror.log]).toEqual(['done', expect.stringMatching(/started CT tailvm\/box in lab/)]);
    expect(podPhase(lab, 'box')).toBe('Running');
    expect(home.store.get(PODS, NS, 'box')).toBeUndefined();
    expect(home.store.get(PVCS, NS, 'box-data')).toBeDefined();
    const moved = lab.store.get(PVCS, NS, 'box-data')!;
    expect(moved.metadata.labels).toMatchObject({ 'corral.dev/ct': 'true', 'corral.dev/ct-name': 'box' });
    expect(moved.metadata.ownerReferences ?? []).toEqual([]);
    expect(JSON.parse(moved.metadata.annotations!['corral.ct/spec']!)).toMatchObject({ name: 'box', namespace: NS });
    // Uploaded into an archive DataVolume: CDI unpacked the files into the claim's filesystem.
    expect(moved.metadata.annotations!['cdi.kubevirt.io/storage.contentType']).toBe('archive');
    expect(lab.store.get(DVS, NS, 'box-data')).toBeUndefined();
    const listed = (await get('/api/cts?context=lab')).body as { name: string; phase: string }[];
    expect(listed.find((c) => c.name === 'box')?.phase).toBe('Running');
    // Stop the moved CT (its pod holds the claim) and compare the files each side's export server hands out.
    expect((await post(`/api/cts/${NS}/box/stop`, { context: 'lab' })).status).toBeLessThan(300);
    await eventually(() => !corral.registry.get('lab').cluster.cache.get('Pod', NS, 'box'), 20_000, 'moved CT stopped');
    const [src, dst] = [await claimFiles('home', 'box'), await claimFiles('lab', 'box')];
    expect([...src.keys()]).toEqual(expect.arrayContaining(['etc/hostname', 'etc/motd', 'root/seed.bin']));
    expect(Buffer.from(src.get('etc/motd')!.split(' ')[2]!, 'base64').toString()).toContain('the volume of box');
    expect([...dst.entries()]).toEqual([...src.entries()]);
  }, 60_000);

  it('a cancel mid-copy rolls both sides back and the task ends cancelled', async () => {
    // lab's upload proxy takes the request and never answers: the copy is under way until stopped.
    const upload = hangRequests(lab.faults, UPLOAD);
    let task: TaskBody;
    try {
      const r = await post('/api/move', body('cache'));
      expect(r.status).toBe(202);
      const id = (r.body as { task: string }).task;
      await eventually(upload.reached, 20_000, 'the upload under way');
      expect((await post(`/api/tasks/${id}/cancel`, {})).status).toBe(202);
      task = (await taskEnd({ get }, id, 15_000)) as unknown as TaskBody;
    } finally {
      upload.release();
    }
    expect([task.status, task.error], task.log).toEqual(['error', 'cancelled by local']);
    expect(task.log).toMatch(/deleted DataVolume tailvm\/cache-data in lab/);
    expect(task.log).toMatch(/started the source CT tailvm\/cache again/);
    expect((await moveIn('lab', 'cache'))?.error).toBe('cancelled by local');
    await eventually(() => !lab.store.get(DVS, NS, 'cache-data') && !lab.store.get(PVCS, NS, 'cache-data'), 10_000);
    await eventually(() => podPhase(home, 'cache') === 'Running', 20_000, 'source CT running again');
    await eventually(
      () => !corral.registry.get('lab').cluster.cache.get('PersistentVolumeClaim', NS, 'cache-data'),
      10_000,
    );
  }, 60_000);

  it('a fault at the destination part-way rolls it back and starts the source again; the retry (deleting the source) lands', async () => {
    lab.faults.set({ failFraction: 1, failStatus: 500, pathPrefix: `/api/v1/namespaces/${NS}/pods` });
    let task;
    try {
      const r = await post('/api/move', body('cache'));
      expect(r.status).toBe(202);
      task = await taskEnd({ get }, (r.body as { task: string }).task);
    } finally {
      lab.faults.clear();
    }
    expect(task.status).toBe('error');
    expect(task.log).toMatch(/bytes of tar uploaded into cache-data/);
    expect(task.log).toMatch(/deleted PersistentVolumeClaim tailvm\/cache-data in lab/);
    expect(task.log).toMatch(/started the source CT tailvm\/cache again/);
    expect(task.log).toMatch(/nothing moved; fix the cause and move again/);
    await eventually(() => !lab.store.get(PVCS, NS, 'cache-data') && !lab.store.get(DVS, NS, 'cache-data'), 10_000);
    expect(lab.store.get(PODS, NS, 'cache')).toBeUndefined();
    await eventually(() => podPhase(home, 'cache') === 'Running', 20_000, 'source CT running again');
    await eventually(
      () => !corral.registry.get('lab').cluster.cache.get('PersistentVolumeClaim', NS, 'cache-data'),
      10_000,
    );
    // The source runs again (its pod holds the claim, so no export): what its claim holds, read off the cluster.
    const before = await simFiles(home, 'cache-data');
    const again = await post('/api/move', body('cache', { deleteSource: true, scratch: true }));
    expect(again.status).toBe(202);
    const done = await taskEnd({ get }, (again.body as { task: string }).task);
    expect([done.status, done.error], done.log).toEqual(['done', '']);
    // Staged: the tar.gz unpacked into a file on Corral first, then uploaded with its length.
    expect(done.log).toMatch(/volume cache-data: \d+ bytes of tar uploaded into cache-data \(staged on Corral\)/);
    await eventually(() => !home.store.get(PVCS, NS, 'cache-data'), 20_000, 'source CT deleted');
    expect(podPhase(lab, 'cache')).toBe('Running');
    expect((await post(`/api/cts/${NS}/cache/stop`, { context: 'lab' })).status).toBeLessThan(300);
    await eventually(() => !corral.registry.get('lab').cluster.cache.get('Pod', NS, 'cache'), 20_000, 'cache stopped');
    expect([...(await claimFiles('lab', 'cache')).entries()]).toEqual([...before.entries()]);
  }, 90_000);
});
