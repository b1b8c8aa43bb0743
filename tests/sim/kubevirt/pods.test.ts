import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, isGone, startHarness, type Harness } from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

function ctPod(name: string, image: string, extra: Partial<V1Pod['spec']> = {}): V1Pod {
  return {
    metadata: { name, labels: { 'corral.dev/ct': 'true', 'corral.dev/ct-name': name } },
    spec: {
      containers: [
        {
          name: 'main',
          image,
          resources: { requests: { cpu: '1', memory: '512Mi' }, limits: { cpu: '1', memory: '512Mi' } },
        },
      ],
      ...extra,
    },
  };
}

describe('kubelet and scheduler for plain pods (Corral containers)', () => {
  it('schedules a pod and runs it with an IP and ready containers', async () => {
    await h.core.createNamespacedPod({ namespace: 'tailvm', body: ctPod('box', 'docker.io/library/debian:bookworm') });
    const pod = await eventually(async () => {
      const p = await h.core.readNamespacedPod({ namespace: 'tailvm', name: 'box' });
      expect(p.status?.phase).toBe('Running');
      return p;
    }, 15_000);
    expect(pod.spec?.nodeName).toMatch(/^corral-[123]$/);
    expect(pod.status?.podIP).toMatch(/^10\.42\.[0-2]\.\d+$/);
    expect(pod.status?.hostIP).toMatch(/^10\.0\.0\.1[1-3]$/);
    expect(pod.status?.containerStatuses?.[0]).toMatchObject({ name: 'main', ready: true, started: true });
    expect(pod.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    const reasons = (
      await h.core.listNamespacedEvent({ namespace: 'tailvm', fieldSelector: 'involvedObject.name=box' })
    ).items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['Scheduled', 'Started']));
  });

  it('gives every running pod its own IP', async () => {
    await h.core.createNamespacedPod({
      namespace: 'tailvm',
      body: ctPod('box2', 'docker.io/library/alpine:3.21', { nodeSelector: { 'kubernetes.io/hostname': 'corral-1' } }),
    });
    await h.core.createNamespacedPod({
      namespace: 'tailvm',
      body: ctPod('box3', 'docker.io/library/alpine:3.21', { nodeSelector: { 'kubernetes.io/hostname': 'corral-1' } }),
    });
    const ips = await eventually(async () => {
      const pods = await Promise.all(
        ['box2', 'box3'].map((name) => h.core.readNamespacedPod({ namespace: 'tailvm', name })),
      );
      for (const p of pods) expect(p.status?.phase).toBe('Running');
      return pods.map((p) => p.status?.podIP);
    }, 15_000);
    expect(ips[0]).toMatch(/^10\.42\.0\./);
    expect(new Set(ips).size).toBe(2);
  });

  it('reports ErrImagePull then ImagePullBackOff for an image that cannot be pulled', async () => {
    await h.core.createNamespacedPod({ namespace: 'tailvm', body: ctPod('broken', 'registry.invalid/team/app:1.0') });
    await eventually(async () => {
      const p = await h.core.readNamespacedPod({ namespace: 'tailvm', name: 'broken' });
      expect(p.status?.phase).toBe('Pending');
      expect(p.status?.containerStatuses?.[0]?.state?.waiting?.reason).toBe('ImagePullBackOff');
    }, 15_000);
  });

  it('leaves a pod Pending with the scheduler message when no node fits', async () => {
    await h.core.createNamespacedPod({
      namespace: 'tailvm',
      body: ctPod('nowhere', 'docker.io/library/debian:bookworm', {
        nodeSelector: { 'kubernetes.io/hostname': 'corral-9' },
      }),
    });
    const pod = await eventually(async () => {
      const p = await h.core.readNamespacedPod({ namespace: 'tailvm', name: 'nowhere' });
      expect(p.status?.conditions?.find((c) => c.type === 'PodScheduled')).toMatchObject({
        status: 'False',
        reason: 'Unschedulable',
      });
      return p;
    });
    expect(pod.spec?.nodeName).toBeUndefined();
    const events = (
      await h.core.listNamespacedEvent({ namespace: 'tailvm', fieldSelector: 'involvedObject.name=nowhere' })
    ).items;
    expect(events.find((e) => e.reason === 'FailedScheduling')?.message).toContain(
      "didn't match Pod's node affinity/selector",
    );
  });

  it('deleting a pod removes it', async () => {
    await h.core.deleteNamespacedPod({ namespace: 'tailvm', name: 'box' });
    await eventually(async () =>
      expect(await isGone(h.core.readNamespacedPod({ namespace: 'tailvm', name: 'box' }))).toBe(true),
    );
  });
});
