/**
 * While a VirtualMachineRestore rewrites a VM (`status.restoreInProgress`), KubeVirt refuses the start verb with
 * 409 and virt-controller creates no VMI for it; once the restore is done the VM starts as asked.
 */
import { afterEach, expect, it } from 'vitest';
import { K } from '@/sim/kubevirt/keys';
import { createVm, eventually, listVmis, startHarness, verb, vmBody, type Harness } from './harness';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cluster.close();
  h = undefined;
});

function setRestoreInProgress(name: string | undefined): void {
  h!.cluster.store.mutate(K.vms, 'default', 'restoring', (vm) => {
    const st = (vm.status ??= {}) as Record<string, unknown>;
    if (name) st.restoreInProgress = name;
    else delete st.restoreInProgress;
  });
}

it('holds a VM with a restore in progress: start answers 409, no VMI until the restore ends', async () => {
  h = await startHarness();
  await createVm(h, vmBody('restoring', { namespace: 'default', runStrategy: 'Halted' }));
  await eventually(() => expect(h!.cluster.store.get(K.vms, 'default', 'restoring')?.status).toBeDefined());
  setRestoreInProgress('r1');

  const refused = await verb(h, 'virtualmachines', 'default', 'restoring', 'start', {});
  expect(refused.status).toBe(409);
  expect(refused.json?.message).toContain('Cannot start VM until restore "r1" completes');
  expect(h.cluster.store.get(K.vms, 'default', 'restoring')?.spec).toMatchObject({ runStrategy: 'Halted' });

  // A client that flips the run strategy itself gets no VMI either while the restore runs.
  h.cluster.store.mutate(K.vms, 'default', 'restoring', (vm) => {
    (vm.spec as Record<string, unknown>).runStrategy = 'Always';
  });
  await new Promise((r) => setTimeout(r, 500));
  expect(await listVmis(h, 'default')).toEqual([]);

  setRestoreInProgress(undefined);
  await eventually(async () =>
    expect((await listVmis(h!, 'default')).map((v) => v.metadata.name)).toEqual(['restoring']),
  );
});
