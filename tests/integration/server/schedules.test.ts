/**
 * Snapshot and power schedules end to end on the embedded cluster, its clock sped up 60× (a `* * * * *` CronJob
 * fires about once a second): the extension installs the runner's ServiceAccount, token and RBAC; a schedule is a
 * CronJob whose Jobs run Corral's image, which the embedded kubelet executes in this process with the runner's token
 * (src/server/tools/schedule-runtime.ts); each run snapshots the tagged VMs and prunes beyond keep, or stops/starts
 * them, records the run and shows in the task log. 409 before the extension is installed, 404/400 for bad requests;
 * uninstalling leaves no labelled object behind (CronJobs included) while the snapshots stay.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedCluster, type EmbeddedCluster } from '@/sim/index';
import { startCorral, type RunningCorral } from '@/server/start';
import { corralContainerRuntime } from '@/server/tools/schedule-runtime';
import type { ScheduleRow, ScheduleRun } from '@/server/schemas/schedules';
import { eventually } from './harness';

const NS = 'tailvm';
const VMS = 'kubevirt.io/virtualmachines';
const SNAPS = 'snapshot.kubevirt.io/virtualmachinesnapshots';
const DVS = 'cdi.kubevirt.io/datavolumes';
const RBAC = 'rbac.authorization.k8s.io';
const EXT = 'corral.dev/extension';
const EXT_KINDS = [
  '/serviceaccounts',
  '/secrets',
  '/configmaps',
  `${RBAC}/roles`,
  `${RBAC}/rolebindings`,
  `${RBAC}/clusterroles`,
  `${RBAC}/clusterrolebindings`,
  'batch/cronjobs',
];
const IMAGE_URL = 'https://cloud-images.ubuntu.com/jammy/current/jammy-server-cloudimg-amd64.img';

let sim: EmbeddedCluster;
let corral: RunningCorral;

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(corral.url + path, {
    method,
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const phaseOf = (o: unknown) => (o as { status?: { phase?: string } } | undefined)?.status?.phase;
const printable = (vm: string) =>
  (sim.store.get(VMS, NS, vm)?.status as { printableStatus?: string } | undefined)?.printableStatus;

async function createVm(name: string, tag: string, start: boolean): Promise<void> {
  const r = await call('POST', '/api/vms', { name, import: IMAGE_URL, disk: '1G', mem: '1G', cpu: 1, start });
  expect(r.status).toBe(201);
  const vm = sim.store.get(VMS, NS, name) as unknown as {
    spec: { template: { spec: { volumes: { dataVolume?: { name: string } }[] } } };
  };
  const dv = vm.spec.template.spec.volumes.find((v) => v.dataVolume)?.dataVolume?.name ?? '';
  await eventually(() => phaseOf(sim.store.get(DVS, NS, dv)) === 'Succeeded', 30_000, `${name}'s disk imported`);
  sim.store.mutate(VMS, NS, name, (vm) => {
    vm.metadata.labels = { ...vm.metadata.labels, [`corral.dev/tag.${tag}`]: 'true' };
  });
}

const scheduleSnaps = (vm: string, schedule: string) =>
  sim.store
    .list(SNAPS, NS)
    .filter(
      (s) =>
        s.metadata.labels?.['corral.dev/schedule'] === schedule &&
        (s.spec as { source: { name: string } }).source.name === vm,
    );

const labelledBy = (extension: string) =>
  EXT_KINDS.flatMap((k) =>
    sim.store
      .list(k)
      .filter((o) => o.metadata.labels?.[EXT] === extension)
      .map((o) => `${k}/${o.metadata.name}`),
  );

beforeAll(async () => {
  sim = await startEmbeddedCluster({ port: 0, fleet: 'empty', speed: 60, containerRuntime: corralContainerRuntime() });
  corral = await startCorral({
    kube: { yaml: sim.kubeconfig },
    port: 0,
    host: '127.0.0.1',
    next: false,
    plugins: false,
    config: { defaultNamespace: NS, pollMs: 50, waitTimeoutMs: 30_000 },
  });
  await corral.cluster.cache.waitForSync(20_000);
}, 60_000);

afterAll(async () => {
  await corral?.close();
  await sim?.close();
});

describe('schedules', () => {
  it('refuses a schedule whose extension is not installed (409), bad input (400) and unknown names (404)', async () => {
    const body = { name: 'nightly', type: 'snapshot', cron: '@daily', target: { kind: 'tag', tag: 'backup' }, keep: 7 };
    const r = await call('POST', '/api/schedules', body);
    expect(r.status).toBe(409);
    expect(r.body.error).toContain('snapshot-schedules extension is not installed');
    expect((await call('POST', '/api/schedules', { ...body, cron: '61 * * * *' })).body.error).toContain(
      'cron: minute: 61 is outside 0-59',
    );
    const unknown = await call('POST', '/api/schedules', { ...body, colour: 'red' });
    expect(unknown.status).toBe(400);
    expect(String(unknown.body.error)).toContain('colour');
    expect((await call('POST', '/api/schedules', { ...body, name: 'Bad_Name' })).status).toBe(400);
    expect((await call('GET', '/api/schedules/nope')).status).toBe(404);
    expect((await call('POST', '/api/schedules/nope/run')).status).toBe(404);
    expect((await call('DELETE', '/api/schedules/nope')).status).toBe(404);
    expect((await call('GET', '/api/schedules')).body).toEqual([]);
  });

  it('a snapshot schedule snapshots the tagged VMs on time and prunes its own beyond keep', async () => {
    await createVm('alpha', 'backup', false);
    await createVm('beta', 'other', false);
    // A snapshot taken by hand: the schedule never prunes it.
    const manual = await call('POST', `/api/vms/${NS}/alpha/snapshots`, { name: 'by-hand' });
    expect(manual.status).toBe(202);

    const install = await call('POST', '/api/plugins/snapshot-schedules/install');
    expect(install.status).toBe(200);
    const created = await call('POST', '/api/schedules', {
      name: 'nightly',
      type: 'snapshot',
      cron: '* * * * *',
      target: { kind: 'tag', tag: 'backup' },
      keep: 2,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'nightly', enabled: true, keep: 2, extension: 'snapshot-schedules' });
    const cj = sim.store.get('batch/cronjobs', NS, 'corral-sched-nightly');
    expect(cj?.metadata.labels).toMatchObject({ 'corral.dev/schedule': 'nightly', [EXT]: 'snapshot-schedules' });

    // Three runs by the CronJob: three snapshots taken, the oldest pruned each time beyond 2.
    const runs = await eventually(
      async () => {
        const list = (await call('GET', '/api/schedules/nightly/runs')).body as unknown as ScheduleRun[];
        return list.filter((r) => r.trigger === 'schedule' && r.status === 'ok').length >= 3 ? list : undefined;
      },
      60_000,
      'three scheduled runs',
    );
    expect(runs[0]).toMatchObject({ by: 'cronjob/corral-sched-nightly', message: '1 VM done' });
    expect(runs.flatMap((r) => r.lines).some((l) => l.includes('pruned snapshot nightly-'))).toBe(true);
    expect(scheduleSnaps('alpha', 'nightly').length).toBeLessThanOrEqual(2);
    expect(scheduleSnaps('beta', 'nightly')).toEqual([]);
    expect(
      sim.store.list(SNAPS, NS).some((s) => s.metadata.annotations?.['corral.dev/snapshot-name'] === 'by-hand'),
    ).toBe(true);

    // The Jobs ran as the runner ServiceAccount, and the pod's log is the runner's output.
    const jobs = sim.store
      .list('batch/jobs', NS)
      .filter((j) => j.metadata.labels?.['corral.dev/schedule'] === 'nightly');
    expect(jobs.length).toBeGreaterThan(0);
    expect(jobs.length).toBeLessThanOrEqual(3 + 3 + 1); // history limits (3 ok, 3 failed) + an active one
    const pod = sim.store.list('/pods', NS).find((p) => p.metadata.labels?.['job-name'] === jobs[0]!.metadata.name);
    expect((pod?.spec as { serviceAccountName?: string }).serviceAccountName).toBe('corral-snapshot-scheduler');

    // Each run is a task in Corral's log.
    await corral.services.schedules.runs('nightly');
    const tasks = (await call('GET', '/api/tasks')).body as unknown as {
      action: string;
      target: string;
      caller: string;
    }[];
    expect(
      tasks.filter((t) => t.action === 'schedule-run' && t.target === 'schedule/nightly').length,
    ).toBeGreaterThanOrEqual(3);

    // Run now: in Corral, as a task, recorded as manual.
    const now = await call('POST', '/api/schedules/nightly/run');
    expect(now.status).toBe(200);
    expect(now.body).toMatchObject({ run: { trigger: 'manual', status: 'ok' }, task: expect.any(String) });
    const task = (await call('GET', `/api/tasks/${String(now.body.task)}`)).body as { status: string; log: string };
    expect(task.status).toBe('done');
    expect(task.log).toContain('alpha: created snapshot nightly-');
    // Copied into the task log once: run now's own task, not a second one from the runs ConfigMap.
    await corral.services.schedules.runs('nightly');
    const manualRuns = (
      (await call('GET', '/api/tasks')).body as unknown as { caller: string; target: string }[]
    ).filter((t) => t.target === 'schedule/nightly' && !t.caller.startsWith('cronjob/'));
    expect(manualRuns.filter((t) => (t as { action?: string }).action === 'schedule-run')).toHaveLength(1);

    // A VM's own view lists the schedule through its tag.
    const forVm = (await call('GET', `/api/schedules?namespace=${NS}&vm=alpha`)).body as unknown as ScheduleRow[];
    expect(forVm.map((s) => s.name)).toEqual(['nightly']);
    expect((await call('GET', `/api/schedules?namespace=${NS}&vm=beta`)).body).toEqual([]);
  }, 120_000);

  it('a power schedule stops and starts the tagged VMs', async () => {
    await createVm('lab1', 'lab', true);
    await eventually(() => printable('lab1') === 'Running', 30_000, 'lab1 running');
    const before = await call('POST', '/api/schedules', {
      name: 'lab-off',
      type: 'power',
      cron: '* * * * *',
      target: { kind: 'tag', tag: 'lab' },
      action: 'stop',
    });
    expect(before.status).toBe(409);
    expect(before.body.error).toContain('power-schedules extension is not installed');
    expect((await call('POST', '/api/plugins/power-schedules/install')).status).toBe(200);
    expect(
      (
        await call('POST', '/api/schedules', {
          name: 'lab-off',
          type: 'power',
          cron: '* * * * *',
          target: { kind: 'tag', tag: 'lab' },
          action: 'stop',
        })
      ).status,
    ).toBe(201);
    await eventually(() => printable('lab1') === 'Stopped', 60_000, 'lab1 stopped by the schedule');
    const patched = await fetch(`${corral.url}/api/schedules/lab-off`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ action: 'start' }),
    });
    expect(patched.status).toBe(200);
    await eventually(() => printable('lab1') === 'Running', 60_000, 'lab1 started by the schedule');
    const badPatch = await fetch(`${corral.url}/api/schedules/lab-off`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ keep: 3 }),
    });
    expect(badPatch.status).toBe(400);
  }, 120_000);

  it('uninstall removes every labelled object, CronJobs and run histories included; snapshots stay', async () => {
    expect(labelledBy('snapshot-schedules').some((o) => o.startsWith('batch/cronjobs/'))).toBe(true);
    const snapshotsBefore = scheduleSnaps('alpha', 'nightly').length;
    for (const ext of ['snapshot-schedules', 'power-schedules']) {
      const r = await call('DELETE', `/api/plugins/${ext}`);
      expect(r.status).toBe(200);
      expect(r.body.left).toEqual([]);
      expect(labelledBy(ext)).toEqual([]);
    }
    expect(sim.store.list('batch/cronjobs', NS)).toEqual([]);
    expect((await call('GET', '/api/schedules')).body).toEqual([]);
    expect(scheduleSnaps('alpha', 'nightly').length).toBe(snapshotsBefore);
  });
});
