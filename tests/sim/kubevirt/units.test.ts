import { describe, expect, it } from 'vitest';
import { pullFailure } from '../../../src/sim/kubevirt/kubelet.js';
import { cpuMillis, formatBytes, memoryBytes } from '../../../src/sim/kubevirt/quantity.js';
import { schedule } from '../../../src/sim/kubevirt/scheduler.js';
import { sizingOf } from '../../../src/sim/kubevirt/sizing.js';
import { printableStatus } from '../../../src/sim/kubevirt/vm-controller.js';
import type { KObject } from '../../../src/sim/store/types.js';

function obj(
  kind: string,
  name: string,
  rest: Record<string, unknown> = {},
  labels: Record<string, string> = {},
): KObject {
  return {
    apiVersion: 'v1',
    kind,
    metadata: { name, uid: `${name}-uid`, resourceVersion: '1', creationTimestamp: '2026-01-01T00:00:00Z', labels },
    ...rest,
  };
}

function node(name: string, cpu: string, memory: string, labels: Record<string, string> = {}, ready = true): KObject {
  return obj(
    'Node',
    name,
    {
      status: {
        allocatable: { cpu, memory, pods: '110' },
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }],
      },
    },
    { 'kubernetes.io/hostname': name, ...labels },
  );
}

function pod(cpu: string, memory: string, spec: Record<string, unknown> = {}): KObject {
  return obj('Pod', 'p', {
    spec: { containers: [{ name: 'c', image: 'x', resources: { requests: { cpu, memory } } }], ...spec },
  });
}

const idle = () => ({ cpuMillis: 0, memoryBytes: 0, pods: 0 });

describe('quantities', () => {
  it('parses CPU and memory in every suffix metrics-server and kubelet use', () => {
    expect(cpuMillis('2')).toBe(2000);
    expect(cpuMillis('250m')).toBe(250);
    expect(cpuMillis('152436721n')).toBe(152);
    expect(memoryBytes('4Gi')).toBe(4 * 2 ** 30);
    expect(memoryBytes('65838656Ki')).toBe(65838656 * 1024);
    expect(memoryBytes('1G')).toBe(1e9);
    expect(memoryBytes('1e3')).toBe(1000);
    expect(formatBytes(4346 * 2 ** 20)).toBe('4346Mi');
    expect(() => memoryBytes('4GB')).toThrow(/quantities must match/);
  });

  it('names the field of a malformed guest memory', () => {
    expect(() => sizingOf({ memory: { guest: 'lots' } })).toThrow(
      'spec.template.spec.domain.memory.guest: Invalid value: "lots"',
    );
  });
});

describe('scheduler', () => {
  it('prefers the least allocated node that fits', () => {
    const nodes = [node('a', '4', '8Gi'), node('b', '16', '64Gi')];
    const result = schedule(pod('1', '2Gi'), nodes, idle);
    expect('node' in result && result.node.metadata.name).toBe('b');
  });

  it("explains a refusal with kube-scheduler's counts", () => {
    const nodes = [node('a', '4', '8Gi'), node('b', '16', '64Gi', {}, false), node('c', '4', '8Gi', { zone: 'x' })];
    const result = schedule(pod('1', '16Gi', { nodeSelector: { zone: 'x' } }), nodes, idle);
    expect(result).toEqual({
      message:
        "0/3 nodes are available: 1 Insufficient memory, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node.kubernetes.io/not-ready: }. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    });
  });

  it('honours required node affinity (migration targets avoid the source node)', () => {
    const nodes = [node('a', '16', '64Gi'), node('b', '4', '8Gi')];
    const affinity = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'NotIn', values: ['a'] }] },
          ],
        },
      },
    };
    const result = schedule(pod('1', '1Gi', { affinity }), nodes, idle);
    expect('node' in result && result.node.metadata.name).toBe('b');
  });

  it('counts what is already running on a node', () => {
    const nodes = [node('a', '4', '8Gi')];
    const full = schedule(pod('1', '2Gi'), nodes, () => ({ cpuMillis: 3500, memoryBytes: 0, pods: 1 }));
    expect(full).toEqual({ message: expect.stringContaining('1 Insufficient cpu') });
  });
});

describe('image pulls without a network', () => {
  it('fails for reserved registry names and missing repositories only', () => {
    expect(pullFailure('quay.io/containerdisks/fedora:42')).toBeUndefined();
    expect(pullFailure('debian:bookworm')).toBeUndefined();
    expect(pullFailure('registry.invalid/app:1')).toContain('lookup registry.invalid: no such host');
    expect(pullFailure('localhost:5000/app:1')).toContain('no such host');
    expect(pullFailure('quay.io/team/does-not-exist:1')).toContain('not found');
    expect(pullFailure('docker.io/library/app:missing')).toContain('not found');
  });
});

describe('printableStatus precedence', () => {
  const vm = (spec: Record<string, unknown>, extra: Partial<KObject['metadata']> = {}): KObject => {
    const o = obj('VirtualMachine', 'web', { spec });
    Object.assign(o.metadata, extra);
    return o;
  };
  const vmi = (phase: string, conditions: unknown[] = [], extra: Record<string, unknown> = {}): KObject =>
    obj('VirtualMachineInstance', 'web', { status: { phase, conditions, ...extra } });

  it('walks the states a VM shows', () => {
    expect(printableStatus(vm({ runStrategy: 'Halted' }), undefined, undefined)).toBe('Stopped');
    expect(printableStatus(vm({ runStrategy: 'Always' }), undefined, undefined)).toBe('Starting');
    expect(printableStatus(vm({ running: true }), vmi('Scheduling'), undefined)).toBe('Starting');
    expect(printableStatus(vm({ runStrategy: 'Always' }), vmi('Running'), undefined)).toBe('Running');
    expect(
      printableStatus(vm({ runStrategy: 'Always' }), vmi('Running', [{ type: 'Paused', status: 'True' }]), undefined),
    ).toBe('Paused');
    expect(printableStatus(vm({ runStrategy: 'Halted' }), vmi('Running'), undefined)).toBe('Stopping');
    expect(
      printableStatus(
        vm({ runStrategy: 'Always' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }),
        vmi('Running'),
        undefined,
      ),
    ).toBe('Terminating');
    expect(
      printableStatus(
        vm({ runStrategy: 'Always' }),
        vmi('Running', [], { migrationState: { completed: false } }),
        undefined,
      ),
    ).toBe('Migrating');
    expect(
      printableStatus(
        vm({ runStrategy: 'Always' }),
        vmi('Scheduling', [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }]),
        undefined,
      ),
    ).toBe('ErrorUnschedulable');
    expect(printableStatus(vm({ runStrategy: 'Always' }), undefined, { printable: 'Provisioning', message: '' })).toBe(
      'Provisioning',
    );
    expect(
      printableStatus(vm({ runStrategy: 'Halted' }), undefined, { printable: 'ErrorPvcNotFound', message: '' }),
    ).toBe('Stopped');
    expect(printableStatus(vm({ runStrategy: 'Manual' }), vmi('Succeeded'), undefined)).toBe('Stopped');
  });
});
