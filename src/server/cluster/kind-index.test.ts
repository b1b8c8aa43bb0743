import { describe, expect, it } from 'vitest';
import type { KObject } from '../domain/cluster-port';
import { KindIndex, keysOf } from './kind-index';

const pod = (name: string, node: string, vm: string): KObject => ({
  metadata: { name, namespace: 'ns', labels: { 'kubevirt.io/domain': vm, app: 'x' } },
  spec: { nodeName: node },
});

describe('KindIndex buckets', () => {
  it('a single key stays a plain key, a second makes a set, and removals go back to a key and then nothing', () => {
    const idx = new KindIndex();
    idx.put(pod('a', 'n1', 'vm-a'));
    expect(idx.byNode.get('n1')).toBe('ns/a');
    expect(idx.byVm.get('ns/vm-a')).toBe('ns/a');
    idx.put(pod('b', 'n1', 'vm-b'));
    expect([...keysOf(idx.byNode.get('n1'))].sort()).toEqual(['ns/a', 'ns/b']);
    expect([...keysOf(idx.byLabel.get('app')?.get('x'))].sort()).toEqual(['ns/a', 'ns/b']);
    idx.put(pod('a', 'n1', 'vm-a')); // the same object again: still two, no duplicate
    expect([...keysOf(idx.byNode.get('n1'))]).toHaveLength(2);
    idx.drop(pod('a', 'n1', 'vm-a'));
    expect(idx.byNode.get('n1')).toBe('ns/b');
    expect(idx.byVm.has('ns/vm-a')).toBe(false);
    idx.put(pod('b', 'n2', 'vm-b')); // moved to another node
    expect(idx.byNode.has('n1')).toBe(false);
    expect(idx.byNode.get('n2')).toBe('ns/b');
    idx.drop(pod('b', 'n2', 'vm-b'));
    expect(idx.byNode.size + idx.byVm.size + idx.byLabel.size + idx.objects.size).toBe(0);
  });
});
