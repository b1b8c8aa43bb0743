import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createVm,
  eventually,
  getVmi,
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

const VMIM = { group: 'kubevirt.io', version: 'v1', namespace: 'tailvm', plural: 'virtualmachineinstancemigrations' };

async function migrations(vmi: string): Promise<Wire[]> {
  const list = (await h.custom.listNamespacedCustomObject({
    ...VMIM,
    labelSelector: `kubevirt.io/vmi-name=${vmi}`,
  })) as Wire;
  return list.items as Wire[];
}

async function launchers(name: string): Promise<Wire[]> {
  return (await h.core.listNamespacedPod({ namespace: 'tailvm', labelSelector: `vm.kubevirt.io/name=${name}` }))
    .items as unknown as Wire[];
}

async function nodeVendor(node: string): Promise<string | undefined> {
  const n = await h.core.readNode({ name: node });
  return Object.keys(n.metadata?.labels ?? {}).find((l) => l.startsWith('cpu-vendor.node.kubevirt.io/'));
}

describe('live migration', () => {
  it('moves a running VM to another node of the same CPU vendor', async () => {
    await createVm(h, vmBody('mover', { nodeSelector: { 'cpu-vendor.node.kubevirt.io/Intel': 'true' } }));
    await waitForStatus(h, 'tailvm', 'mover', 'Running');
    const before = await getVmi(h, 'tailvm', 'mover');
    const source = before.status.nodeName as string;
    expect(before.status.conditions.find((c: Wire) => c.type === 'LiveMigratable')).toMatchObject({ status: 'True' });

    const res = await verb(h, 'virtualmachines', 'tailvm', 'mover', 'migrate', {});
    expect(res.status).toBe(202);
    expect(res.text).toBe('');
    const [vmim] = await migrations('mover');
    expect(vmim!.metadata.name).toMatch(/^kubevirt-migrate-vm-[a-z0-9]{5}$/);
    expect(vmim!.metadata.finalizers).toContain('kubevirt.io/migrationJobFinalize');

    const done = await eventually(async () => {
      const [m] = await migrations('mover');
      expect(m!.status?.phase).toBe('Succeeded');
      return m!;
    });
    const phases = done.status.phaseTransitionTimestamps.map((t: Wire) => t.phase);
    expect(phases).toEqual([
      'Pending',
      'Scheduling',
      'Scheduled',
      'PreparingTarget',
      'TargetReady',
      'Running',
      'Succeeded',
    ]);
    const after = await getVmi(h, 'tailvm', 'mover');
    const target = after.status.nodeName as string;
    expect(target).not.toBe(source);
    expect(await nodeVendor(target)).toBe(await nodeVendor(source));
    expect(after.metadata.labels['kubevirt.io/nodeName']).toBe(target);
    expect(after.status.migrationState).toMatchObject({
      sourceNode: source,
      targetNode: target,
      completed: true,
      migrationUid: done.metadata.uid,
    });
    const pods = await eventually(async () => {
      const list = await launchers('mover');
      expect(list).toHaveLength(1);
      return list;
    });
    expect(pods[0]!.spec.nodeName).toBe(target);
    expect(after.status.interfaces[0].ipAddress).toBe(pods[0]!.status.podIP);
    expect(Object.values(after.status.activePods)).toEqual([target]);
    await waitForStatus(h, 'tailvm', 'mover', 'Running');
  });

  it('cannot cross CPU vendors: the target pod stays unschedulable until the migration is deleted', async () => {
    await createVm(h, vmBody('amd', { nodeSelector: { 'cpu-vendor.node.kubevirt.io/AMD': 'true' } }));
    await waitForStatus(h, 'tailvm', 'amd', 'Running');
    expect((await verb(h, 'virtualmachines', 'tailvm', 'amd', 'migrate', {})).status).toBe(202);
    const target = await eventually(async () => {
      const pending = (await launchers('amd')).find((p) => p.metadata.labels['kubevirt.io/migrationJobUID']);
      expect(pending?.status.conditions?.find((c: Wire) => c.type === 'PodScheduled')).toMatchObject({
        status: 'False',
        reason: 'Unschedulable',
      });
      return pending!;
    });
    expect(target.spec.nodeSelector['cpu-vendor.node.kubevirt.io/AMD']).toBe('true');
    const [vmim] = await migrations('amd');
    expect(vmim!.status.phase).toBe('Scheduling');

    const second = await verb(h, 'virtualmachines', 'tailvm', 'amd', 'migrate', {});
    expect(second.status).toBe(500);
    expect(second.json?.message).toContain(
      `in-flight migration detected. Active migration job (${vmim!.metadata.uid as string}) is currently already in progress for VMI amd.`,
    );

    await h.custom.deleteNamespacedCustomObject({ ...VMIM, name: vmim!.metadata.name });
    await eventually(async () => {
      expect(await migrations('amd')).toHaveLength(0);
      expect(await launchers('amd')).toHaveLength(1);
    });
    expect((await getVmi(h, 'tailvm', 'amd')).status.nodeName).toBe('corral-3');
  });

  it('refuses VMs with a ReadWriteOnce disk with the webhook denial (500)', async () => {
    await h.core.createNamespacedPersistentVolumeClaim({
      namespace: 'tailvm',
      body: {
        metadata: { name: 'rwo-disk' },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: 'longhorn',
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });
    await createVm(h, vmBody('pinned-disk', { pvc: 'rwo-disk' }));
    const vm = await waitForStatus(h, 'tailvm', 'pinned-disk', 'Running');
    expect(vm.status.conditions.find((c: Wire) => c.type === 'LiveMigratable')).toMatchObject({
      status: 'False',
      reason: 'DisksNotLiveMigratable',
    });
    const res = await verb(h, 'virtualmachines', 'tailvm', 'pinned-disk', 'migrate', {});
    expect(res.status).toBe(500);
    expect(res.json).toMatchObject({ kind: 'Status', code: 500, reason: 'InternalError' });
    expect(res.json?.message).toBe(
      'Internal error occurred: admission webhook "migration-create-validator.kubevirt.io" denied the request: Cannot migrate VMI, Reason: DisksNotLiveMigratable, Message: cannot migrate VMI: PVC rwo-disk is not shared, live migration requires that all PVCs must be shared (using ReadWriteMany access mode)',
    );
    expect(await migrations('pinned-disk')).toHaveLength(0);
  });

  it('refuses VMs that are not running', async () => {
    await createVm(h, vmBody('idle', { runStrategy: 'Halted' }));
    await waitForStatus(h, 'tailvm', 'idle', 'Stopped');
    const res = await verb(h, 'virtualmachines', 'tailvm', 'idle', 'migrate', {});
    expect(res.status).toBe(409);
    expect(res.json?.message).toContain('VM is not running');
  });

  it('fails a migration object created directly for a VMI that cannot migrate', async () => {
    await h.custom.createNamespacedCustomObject({
      ...VMIM,
      body: {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachineInstanceMigration',
        metadata: { name: 'direct' },
        spec: { vmiName: 'pinned-disk' },
      },
    });
    const failed = await eventually(async () => {
      const m = (await h.custom.getNamespacedCustomObject({ ...VMIM, name: 'direct' })) as Wire;
      expect(m.status?.phase).toBe('Failed');
      return m;
    });
    expect(JSON.stringify(failed.status)).toContain('DisksNotLiveMigratable');
  });
});
