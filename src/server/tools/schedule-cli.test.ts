/** `corral schedule run <name>` (what a schedule's Job runs) over the in-memory cluster: exit codes and output. */
import { describe, expect, it } from 'vitest';
import { scheduleCronJob } from '../domain/schedules-spec';
import { FakeCluster } from '../testing/fake-cluster';
import { parseScheduleArgs, runScheduleCli } from './schedule-cli';

async function run(cluster: FakeCluster, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runScheduleCli(
    argv,
    { out: (t) => out.push(t), err: (t) => err.push(t) },
    {} as NodeJS.ProcessEnv,
    () => ({
      cluster,
      close: async () => undefined,
    }),
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('corral schedule', () => {
  it('parses run <name> and its flags; anything else is a usage error (exit 2)', async () => {
    expect(parseScheduleArgs(['run', 'nightly', '--namespace=corral'])).toMatchObject({
      name: 'nightly',
      namespace: 'corral',
    });
    expect(() => parseScheduleArgs(['start', 'x'])).toThrow("unknown subcommand 'start'");
    expect(() => parseScheduleArgs(['run'])).toThrow('missing schedule name');
    expect(() => parseScheduleArgs(['run', 'a', 'b'])).toThrow("unexpected argument 'b'");
    expect(() => parseScheduleArgs(['run', 'a', '--context'])).toThrow('--context needs a value');
    const bad = await run(new FakeCluster(), 'run', 'a', '--colour', 'red');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("unknown option '--colour'");
    expect((await run(new FakeCluster(), '--help')).code).toBe(0);
  });

  it('runs a snapshot schedule: snapshots the tagged VM, prints each step, exits 0; unknown schedule exits 1', async () => {
    const c = new FakeCluster();
    c.put('VirtualMachine', {
      metadata: { name: 'web', namespace: 'tailvm', labels: { 'corral.dev/tag.prod': 'true' } },
    });
    c.put('VirtualMachine', { metadata: { name: 'lab', namespace: 'tailvm' } });
    c.put(
      'CronJob',
      scheduleCronJob(
        {
          name: 'nightly',
          type: 'snapshot',
          cron: '@daily',
          enabled: true,
          target: { kind: 'tag', tag: 'prod' },
          keep: 2,
        },
        'corral',
        'ghcr.io/corral-dev/corral:0.1.0',
      ),
    );
    const ok = await run(c, 'run', 'nightly', '--namespace', 'corral');
    expect(ok.code).toBe(0);
    expect(ok.out).toContain('snapshot schedule nightly: 1 matching VMs tagged prod');
    expect(ok.out).toContain('tailvm/web: created snapshot nightly-');
    expect(ok.out).toContain('done: 1 VM done');
    const snaps = await c.fetchList('VirtualMachineSnapshot', { namespace: 'tailvm' });
    expect(snaps.map((s) => s.metadata.labels?.['corral.dev/schedule'])).toEqual(['nightly']);
    const runs = await c.fetch('ConfigMap', 'corral', 'corral-sched-nightly-runs');
    expect(JSON.parse((runs?.data as Record<string, string>)['runs.json']!)).toEqual([
      expect.objectContaining({ trigger: 'schedule', by: 'cronjob/corral-sched-nightly', status: 'ok' }),
    ]);

    const missing = await run(c, 'run', 'weekly', '--namespace', 'corral');
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('no schedule named weekly');
  });
});
