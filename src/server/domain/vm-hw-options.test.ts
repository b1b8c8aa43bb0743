import { describe, expect, it } from 'vitest';
import type { KObject } from './cluster-port';
import { startOnBootOf } from './vm-hw-options';

const vm = (runStrategy: string): KObject => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name: 'web', namespace: 'tailvm' },
  spec: { runStrategy },
});

describe('startOnBootOf', () => {
  it('reads start on boot from the run strategy, Halted counting only while stopped', () => {
    const table = ['Always', 'RerunOnFailure', 'Once', 'Manual', 'Halted'].map((s) => [
      s,
      startOnBootOf(vm(s), true),
      startOnBootOf(vm(s), false),
    ]);
    expect(table).toEqual([
      ['Always', true, true],
      ['RerunOnFailure', true, true],
      ['Once', true, true],
      ['Manual', false, false],
      // KubeVirt's start turns a stopped Halted VM into Always; a running one that is Halted is being stopped.
      ['Halted', false, true],
    ]);
  });
});
