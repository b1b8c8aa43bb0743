import { describe, expect, it } from 'vitest';
import type { VmHardware } from '@/server/domain/vm-hardware';
import type { VmRuntime } from '@/server/domain/vm-runtime';
import type { VmRow } from '@/server/schemas/vms';
import { EXTRAS_ANNOTATION, serializeExtras } from './extras';
import {
  agentEnabled,
  assignSlots,
  configDigest,
  reportedAgent,
  resourceRow,
  statusCurrent,
  vmConfig,
} from './vm-view';

const G = 1024 ** 3;
const stopped: VmRuntime = {
  active: false,
  uptimeSeconds: 0,
  runningSince: 0,
  guestMemoryBytes: 0,
  agentConnected: false,
  interfaces: [],
  node: '',
  cpuUsage: 0,
  memoryUsedBytes: 0,
};
const running: VmRuntime = {
  ...stopped,
  active: true,
  uptimeSeconds: 42,
  runningSince: 1,
  guestMemoryBytes: 2 * G,
  node: 'corral-2',
  cpuUsage: 0.25,
  memoryUsedBytes: G,
};

function row(over: Partial<VmRow> = {}): VmRow {
  return {
    context: 'corral-sim',
    name: 'web',
    namespace: 'tailvm',
    status: 'Stopped',
    ready: false,
    running: false,
    cpu: 2,
    mem: '2Gi',
    disk: '20Gi',
    ip: '',
    node: '',
    tags: [],
    template: false,
    uid: 'u',
    createdAt: '',
    runStrategy: 'Halted',
    instancetype: '',
    preference: '',
    os: '',
    vmid: 100,
    ...over,
  };
}

function hw(over: Partial<VmHardware> = {}): VmHardware {
  return {
    namespace: 'tailvm',
    name: 'web',
    sockets: 1,
    cores: 2,
    threads: 1,
    memoryBytes: 2 * G,
    disks: [
      {
        name: 'rootdisk',
        device: 'disk',
        bus: 'virtio',
        bootOrder: 1,
        claim: 'web-disk',
        sizeBytes: 20 * G,
        storageClass: 'longhorn',
        volume: { volume: 'rootdisk', kind: 'dataVolume', claim: 'web-disk', hotpluggable: false },
      },
      {
        name: 'installer',
        device: 'cdrom',
        bus: 'sata',
        bootOrder: 2,
        claim: 'web-iso',
        sizeBytes: G,
        storageClass: 'longhorn',
        volume: { volume: 'installer', kind: 'dataVolume', claim: 'web-iso', hotpluggable: false },
      },
      {
        name: 'cloudinitdisk',
        device: 'disk',
        bus: 'virtio',
        claim: '',
        storageClass: '',
        secret: 'web-cloudinit',
        volume: { volume: 'cloudinitdisk', kind: 'cloudInit', claim: '', hotpluggable: false },
      },
    ],
    nics: [{ name: 'default', model: 'virtio', mac: '', network: 'pod' }],
    labels: {},
    annotations: {},
    template: false,
    runStrategy: 'Halted',
    ...over,
  };
}

describe('assignSlots', () => {
  it('keeps PVE-named disks and gives others slots by bus, CD-ROMs and cloud-init on IDE', () => {
    const slots = assignSlots(hw(), { options: {}, disks: {}, nets: {} });
    expect(Object.fromEntries(slots.disks)).toEqual({ rootdisk: 'virtio0', installer: 'ide2', cloudinitdisk: 'ide0' });
    expect(Object.fromEntries(slots.nets)).toEqual({ default: 'net0' });
    const named = assignSlots(
      hw({ disks: [{ name: 'scsi3', device: 'disk', bus: 'scsi', claim: 'c', storageClass: '' }] }),
      { options: {}, disks: {}, nets: {} },
    );
    expect(named.disks.get('scsi3')).toBe('scsi3');
  });
});

describe('vmConfig', () => {
  it('renders a Corral-made VM with PVE types: integers, memory as a string, property strings, digest', () => {
    const config = vmConfig({
      hw: hw(),
      row: row(),
      defaultStorage: 'local-lvm',
      runtime: stopped,
      startOnBoot: false,
    });
    expect(config).toMatchObject({
      name: 'web',
      cores: 2,
      sockets: 1,
      memory: '2048',
      virtio0: 'longhorn:web-disk,format=raw,size=20G',
      ide2: 'local:iso/web-iso,media=cdrom,size=1G',
      ide0: 'cloudinit:web-cloudinit,media=cdrom',
      boot: 'order=virtio0;ide2;net0',
    });
    expect(config.net0).toMatch(/^virtio=BC:24:11(:[0-9A-F]{2}){3},bridge=vmbr0$/);
    expect(config.digest).toBe(configDigest(config));
  });

  it('echoes stored options and per-device extras, with integer flags', () => {
    const annotations = {
      [EXTRAS_ANNOTATION]: serializeExtras({
        options: { description: 'hi', onboot: '1', agent: '1', ostype: 'win11' },
        disks: { virtio0: { storage: 'local-lvm', options: { iothread: '1' } }, ide3: { options: {}, empty: true } },
        nets: { net0: { bridge: 'vmbr0', options: { firewall: '1' }, model: 'vmxnet3' } },
      }),
    };
    const config = vmConfig({
      hw: hw({ annotations, nics: [{ name: 'default', model: 'virtio', mac: '02:00:00:00:00:01', network: 'pod' }] }),
      row: row({ tags: ['a', 'b'], template: true }),
      defaultStorage: 'local-lvm',
      runtime: stopped,
      startOnBoot: false,
    });
    expect(config).toMatchObject({
      description: 'hi',
      // A stored onboot (an older Corral kept it verbatim) gives way to the domain's start on boot.
      onboot: 0,
      agent: '1',
      ostype: 'win11',
      tags: 'a;b',
      template: 1,
      ide3: 'none,media=cdrom',
    });
    expect(config.virtio0).toBe('local-lvm:web-disk,format=raw,iothread=1,size=20G');
    expect(config.net0).toBe('vmxnet3=02:00:00:00:00:01,bridge=vmbr0,firewall=1');
  });

  it('does not claim an agent a running VM cannot answer with', () => {
    const annotations = {
      [EXTRAS_ANNOTATION]: serializeExtras({
        options: { agent: 'enabled=1,fstrim_cloned_disks=0' },
        disks: {},
        nets: {},
      }),
    };
    expect(
      vmConfig({
        hw: hw({ annotations }),
        row: row({ status: 'Running' }),
        defaultStorage: '',
        runtime: running,
        startOnBoot: true,
      }).agent,
    ).toBe('0');
    expect(
      vmConfig({
        hw: hw({ annotations }),
        row: row({ status: 'Running' }),
        defaultStorage: '',
        runtime: { ...running, agentConnected: true },
        startOnBoot: true,
      }).agent,
    ).toBe('enabled=1,fstrim_cloned_disks=0');
    expect(agentEnabled('enabled=1,type=virtio')).toBe(true);
    expect(agentEnabled('type=virtio,enabled=1')).toBe(true);
    expect(agentEnabled('0')).toBe(false);
    expect(agentEnabled('enabled=0,type=virtio')).toBe(false);
  });

  it('reports the agent the same way in config and status/current (issue 14)', () => {
    const setting = 'enabled=1,fstrim_cloned_disks=0,type=virtio';
    for (const runtime of [running, { ...running, agentConnected: true }, stopped]) {
      const shown = reportedAgent(setting, runtime);
      const annotations = {
        [EXTRAS_ANNOTATION]: serializeExtras({ options: { agent: setting }, disks: {}, nets: {} }),
      };
      const status = runtime.active ? 'Running' : 'Stopped';
      const config = vmConfig({
        hw: hw({ annotations }),
        row: row({ status }),
        defaultStorage: '',
        runtime,
        startOnBoot: false,
      });
      expect(config.agent).toBe(shown);
      const current = statusCurrent(
        { vmid: 100, row: row({ status }), node: 'corral-1', runtime },
        shown !== undefined && agentEnabled(shown),
      );
      expect(current.agent === 1).toBe(agentEnabled(String(config.agent)));
    }
    expect(reportedAgent(undefined, running)).toBeUndefined();
  });

  it('shows the domain start on boot as onboot, 1 or 0', () => {
    const base = { hw: hw(), row: row(), defaultStorage: '', runtime: stopped };
    expect(vmConfig({ ...base, startOnBoot: true }).onboot).toBe(1);
    expect(vmConfig({ ...base, startOnBoot: false }).onboot).toBe(0);
  });
});

describe('rows', () => {
  it('gives integers for sizes and counters, uptime only while running', () => {
    const r = resourceRow({
      vmid: 100,
      row: row({ status: 'Running', node: 'corral-2' }),
      node: 'corral-2',
      runtime: running,
    });
    expect(r).toMatchObject({
      id: 'qemu/100',
      type: 'qemu',
      vmid: 100,
      status: 'running',
      maxmem: 2 * G,
      mem: G,
      cpu: 0.25,
      maxdisk: 20 * G,
      uptime: 42,
      maxcpu: 2,
      template: 0,
    });
    const s = statusCurrent({ vmid: 100, row: row(), node: 'corral-1', runtime: stopped, lock: 'snapshot' }, true);
    expect(s).toMatchObject({
      status: 'stopped',
      qmpstatus: 'stopped',
      uptime: 0,
      mem: 0,
      cpu: 0,
      agent: 1,
      lock: 'snapshot',
    });
  });

  it('reports measured usage while running, capped at the VM size, and none once stopped', () => {
    const hungry = { ...running, cpuUsage: 0.5, memoryUsedBytes: 3 * G };
    const live = statusCurrent(
      { vmid: 100, row: row({ status: 'Running', node: 'corral-2' }), node: 'corral-2', runtime: hungry },
      false,
    );
    expect(live).toMatchObject({ cpu: 0.5, mem: 2 * G, maxmem: 2 * G });
    const off = statusCurrent({ vmid: 100, row: row(), node: 'corral-1', runtime: hungry }, false);
    expect(off).toMatchObject({ cpu: 0, mem: 0 });
  });
});
