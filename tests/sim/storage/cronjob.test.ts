/**
 * The embedded cluster's CronJob controller on its sped-up calendar (speed 600: a minute every 100 ms), the token
 * controller, and the container runtime hook through which a Job's pod runs for real.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ContainerRun } from '@/sim/module';
import type { KObject, NewObject } from '@/sim/store/types';
import { podLogText } from '@/sim/storage';
import { S } from '@/sim/storage/keys';
import { type Harness, NS, startHarness, st, waitFor } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

function cronJob(name: string, spec: Record<string, unknown> = {}): NewObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: NS },
    spec: {
      schedule: '* * * * *',
      jobTemplate: {
        metadata: { labels: { app: name } },
        spec: {
          backoffLimit: 0,
          template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'example/runner:1' }] } },
        },
      },
      ...spec,
    },
  };
}

const jobsOf = (name: string) =>
  h!.store.list(S.jobs, NS).filter((j) => j.metadata.ownerReferences?.some((r) => r.name === name));
const done = (j: KObject) =>
  ((st(j).conditions as { type: string; status: string }[] | undefined) ?? []).some(
    (c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('CronJob controller', () => {
  it('starts a Job per schedule time, owned and annotated, and keeps only the history limits', async () => {
    h = await startHarness({ speed: 600 });
    h.ctx.containerRuntime = () => Promise.resolve(0);
    h.store.create(S.cronJobs, cronJob('tick', { successfulJobsHistoryLimit: 1 }));
    await waitFor(
      'three runs',
      () => (h!.store.get(S.cronJobs, NS, 'tick') && countCreated('tick') >= 3) || undefined,
      20_000,
    );
    const jobs = jobsOf('tick');
    expect(jobs[0]!.metadata.name).toMatch(/^tick-\d{8}$/);
    expect(jobs[0]!.metadata.labels).toMatchObject({ app: 'tick' });
    expect(jobs[0]!.metadata.annotations?.['batch.kubernetes.io/cronjob-scheduled-timestamp']).toMatch(/Z$/);
    await waitFor(
      'history pruned to one finished Job',
      () => jobsOf('tick').filter(done).length <= 1 || undefined,
      20_000,
    );
    const cj = h.store.get(S.cronJobs, NS, 'tick')!;
    expect(st(cj).lastScheduleTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(st(cj).lastSuccessfulTime).toBeDefined();
  });

  it('Forbid holds the next time while a Job is active, and runs it once that Job ends', async () => {
    h = await startHarness({ speed: 600 });
    let release: (code: number) => void = () => {};
    let runs = 0;
    h.ctx.containerRuntime = () => {
      runs++;
      return new Promise<number>((r) => (release = r));
    };
    h.store.create(S.cronJobs, cronJob('slow', { concurrencyPolicy: 'Forbid' }));
    await waitFor('first run', () => runs === 1 || undefined, 20_000);
    await sleep(600); // several schedule times pass
    expect(jobsOf('slow')).toHaveLength(1);
    expect(runs).toBe(1);
    expect((st(h.store.get(S.cronJobs, NS, 'slow')).active as unknown[]).length).toBe(1);
    expect(h.store.list(S.events, NS).some((e) => e.reason === 'JobAlreadyActive')).toBe(true);
    release(0);
    await waitFor('the held time runs', () => runs === 2 || undefined, 20_000);
    release(0);
  });

  it('suspend starts nothing', async () => {
    h = await startHarness({ speed: 600 });
    h.store.create(S.cronJobs, cronJob('paused', { suspend: true }));
    await sleep(700);
    expect(jobsOf('paused')).toEqual([]);
  });

  it("runs the pod through the container runtime with its ServiceAccount's token, logs and exit code", async () => {
    h = await startHarness({ speed: 600 });
    const seen: ContainerRun[] = [];
    h.ctx.containerRuntime = (run) => {
      if (run.image !== 'example/runner:1') return undefined;
      seen.push(run);
      run.log(`hello from ${run.args.join(' ')}`);
      return Promise.resolve(3);
    };
    h.store.create(S.serviceAccounts, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'runner', namespace: NS },
    });
    h.store.create(S.secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/service-account-token',
      metadata: {
        name: 'runner-token',
        namespace: NS,
        annotations: { 'kubernetes.io/service-account.name': 'runner' },
      },
    });
    const token = await waitFor(
      'token filled in',
      () => {
        const t = (h!.store.get(S.secrets, NS, 'runner-token')?.data as { token?: string } | undefined)?.token;
        return t ? Buffer.from(t, 'base64').toString('utf8') : undefined;
      },
      10_000,
    );
    const template = cronJob('sa').spec as { jobTemplate: { spec: { template: { spec: Record<string, unknown> } } } };
    const podSpec = template.jobTemplate.spec.template.spec;
    podSpec.serviceAccountName = 'runner';
    podSpec.containers = [{ name: 'main', image: 'example/runner:1', args: ['schedule', 'run', 'x'] }];
    h.store.create(S.cronJobs, cronJob('sa', { jobTemplate: template.jobTemplate }));
    const failed = await waitFor('job failed', () => jobsOf('sa').find(done), 20_000);
    expect(seen[0]!.kubeconfig).toContain(`token: "${token}"`);
    expect(seen[0]!.kubeconfig).toContain(`namespace: ${NS}`);
    const pod = h.store.list(S.pods, NS).find((p) => p.metadata.labels?.['job-name'] === failed.metadata.name)!;
    expect(st(pod).phase).toBe('Failed');
    expect(podLogText(pod)).toContain('hello from schedule run x');
  });
});

function countCreated(name: string): number {
  return h!.store
    .list(S.events, NS)
    .filter((e) => (e.involvedObject as { name?: string }).name === name && e.reason === 'SuccessfulCreate')
    .reduce((n, e) => n + (Number(e.count) || 1), 0);
}
