import { afterEach, describe, expect, it } from 'vitest';
import type { KObject, NewObject } from '@/sim/store/types';
import { podLogText } from '@/sim/storage';
import { DISK_CONTENT_ANNOTATION, S } from '@/sim/storage/keys';
import { parseBootcArgs } from '@/sim/storage/workloads';
import { eventsFor, type Harness, NS, phaseOf, pvc, startHarness, st, storageClass, waitFor } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const BIB = 'quay.io/centos-bootc/bootc-image-builder:latest';

function job(
  name: string,
  container: Record<string, unknown>,
  extra: { backoffLimit?: number; annotations?: Record<string, string>; volumes?: unknown[] } = {},
): NewObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: {
      backoffLimit: extra.backoffLimit ?? 0,
      template: {
        metadata: { annotations: extra.annotations ?? {} },
        spec: { restartPolicy: 'Never', containers: [{ name: 'main', ...container }], volumes: extra.volumes ?? [] },
      },
    },
  };
}

function conditions(o: KObject | undefined): Record<string, string> {
  return Object.fromEntries(
    ((st(o).conditions as { type: string; status: string }[] | undefined) ?? []).map((c) => [c.type, c.status]),
  );
}

function podsOf(name: string): KObject[] {
  return h!.store.list(S.pods, NS).filter((p) => p.metadata.labels?.['job-name'] === name);
}

async function finished(name: string): Promise<KObject> {
  return waitFor(
    'job finished',
    () => {
      const o = h!.store.get(S.jobs, NS, name);
      const c = conditions(o);
      return c.Complete === 'True' || c.Failed === 'True' ? o : undefined;
    },
    20_000,
  );
}

describe('Job controller', () => {
  it('runs a pod for the simulated duration and completes', async () => {
    h = await startHarness();
    h.store.create(S.jobs, job('hello', { image: 'busybox' }, { annotations: { 'sim.corral.dev/run-seconds': '5' } }));
    let sawActive = false;
    const done = await waitFor('Complete', () => {
      const o = h!.store.get(S.jobs, NS, 'hello');
      if (st(o).active === 1) sawActive = true;
      return conditions(o).Complete === 'True' ? o : undefined;
    });
    expect(sawActive).toBe(true);
    expect(st(done)).toMatchObject({ succeeded: 1, active: 0 });
    expect(typeof st(done).completionTime).toBe('string');
    expect(conditions(done)).toMatchObject({ SuccessCriteriaMet: 'True', Complete: 'True' });
    const [pod] = podsOf('hello');
    expect(phaseOf(pod)).toBe('Succeeded');
    expect(pod?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Job', name: 'hello', controller: true });
    expect(eventsFor(h.store, 'hello').map((e) => e.reason)).toEqual(
      expect.arrayContaining(['SuccessfulCreate', 'Completed']),
    );
  });

  it('retries a failing pod up to backoffLimit, then Failed/BackoffLimitExceeded', async () => {
    h = await startHarness();
    h.store.create(
      S.jobs,
      job(
        'flaky',
        { image: 'busybox' },
        { backoffLimit: 1, annotations: { 'sim.corral.dev/run-seconds': '1', 'sim.corral.dev/exit-code': '3' } },
      ),
    );
    const done = await finished('flaky');
    expect(conditions(done)).toMatchObject({ Failed: 'True' });
    expect(st(done).failed).toBe(2);
    expect(podsOf('flaky').map(phaseOf)).toEqual(['Failed', 'Failed']);
  });
});

describe('Job pods and the kubelet', () => {
  it('never starts a pod whose image pull the kubelet failed', async () => {
    h = await startHarness();
    h.store.create(S.jobs, job('unpullable', { image: 'registry.corral.invalid/tool:1' }));
    const pod = await waitFor('pod', () => podsOf('unpullable')[0]);
    // What the kubelet module writes for an image it cannot pull.
    h.store.mutate(S.pods, NS, pod.metadata.name, (p) => {
      (p.status as Record<string, unknown>).containerStatuses = [
        {
          name: 'main',
          ready: false,
          restartCount: 0,
          state: { waiting: { reason: 'ErrImagePull', message: 'no such host' } },
        },
      ];
    });
    await new Promise((r) => setTimeout(r, 600));
    expect(phaseOf(h.store.get(S.pods, NS, pod.metadata.name))).toBe('Pending');
    const current = h.store.get(S.jobs, NS, 'unpullable');
    expect(st(current).active).toBe(1);
    expect(conditions(current).Complete).toBeUndefined();
  });
});

describe('bootc build Job', () => {
  const volumes = [{ name: 'output', persistentVolumeClaim: { claimName: 'web-disk' } }];
  const mounts = [{ name: 'output', mountPath: '/output' }];

  it('parses bootc-image-builder arguments', () => {
    expect(
      parseBootcArgs(['build', '--type', 'raw', '--rootfs', 'xfs', 'quay.io/centos-bootc/centos-bootc:stream9']),
    ).toEqual({
      image: 'quay.io/centos-bootc/centos-bootc:stream9',
      type: 'raw',
    });
    expect(parseBootcArgs(['--type=qcow2', 'localhost/x'])).toEqual({ image: 'localhost/x', type: 'qcow2' });
  });

  it('logs the build, fills the output PVC and succeeds', async () => {
    h = await startHarness({ seed: (s) => s.create(S.storageClasses, storageClass('longhorn', {}, true)) });
    h.store.create(S.pvcs, pvc('web-disk', '20Gi'));
    const image = 'quay.io/centos-bootc/centos-bootc:stream9';
    h.store.create(
      S.jobs,
      job('bootc-web', { image: BIB, args: ['build', '--type', 'qcow2', image], volumeMounts: mounts }, { volumes }),
    );
    const logs: string[] = [];
    const done = await waitFor(
      'done',
      () => {
        const pod = podsOf('bootc-web')[0];
        const text = pod ? podLogText(pod) : undefined;
        if (text && logs.at(-1) !== text) logs.push(text);
        const o = h!.store.get(S.jobs, NS, 'bootc-web');
        return conditions(o).Complete === 'True' ? o : undefined;
      },
      20_000,
    );
    expect(st(done).succeeded).toBe(1);
    // The log grew while the build ran.
    expect(logs.length).toBeGreaterThan(3);
    const finalLog = podLogText(podsOf('bootc-web')[0]!)!;
    expect(finalLog).toContain(`Trying to pull ${image}`);
    expect(finalLog).toContain('Build complete!');
    expect(finalLog).toContain('/output/qcow2/disk.qcow2');
    expect(h.store.get(S.pvcs, NS, 'web-disk')?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBe(`bootc:${image}`);
  });

  it.each([
    ['an image that does not exist', 'quay.io/centos-bootc/does-not-exist:latest', 'manifest unknown'],
    ['an unresolvable registry', 'registry.corral.invalid/os:1', 'no such host'],
    ['a malformed reference', 'Quay.io/UPPER CASE', 'invalid reference format'],
  ])('fails for %s', async (_what, image, text) => {
    h = await startHarness({ seed: (s) => s.create(S.storageClasses, storageClass('longhorn', {}, true)) });
    h.store.create(S.pvcs, pvc('web-disk', '20Gi'));
    h.store.create(S.jobs, job('bootc-bad', { image: BIB, args: ['build', image], volumeMounts: mounts }, { volumes }));
    const done = await finished('bootc-bad');
    expect(conditions(done).Failed).toBe('True');
    const pod = podsOf('bootc-bad')[0]!;
    expect(phaseOf(pod)).toBe('Failed');
    expect(podLogText(pod)).toContain(text);
    expect(h.store.get(S.pvcs, NS, 'web-disk')?.metadata.annotations?.[DISK_CONTENT_ANNOTATION]).toBeUndefined();
  });
});
