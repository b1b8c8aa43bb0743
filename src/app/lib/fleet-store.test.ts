import { describe, expect, it } from 'vitest';
import { ChangeNotifier, KeyedCollection } from './fleet-store';

describe('KeyedCollection', () => {
  it('keys namespaced rows by ns/name and cluster rows by name', () => {
    const c = new KeyedCollection<{ name: string; namespace?: string; v: number }>();
    c.replaceAll([
      { name: 'a', namespace: 'x', v: 1 },
      { name: 'a', namespace: 'y', v: 2 },
      { name: 'n1', v: 3 },
    ]);
    expect(c.size).toBe(3);
    expect(c.get('y/a')?.v).toBe(2);
    expect(c.get('n1')?.v).toBe(3);
  });

  it('keeps the list identity until something changes', () => {
    const c = new KeyedCollection<{ name: string; namespace: string; v: number }>();
    c.upsert({ name: 'a', namespace: 'x', v: 1 });
    const first = c.list();
    expect(c.list()).toBe(first);
    c.upsert({ name: 'a', namespace: 'x', v: 2 });
    const second = c.list();
    expect(second).not.toBe(first);
    expect(second).toEqual([{ name: 'a', namespace: 'x', v: 2 }]);
    c.remove('x/missing');
    expect(c.list()).toBe(second);
    c.remove('x/a');
    expect(c.list()).toEqual([]);
  });
});

describe('ChangeNotifier', () => {
  it('bumps the version per change but notifies once per batch', async () => {
    const n = new ChangeNotifier();
    let calls = 0;
    const off = n.subscribe(() => calls++);
    n.changed();
    n.changed();
    n.changed();
    expect(n.getVersion()).toBe(3);
    await Promise.resolve();
    expect(calls).toBe(1);
    off();
    n.changed();
    await Promise.resolve();
    expect(calls).toBe(1);
  });
});
