import { describe, expect, it } from 'vitest';
import type { KObject } from './cluster-port';
import { ANNOTATION_MOVED_FROM, movedVm, multusNetworks, nodePins } from './move-spec';

const source: KObject = {
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: {
    name: 'web',
    namespace: 'tailvm',
    labels: { 'corral.dev/vm': 'web', 'corral.dev/tag.prod': 'true', 'corral.io/proxmox-vmid': '104', team: 'a' },
    annotations: { 'kubevirt.io/latest-observed-api-version': 'v1', note: 'keep me' },
  },
  spec: {
    runStrategy: 'Always',
    instancetype: { kind: 'VirtualMachineClusterInstancetype', name: 'u1.small', revisionName: 'web-u1.small-1' },
    dataVolumeTemplates: [{ metadata: { name: 'web-disk' } }],
    template: {
      metadata: { labels: { 'kubevirt.io/domain': 'web', app: 'shop' } },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': 'node-1', 'disk-type': 'ssd' },
        domain: {
          devices: {
            interfaces: [
              { name: 'default', masquerade: {}, macAddress: '02:00:00:00:00:01' },
              { name: 'lan', bridge: {}, macAddress: '02:00:00:00:00:02' },
            ],
          },
        },
        networks: [
          { name: 'default', pod: {} },
          { name: 'lan', multus: { networkName: 'br-lan' } },
        ],
        volumes: [
          { name: 'rootdisk', dataVolume: { name: 'web-disk', hotpluggable: true } },
          { name: 'data', persistentVolumeClaim: { claimName: 'web-data' } },
          { name: 'cloudinit', cloudInitNoCloud: { secretRef: { name: 'web-ci' } } },
        ],
      },
    },
  },
};

describe('the moved VM definition', () => {
  const moved = movedVm(source, {
    namespace: 'apps',
    name: 'shop',
    disks: new Map([
      ['rootdisk', 'shop-disk'],
      ['data', 'shop-data'],
    ]),
    secrets: new Map([['web-ci', 'shop-ci']]),
    dropNetworks: new Set(['lan']),
    movedFrom: 'kubevirt/home/tailvm/web',
  });
  const spec = moved.spec as {
    runStrategy: string;
    dataVolumeTemplates?: unknown;
    instancetype: Record<string, string>;
    template: {
      metadata: { labels: Record<string, string> };
      spec: {
        nodeSelector?: Record<string, string>;
        domain: { devices: { interfaces: Record<string, unknown>[] } };
        networks: { name: string }[];
        volumes: Record<string, unknown>[];
      };
    };
  };

  it('is created Halted under the new name, with its disks on the uploaded DataVolumes', () => {
    expect(moved.metadata).toMatchObject({ name: 'shop', namespace: 'apps' });
    expect(spec.runStrategy).toBe('Halted');
    expect(spec.dataVolumeTemplates).toBeUndefined();
    expect(spec.template.spec.volumes).toEqual([
      { name: 'rootdisk', dataVolume: { name: 'shop-disk' } },
      { name: 'data', dataVolume: { name: 'shop-data' } },
      { name: 'cloudinit', cloudInitNoCloud: { secretRef: { name: 'shop-ci' } } },
    ]);
    expect(spec.template.metadata.labels).toEqual({ 'kubevirt.io/domain': 'shop', app: 'shop' });
  });

  it('clears MACs, leaves out NICs without a NAD and node pins, and lets the destination resolve the instancetype', () => {
    expect(spec.template.spec.domain.devices.interfaces).toEqual([{ name: 'default', masquerade: {} }]);
    expect(spec.template.spec.networks).toEqual([{ name: 'default', pod: {} }]);
    expect(spec.template.spec.nodeSelector).toEqual({ 'disk-type': 'ssd' });
    expect(spec.instancetype).toEqual({ kind: 'VirtualMachineClusterInstancetype', name: 'u1.small' });
  });

  it('keeps labels, tags and annotations, not the per-cluster vmid nor KubeVirt annotations', () => {
    expect(moved.metadata.labels).toEqual({ 'corral.dev/vm': 'shop', 'corral.dev/tag.prod': 'true', team: 'a' });
    expect(moved.metadata.annotations).toEqual({
      note: 'keep me',
      [ANNOTATION_MOVED_FROM]: 'kubevirt/home/tailvm/web',
    });
  });

  it('leaves the source object as it was', () => {
    expect(JSON.stringify(source)).toContain('02:00:00:00:00:01');
    expect((source.spec as { runStrategy: string }).runStrategy).toBe('Always');
  });

  it('names the node pins and Multus networks the preflight reports', () => {
    expect(nodePins(source)).toEqual(['node pin: nodeSelector kubernetes.io/hostname=node-1']);
    expect(multusNetworks(source)).toEqual([{ network: 'lan', nad: 'br-lan' }]);
  });
});
