/**
 * How full each StorageClass is: `used` is the sum of the capacities of its Bound PVCs (from the watch cache);
 * `avail` comes from the cluster's CSIStorageCapacity objects when its CSI driver publishes them (storage capacity
 * tracking), else it is an estimate over the nodes' disks (their `ephemeral-storage` capacity) that every class
 * without published capacity is assumed to share. `estimated` says which. Never a per-PVC cluster call: PVCs and
 * Nodes come from the cache, CSIStorageCapacity objects are listed at most every 10 s.
 */
import { CorralError } from '../errors';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { quantityToNumber } from './quantity';
import { asDict, asString } from './vm-facts';

export interface ClassCapacity {
  /** Bytes of Bound claims of this class. */
  used: number;
  /** used + avail. */
  total: number;
  /** Bytes a new volume could still take. */
  avail: number;
  /** True when avail/total come from the nodes' disks rather than from the CSI driver. */
  estimated: boolean;
}

export interface StorageCapacity {
  /** Per StorageClass name (every class that has claims or published capacity; others read `pool`). */
  byClass: Map<string, ClassCapacity>;
  /** The estimate every class without published capacity shares: the nodes' disks and everything claimed on them. */
  pool: { total: number; used: number; avail: number };
  /** The class a claim without `storageClassName` was given (the cluster default), '' when none is marked. */
  defaultClass: string;
}

const CSI_TTL_MS = 10_000;
const csiCache = new WeakMap<object, { at: number; avail: Map<string, number> }>();

/** Bytes of a quantity, 0 when absent or malformed. */
function bytes(q: unknown): number {
  const n = quantityToNumber(typeof q === 'string' || typeof q === 'number' ? q : undefined);
  return Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

/** The capacity a Bound claim holds: its status capacity (what was provisioned), else its request. */
export function boundClaimBytes(pvc: KObject): number {
  if (asString(asDict(pvc.status).phase) !== 'Bound') return 0;
  const capacity = bytes(asDict(asDict(pvc.status).capacity).storage);
  return capacity || bytes(asDict(asDict(asDict(pvc.spec).resources).requests).storage);
}

/** Bytes of Bound claims by StorageClass (a claim without a class counts for `defaultClass`). */
export function claimedBytesByClass(deps: DomainDeps, defaultClass: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pvc of deps.cluster.cache.list('PersistentVolumeClaim')) {
    const size = boundClaimBytes(pvc);
    if (!size) continue;
    const cls = asString(asDict(pvc.spec).storageClassName) || defaultClass;
    out.set(cls, (out.get(cls) ?? 0) + size);
  }
  return out;
}

/** The nodes' disks: the sum of every Node's `ephemeral-storage` capacity (what the kubelet's filesystem holds). */
export function nodeDiskBytes(deps: DomainDeps): number {
  let total = 0;
  for (const node of deps.cluster.cache.list('Node'))
    total += bytes(asDict(asDict(node.status).capacity)['ephemeral-storage']);
  return total;
}

/** Published free capacity by StorageClass (CSIStorageCapacity `capacity`, summed over topology segments). */
async function publishedAvail(deps: DomainDeps): Promise<Map<string, number>> {
  const hit = csiCache.get(deps.cluster);
  if (hit && Date.now() - hit.at < CSI_TTL_MS) return hit.avail;
  let objects: KObject[];
  try {
    objects = await deps.cluster.fetchList('CSIStorageCapacity');
  } catch (err) {
    // A cluster without storage.k8s.io/v1 CSIStorageCapacity, or an account not allowed to list it (older RBAC):
    // nothing published, so the estimate stands. Any other failure (cluster away) propagates.
    if (!(err instanceof CorralError && (err.code === 'NOT_FOUND' || err.code === 'FORBIDDEN'))) throw err;
    objects = [];
  }
  const avail = new Map<string, number>();
  for (const o of objects) {
    const cls = asString(o.storageClassName);
    if (!cls || o.capacity === undefined) continue;
    avail.set(cls, (avail.get(cls) ?? 0) + bytes(o.capacity));
  }
  csiCache.set(deps.cluster, { at: Date.now(), avail });
  return avail;
}

/**
 * Capacity of every StorageClass. `defaultClass` names the class claims without `storageClassName` belong to (the
 * caller has it from `storageClasses()`).
 */
export async function storageCapacity(deps: DomainDeps, defaultClass: string): Promise<StorageCapacity> {
  const [claimed, published] = [claimedBytesByClass(deps, defaultClass), await publishedAvail(deps)];
  const diskTotal = nodeDiskBytes(deps);
  let pooledUse = 0;
  for (const [cls, used] of claimed) if (!published.has(cls)) pooledUse += used;
  const pool = { total: diskTotal, used: pooledUse, avail: Math.max(0, diskTotal - pooledUse) };
  const byClass = new Map<string, ClassCapacity>();
  for (const cls of new Set([...claimed.keys(), ...published.keys()])) {
    const used = claimed.get(cls) ?? 0;
    const avail = published.get(cls);
    byClass.set(
      cls,
      avail !== undefined
        ? { used, avail, total: used + avail, estimated: false }
        : { used, avail: pool.avail, total: Math.max(pool.total, used + pool.avail), estimated: true },
    );
  }
  return { byClass, pool, defaultClass };
}

/** A class's figures, or the pool estimate with nothing used for a class nobody has claimed from yet. */
export function classCapacity(capacity: StorageCapacity, storageClass: string): ClassCapacity {
  return (
    capacity.byClass.get(storageClass) ?? {
      used: 0,
      avail: capacity.pool.avail,
      total: capacity.pool.total,
      estimated: true,
    }
  );
}
