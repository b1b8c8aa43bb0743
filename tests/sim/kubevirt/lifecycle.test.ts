import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createVm,
  eventually,
  getVm,
  getVmi,
  isGone,
  startHarness,
  verb,
  vmBody,
  waitForStatus,
  type Harness,
  type Wire,
} from './harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.cluster.close();
});

async function launcherPod(name: string): Promise<Wire> {
  const pods = await h.core.listNamespacedPod({ namespace: 'tailvm', labelSelector: `vm.kubevirt.io/name=${name}` });
  expect(pods.items).toHaveLength(1);
  return pods.items[0] as unknown as Wire;
}

describe('VM lifecycle', () => {
  it('a VM created with runStrategy Always reaches Running on a node with a pod IP', async () => {
    await createVm(h, vmBody('alpha'));
    const vm = await waitForStatus(h, 'tailvm', 'alpha', 'Running');
    expect(vm.status).toMatchObject({ ready: true, created: true, runStrategy: 'Always' });
    expect(vm.metadata.finalizers).toContain('kubevirt.io/virtualMachineControllerFinalize');
    const vmi = await getVmi(h, 'tailvm', 'alpha');
    expect(vmi.status.phase).toBe('Running');
    expect(vmi.status.phaseTransitionTimestamps.map((t: Wire) => t.phase)).toEqual([
      'Pending',
      'Scheduling',
      'Scheduled',
      'Running',
    ]);
    expect(vmi.metadata.ownerReferences[0]).toMatchObject({ kind: 'VirtualMachine', name: 'alpha', controller: true });
    expect(vmi.metadata.labels['kubevirt.io/nodeName']).toBe(vmi.status.nodeName);
    const pod = await launcherPod('alpha');
    expect(pod.metadata.name).toMatch(/^virt-launcher-alpha-[a-z0-9]{5}$/);
    expect(pod.metadata.labels).toMatchObject({
      'kubevirt.io': 'virt-launcher',
      'kubevirt.io/created-by': vmi.metadata.uid,
    });
    expect(pod.spec.nodeName).toBe(vmi.status.nodeName);
    expect(pod.status.podIP).toMatch(/^10\.42\.\d+\.\d+$/);
    expect(vmi.status.interfaces[0]).toMatchObject({ name: 'default', ipAddress: pod.status.podIP });
    expect(vmi.status.interfaces[0].mac).toMatch(/^52:54:00(:[0-9a-f]{2}){3}$/);
    expect(vmi.status.launcherContainerImageVersion).toBe('quay.io/kubevirt/virt-launcher:v1.6.0');
    expect(vmi.status.currentCPUTopology).toEqual({ sockets: 1, cores: 1, threads: 1 });
    const events = await h.core.listNamespacedEvent({
      namespace: 'tailvm',
      fieldSelector: 'involvedObject.name=alpha',
    });
    const reasons = events.items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['SuccessfulCreate', 'Created', 'Started']));
  });

  it('start on a running VM is refused with 409, stop removes the VMI, start brings it back', async () => {
    const again = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'start');
    expect(again.status).toBe(409);
    expect(again.json).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
    expect(again.json?.message).toContain('VM is already running');

    const stop = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'stop', {});
    expect(stop.status).toBe(202);
    expect(stop.text).toBe('');
    expect((await getVm(h, 'tailvm', 'alpha')).spec.runStrategy).toBe('Halted');
    const stopped = await waitForStatus(h, 'tailvm', 'alpha', 'Stopped');
    expect(stopped.status).toMatchObject({ ready: false, created: false });
    expect(stopped.status.conditions.find((c: Wire) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'VMINotExists',
    });
    expect(await isGone(getVmi(h, 'tailvm', 'alpha'))).toBe(true);
    expect(
      (await h.core.listNamespacedPod({ namespace: 'tailvm', labelSelector: 'vm.kubevirt.io/name=alpha' })).items,
    ).toHaveLength(0);

    const stopAgain = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'stop', {});
    expect(stopAgain.status).toBe(409);
    expect(stopAgain.json?.message).toContain('VM is not running');

    const start = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'start', {});
    expect(start.status).toBe(202);
    expect(start.text).toBe('');
    await waitForStatus(h, 'tailvm', 'alpha', 'Running');
    const reasons = (
      await h.core.listNamespacedEvent({ namespace: 'tailvm', fieldSelector: 'involvedObject.name=alpha' })
    ).items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(['SuccessfulDelete', 'ShuttingDown', 'Stopped']));
  });

  it('restart replaces the VMI with a new one', async () => {
    const before = await getVmi(h, 'tailvm', 'alpha');
    const restart = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'restart', {});
    expect(restart.status).toBe(202);
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'alpha');
      expect(vmi.metadata.uid).not.toBe(before.metadata.uid);
      expect(vmi.status.phase).toBe('Running');
    });
    const vm = await getVm(h, 'tailvm', 'alpha');
    expect(vm.status.stateChangeRequests).toBeUndefined();
    const bad = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'restart', { gracePeriodSeconds: 5 });
    expect(bad.status).toBe(400);
    expect(bad.json?.message).toBe('For force restart, only gracePeriod=0 is supported for now');
  });

  it('pause and unpause flip the Paused condition and printableStatus', async () => {
    const pause = await verb(h, 'virtualmachineinstances', 'tailvm', 'alpha', 'pause', {});
    expect(pause.status).toBe(200);
    const paused = await waitForStatus(h, 'tailvm', 'alpha', 'Paused');
    expect(paused.status.conditions.find((c: Wire) => c.type === 'Paused')).toMatchObject({
      status: 'True',
      reason: 'PausedByUser',
    });
    const twice = await verb(h, 'virtualmachineinstances', 'tailvm', 'alpha', 'pause', {});
    expect(twice.status).toBe(409);
    expect(twice.json?.message).toContain('VMI is already paused');
    expect((await verb(h, 'virtualmachineinstances', 'tailvm', 'alpha', 'unpause', {})).status).toBe(200);
    await waitForStatus(h, 'tailvm', 'alpha', 'Running');
    const notPaused = await verb(h, 'virtualmachineinstances', 'tailvm', 'alpha', 'unpause', {});
    expect(notPaused.status).toBe(409);
    expect(notPaused.json?.message).toContain('VMI is not paused');
  });

  it('a VM pinned to a node that does not exist is ErrorUnschedulable with the scheduler message', async () => {
    await createVm(h, vmBody('pinned', { nodeSelector: { 'kubernetes.io/hostname': 'nowhere' } }));
    const vm = await waitForStatus(h, 'tailvm', 'pinned', 'ErrorUnschedulable');
    const scheduled = vm.status.conditions.find((c: Wire) => c.type === 'PodScheduled');
    expect(scheduled).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    expect(scheduled.message).toMatch(
      /^0\/3 nodes are available: 3 node\(s\) didn't match Pod's node affinity\/selector\./,
    );
    expect((await getVmi(h, 'tailvm', 'pinned')).status.phase).toBe('Scheduling');
  });

  it('a VM larger than any node is unschedulable for memory, and stopping it cleans up', async () => {
    await createVm(h, vmBody('huge', { memory: '300Gi' }));
    const vm = await waitForStatus(h, 'tailvm', 'huge', 'ErrorUnschedulable');
    expect(vm.status.conditions.find((c: Wire) => c.type === 'PodScheduled').message).toContain(
      '3 Insufficient memory',
    );
    expect((await verb(h, 'virtualmachines', 'tailvm', 'huge', 'stop', {})).status).toBe(202);
    await waitForStatus(h, 'tailvm', 'huge', 'Stopped');
  });

  it('the start/stop verbs validate the request and answer 404 for unknown VMs', async () => {
    const missing = await verb(h, 'virtualmachines', 'tailvm', 'ghost', 'start', {});
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ reason: 'NotFound' });
    const badGrace = await verb(h, 'virtualmachines', 'tailvm', 'alpha', 'stop', { gracePeriod: -1 });
    expect(badGrace.status).toBe(400);
    const always = await verb(h, 'virtualmachines', 'tailvm', 'pinned', 'start', {});
    expect(always.status).toBe(409);
  });

  it('deleting a VM stops its VMI and drops the finalizer', async () => {
    await h.custom.deleteNamespacedCustomObject({
      group: 'kubevirt.io',
      version: 'v1',
      namespace: 'tailvm',
      plural: 'virtualmachines',
      name: 'pinned',
    });
    await eventually(async () => {
      expect(await isGone(getVm(h, 'tailvm', 'pinned'))).toBe(true);
      expect(await isGone(getVmi(h, 'tailvm', 'pinned'))).toBe(true);
    });
  });

  it('a guest poweroff restarts a VM with runStrategy Always but leaves a Manual one stopped', async () => {
    const poweroff = (name: string) =>
      h.custom.patchNamespacedCustomObject(
        {
          group: 'kubevirt.io',
          version: 'v1',
          namespace: 'tailvm',
          plural: 'virtualmachineinstances',
          name,
          body: { status: { phase: 'Succeeded' } },
        },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
    const before = await getVmi(h, 'tailvm', 'alpha');
    await poweroff('alpha');
    await eventually(async () => {
      const vmi = await getVmi(h, 'tailvm', 'alpha');
      expect(vmi.metadata.uid).not.toBe(before.metadata.uid);
      expect(vmi.status.phase).toBe('Running');
    });

    await createVm(h, vmBody('manual', { runStrategy: 'Manual' }));
    await waitForStatus(h, 'tailvm', 'manual', 'Stopped');
    expect((await verb(h, 'virtualmachines', 'tailvm', 'manual', 'start', {})).status).toBe(202);
    await waitForStatus(h, 'tailvm', 'manual', 'Running');
    await poweroff('manual');
    await waitForStatus(h, 'tailvm', 'manual', 'Stopped');
    await eventually(async () => {
      const pod = await launcherPod('manual');
      expect(pod.status.phase).toBe('Succeeded');
    });
    expect((await verb(h, 'virtualmachines', 'tailvm', 'manual', 'start', {})).status).toBe(202);
    await waitForStatus(h, 'tailvm', 'manual', 'Running');
  });

  it('a VM whose guest keeps crashing backs off in CrashLoopBackOff and recovers once it boots', async () => {
    const body = vmBody('crashy');
    body.metadata.annotations = { 'sim.corral.dev/fail-boot': 'true' };
    await createVm(h, body);
    const looping = await eventually(async () => {
      const vm = await getVm(h, 'tailvm', 'crashy');
      expect(vm.status?.printableStatus).toBe('CrashLoopBackOff');
      expect(vm.status.startFailure.consecutiveFailCount).toBeGreaterThanOrEqual(2);
      return vm;
    });
    expect(Date.parse(looping.status.startFailure.retryAfterTimestamp)).not.toBeNaN();
    const events = (
      await h.core.listNamespacedEvent({ namespace: 'tailvm', fieldSelector: 'involvedObject.name=crashy' })
    ).items;
    expect(events.some((e) => e.reason === 'FailedCreate' && e.type === 'Warning')).toBe(true);
    await h.custom.patchNamespacedCustomObject(
      {
        group: 'kubevirt.io',
        version: 'v1',
        namespace: 'tailvm',
        plural: 'virtualmachines',
        name: 'crashy',
        body: { metadata: { annotations: { 'sim.corral.dev/fail-boot': null } } },
      },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    const running = await waitForStatus(h, 'tailvm', 'crashy', 'Running', 15_000);
    expect(running.status.startFailure).toBeUndefined();
  });
});
