/**
 * One kind's objects in the watch cache, with the indexes Corral reads by: namespace, node, owning VM and label.
 * Every read of the cache is a map lookup here; nothing scans a kind.
 */
import type { KObject } from '../domain/cluster-port';

const VM_LABELS = ['corral.dev/vm', 'vm.kubevirt.io/name', 'kubevirt.io/domain'];

export type Key = string; // "ns/name" or "name" for cluster-scoped kinds

/**
 * The keys under one index entry: most entries (a VM's own labels, its vmid, the objects of one VM) hold one key,
 * which is kept as the key itself; a Set only from the second on (a Set per VM per label was most of the index).
 */
export type Bucket = Key | Set<Key>;

/** The keys of a bucket, whichever form it has. */
export function keysOf(bucket: Bucket | undefined): Iterable<Key> {
  if (bucket === undefined) return [];
  return typeof bucket === 'string' ? [bucket] : bucket;
}

export class KindIndex {
  readonly objects = new Map<Key, KObject>();
  readonly byNamespace = new Map<string, Map<Key, KObject>>();
  readonly byNode = new Map<string, Bucket>();
  readonly byVm = new Map<string, Bucket>();
  readonly byLabel = new Map<string, Map<string, Bucket>>();

  put(o: KObject): void {
    const key = keyOf(o);
    const old = this.objects.get(key);
    if (old) this.unindex(key, old);
    this.objects.set(key, o);
    this.index(key, o);
  }

  drop(o: KObject): void {
    const key = keyOf(o);
    const old = this.objects.get(key);
    if (!old) return;
    this.unindex(key, old);
    this.objects.delete(key);
  }

  private index(key: Key, o: KObject): void {
    const ns = o.metadata.namespace ?? '';
    let nsMap = this.byNamespace.get(ns);
    if (!nsMap) this.byNamespace.set(ns, (nsMap = new Map()));
    nsMap.set(key, o);
    const node = nodeOf(o);
    if (node) addTo(this.byNode, node, key);
    for (const vm of vmsOf(o)) addTo(this.byVm, `${ns}/${vm}`, key);
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
      let values = this.byLabel.get(k);
      if (!values) this.byLabel.set(k, (values = new Map()));
      addTo(values, v, key);
    }
  }

  private unindex(key: Key, o: KObject): void {
    const ns = o.metadata.namespace ?? '';
    const nsMap = this.byNamespace.get(ns);
    nsMap?.delete(key);
    if (nsMap?.size === 0) this.byNamespace.delete(ns);
    const node = nodeOf(o);
    if (node) removeFrom(this.byNode, node, key);
    for (const vm of vmsOf(o)) removeFrom(this.byVm, `${ns}/${vm}`, key);
    for (const [k, v] of Object.entries(o.metadata.labels ?? {})) {
      const values = this.byLabel.get(k);
      if (values) {
        removeFrom(values, v, key);
        if (values.size === 0) this.byLabel.delete(k);
      }
    }
  }
}

function addTo<K>(m: Map<K, Bucket>, k: K, key: Key): void {
  const b = m.get(k);
  if (b === undefined) m.set(k, key);
  else if (typeof b === 'string') {
    if (b !== key) m.set(k, new Set([b, key]));
  } else b.add(key);
}
function removeFrom<K>(m: Map<K, Bucket>, k: K, key: Key): void {
  const b = m.get(k);
  if (b === undefined) return;
  if (typeof b === 'string') {
    if (b === key) m.delete(k);
    return;
  }
  b.delete(key);
  if (b.size === 1) m.set(k, b.values().next().value as Key);
  else if (b.size === 0) m.delete(k);
}

export function keyOf(o: KObject): Key {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name ?? ''}` : (o.metadata.name ?? '');
}

function nodeOf(o: KObject): string {
  const fromStatus = (o.status as { nodeName?: unknown } | undefined)?.nodeName;
  const fromSpec = (o.spec as { nodeName?: unknown } | undefined)?.nodeName;
  return typeof fromStatus === 'string' && fromStatus ? fromStatus : typeof fromSpec === 'string' ? fromSpec : '';
}

function vmsOf(o: KObject): string[] {
  const out = new Set<string>();
  for (const l of VM_LABELS) {
    const v = o.metadata.labels?.[l];
    if (v) out.add(v);
  }
  for (const r of o.metadata.ownerReferences ?? []) {
    if (r.kind === 'VirtualMachine' || r.kind === 'VirtualMachineInstance') out.add(r.name);
  }
  return [...out];
}
