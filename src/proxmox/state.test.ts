import { describe, expect, it } from 'vitest';
import type { CorralServices } from '@/server/domain/services';
import type { FleetDelta } from '@/server/domain/vm-rows';
import { VmidIndex } from '@/server/domain/vmids';
import type { VmRow } from '@/server/schemas/vms';
import { ProxmoxState } from './state';

function vmRow(name: string, uid: string, vmid: number): VmRow {
  return {
    context: 'corral-sim',
    name,
    namespace: 'tailvm',
    status: 'Stopped',
    ready: false,
    running: false,
    cpu: 1,
    mem: '1Gi',
    disk: '',
    ip: '',
    node: '',
    tags: [],
    template: false,
    uid,
    createdAt: '2026-11-30T10:00:00Z',
    runStrategy: 'Halted',
    instancetype: '',
    preference: '',
    os: '',
    vmid,
  };
}

/**
 * The slice of the services ProxmoxState reads, over a fleet the test edits and announces delta by delta (rows are
 * labelled with their vmid; the index plays the fleet view's).
 */
function fakeServices() {
  const rows = new Map<string, VmRow>();
  const vmids = new VmidIndex();
  const listeners: ((delta: FleetDelta) => void)[] = [];
  const announce = (delta: FleetDelta) => listeners.forEach((l) => l(delta));
  const services = {
    fleet: {
      subscribe: (l: (delta: FleetDelta) => void) => (listeners.push(l), () => undefined),
      vmRows: () => [...rows.values()],
      vmRow: (namespace: string, name: string) => rows.get(`${namespace}/${name}`),
      vmids,
      retireVmid: (ref: { namespace: string; name: string }, uid: string) => {
        if (rows.get(`${ref.namespace}/${ref.name}`)?.uid === uid) vmids.remove(ref);
      },
    },
    journal: { subscribe: () => () => undefined },
    metrics: { sampledAt: () => 0 },
    metricsStore: { subscribe: () => () => undefined, onRecord: () => () => undefined },
    nodes: { list: () => [] },
    pools: { store: { subscribe: () => () => undefined } },
  } as unknown as CorralServices;
  return {
    services,
    put(row: VmRow) {
      rows.set(`${row.namespace}/${row.name}`, row);
      if (row.status !== 'Terminating') vmids.upsert({ ...row, label: String(row.vmid) });
      announce({ type: 'vm', op: 'upsert', vm: row });
    },
    drop(name: string) {
      rows.delete(`tailvm/${name}`);
      vmids.remove({ namespace: 'tailvm', name });
      announce({ type: 'vm', op: 'delete', namespace: 'tailvm', name });
    },
  };
}

const listed = (state: ProxmoxState) => state.vmRowsWithIds().map((r) => `${r.row.name}:${r.vmid}`);

describe('VMs deleted through the Proxmox API', () => {
  it('vanish at once while their objects finalise, and come back under the same name as a new VM', () => {
    const fleet = fakeServices();
    const state = new ProxmoxState(fleet.services);
    const old = vmRow('web', 'uid-old', 810);
    fleet.put(old);
    expect(state.resolveVm('corral-1', '810').row.uid).toBe('uid-old');

    state.markDeleted({ namespace: 'tailvm', name: 'web' }, 'uid-old');
    expect(() => state.resolveVm('corral-1', '810')).toThrow(/does not exist/);
    expect(listed(state)).toEqual([]);
    fleet.put({ ...old, status: 'Terminating' }); // the finalising object is still updated: still hidden
    expect(listed(state)).toEqual([]);

    fleet.drop('web');
    fleet.put(vmRow('web', 'uid-new', 810));
    expect(state.resolveVm('corral-1', '810').row.uid).toBe('uid-new');
    expect(listed(state)).toEqual(['web:810']);
  });

  it('do not hide a new VM when the cache dropped the old one before the delete call returned', () => {
    const fleet = fakeServices();
    const state = new ProxmoxState(fleet.services);
    fleet.put(vmRow('web', 'uid-old', 810));
    // The watch reports the VM gone while the delete request is still being answered...
    fleet.drop('web');
    state.markDeleted({ namespace: 'tailvm', name: 'web' }, 'uid-old');
    // ...and Terraform or Ansible recreates it right away under the same name and vmid.
    fleet.put(vmRow('web', 'uid-new', 810));
    expect(state.resolveVm('corral-1', '810').row.uid).toBe('uid-new');
    expect(listed(state)).toEqual(['web:810']);
  });
});
