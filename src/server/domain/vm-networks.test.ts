import { describe, expect, it } from 'vitest';
import { FakeCluster } from '../testing/fake-cluster';
import { createCorralServices } from './services';
import { missingNetworks, requireNetworks } from './vm-networks';

const nic = (name: string, network: string) => ({ name, model: 'virtio', mac: 'BC:24:11:00:00:01', network });
const nad = (namespace: string, name: string) => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name, namespace },
});

describe('Multus networks named by NICs', () => {
  it('finds each in the VM namespace or the one it names, and reports the NICs whose network is missing', async () => {
    const cluster = new FakeCluster();
    cluster.put('NetworkAttachmentDefinition', nad('tailvm', 'lan'));
    cluster.put('NetworkAttachmentDefinition', nad('shared', 'dmz'));
    const { deps } = createCorralServices(cluster);
    const nics = [
      nic('net0', 'pod'),
      nic('net1', 'lan'),
      nic('net2', 'shared/dmz'),
      nic('net3', 'dmz'),
      nic('net4', 'other/lan'),
    ];
    expect(await missingNetworks(deps, 'tailvm', nics)).toEqual([
      {
        nic: 'net3',
        message: expect.stringContaining("no NetworkAttachmentDefinition 'dmz' in namespace tailvm") as unknown,
      },
      {
        nic: 'net4',
        message: expect.stringContaining("no NetworkAttachmentDefinition 'lan' in namespace other") as unknown,
      },
    ]);
    await expect(requireNetworks(deps, 'tailvm', nics.slice(0, 3))).resolves.toBeUndefined();
    await expect(requireNetworks(deps, 'tailvm', [nic('net1', 'wan')])).rejects.toMatchObject({
      code: 'BAD_REQUEST',
      message: expect.stringMatching(/^net1: no NetworkAttachmentDefinition 'wan'/) as unknown,
    });
  });
});
