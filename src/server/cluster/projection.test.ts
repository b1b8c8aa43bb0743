import { describe, expect, it } from 'vitest';
import type { KObject } from '../domain/cluster-port';
import { Interner } from './intern';
import { project } from './projection';

/** A fresh parse, as the watch cache gets every object. */
const parsed = (o: unknown) => JSON.parse(JSON.stringify(o)) as KObject;

const vm = (name: string) =>
  parsed({
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: {
      name,
      namespace: 'bench',
      uid: `uid-${name}`,
      resourceVersion: '7',
      labels: { 'corral.dev/vm': name, 'corral.dev/tag.prod': 'true' },
      annotations: {
        'kubectl.kubernetes.io/last-applied-configuration': '{"big":"copy"}',
        'corral.dev/notes': 'kept',
      },
      managedFields: [{ manager: 'kubectl', operation: 'Apply', fieldsV1: { 'f:spec': {} } }],
    },
    spec: {
      runStrategy: 'Always',
      template: {
        spec: {
          domain: { devices: { disks: [{ name: 'rootdisk', disk: { bus: 'virtio' } }] } },
          volumes: [{ name: 'rootdisk', containerDisk: { image: 'quay.io/containerdisks/fedora:42' } }],
        },
      },
    },
    status: { printableStatus: 'Running' },
  });

describe('the watch cache projection', () => {
  it('drops managedFields and the last-applied copy of a VM, keeps its spec, status and other annotations whole', () => {
    const input = vm('vm-1');
    const out = project('VirtualMachine', input, new Interner());
    expect(out.metadata.managedFields).toBeUndefined();
    expect(out.metadata.annotations).toEqual({ 'corral.dev/notes': 'kept' });
    const { managedFields: _m, annotations: _a, ...meta } = vm('vm-1').metadata;
    expect({ ...out.metadata, annotations: undefined }).toEqual({ ...meta, annotations: undefined });
    expect(out.spec).toEqual(vm('vm-1').spec);
    expect(out.status).toEqual({ printableStatus: 'Running' });
    expect(out.apiVersion).toBe('kubevirt.io/v1');
  });

  it('puts the repeated strings of every object through the interner, unique ones not', () => {
    const strings = new Interner();
    project('VirtualMachine', vm('vm-1'), strings);
    project('VirtualMachine', vm('vm-2'), strings);
    const held = strings.size;
    expect(held).toBeGreaterThan(0);
    // Already in the table (a hit adds nothing): namespace, image, bus word, label value, run strategy.
    for (const s of ['bench', 'quay.io/containerdisks/fedora:42', 'virtio', 'true', 'Always']) strings.intern(s);
    expect(strings.size).toBe(held);
    // Never put there: uids, versions, and the names (a value equal to the name is the name's own copy).
    for (const s of ['uid-vm-1', '7', 'vm-1', 'vm-2']) strings.intern(s);
    expect(strings.size).toBe(held + 4);
    // A third VM adds nothing: all its repeated values are there, its own ones are not interned.
    project('VirtualMachine', vm('vm-3'), strings);
    expect(strings.size).toBe(held + 4);
  });

  it('keeps of a pod the node, hostname and containers’ names and images, and its metadata and status whole', () => {
    const pod = parsed({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'virt-launcher-vm-1-abcde', namespace: 'bench', labels: { 'kubevirt.io/domain': 'vm-1' } },
      spec: {
        nodeName: 'corral-2',
        containers: [{ name: 'compute', image: 'virt-launcher:1.5', env: [{ name: 'X', value: 'y' }] }],
        volumes: [{ name: 'private', emptyDir: {} }],
        tolerations: [{ key: 'a', operator: 'Exists' }],
      },
      status: { phase: 'Running', podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
    });
    const out = project('Pod', pod, new Interner());
    expect(out.spec).toEqual({ nodeName: 'corral-2', containers: [{ name: 'compute', image: 'virt-launcher:1.5' }] });
    expect(out.status).toEqual(pod.status);
    expect(out.metadata).toEqual(pod.metadata);
  });

  it('drops a node’s image list and volume lists, keeps the rest of its status', () => {
    const node = parsed({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'corral-1' },
      status: {
        capacity: { cpu: '32' },
        conditions: [{ type: 'Ready', status: 'True' }],
        images: [{ names: ['a'], sizeBytes: 1 }],
        volumesInUse: ['x'],
        volumesAttached: [{ name: 'x', devicePath: '' }],
      },
    });
    expect(project('Node', node, new Interner()).status).toEqual({
      capacity: { cpu: '32' },
      conditions: [{ type: 'Ready', status: 'True' }],
    });
  });
});
