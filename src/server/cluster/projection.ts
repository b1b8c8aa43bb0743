/**
 * What the watch cache keeps of each object (issue 17, docs/scale.md "Memory"): the parts Corral serves and acts
 * on, with repeated strings shared, instead of the whole object as the apiserver sent it.
 *
 * Dropped, per kind (every reader of the cache was checked; none reads these):
 * - every kind: `metadata.managedFields` (often larger than the rest of the object) and the
 *   `kubectl.kubernetes.io/last-applied-configuration` annotation (a second copy of the object);
 * - Pod: the spec except `nodeName`, `hostname` and the containers' names and images (launcher and CT pods are
 *   read for their node, phase, conditions, container statuses and IP; volumes, env, mounts, probes, security
 *   context, tolerations and affinity are not);
 * - Node: `status.images` (every image the node pulled, kilobytes per node), `volumesInUse`, `volumesAttached`.
 * VMs, VMIs, claims, DataVolumes and migrations keep their spec and status whole: hardware edits build their patches
 * from the cached VM spec, and the pending-change view compares it with the VMI's. Anything that needs the object
 * exactly as stored (the VM's YAML view) reads it from the apiserver (`ClusterPort.fetch`).
 *
 * Strings are shared: a value equal to the object's name (the `corral.dev/vm`, `kubevirt.io/domain` labels, owner
 * references) becomes the name itself, and other short values (namespace, label values, node names, images, bus and
 * size words) go through the Interner; values unique by nature (uids, versions, timestamps, addresses) are left
 * alone so they do not churn its table. The parsed object is the cache's own (one per watch line or list item), so
 * strings are replaced in place: assigning an existing property keeps V8's fast object shape, deleting would not,
 * which is why dropped fields are left out of a rebuilt object instead.
 */
import type { CachedKind, KMeta, KObject } from '../domain/cluster-port';
import type { Interner } from './intern';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** Longer strings are rarely repeated (messages, JSON in annotations): not worth a table entry. */
const MAX_INTERNED = 64;

/** Fields whose values are unique per object or per moment: never interned. */
const UNIQUE_FIELDS = new Set([
  'uid',
  'resourceVersion',
  'creationTimestamp',
  'deletionTimestamp',
  'generateName',
  'lastTransitionTime',
  'lastProbeTime',
  'lastHeartbeatTime',
  'lastUpdateTime',
  'phaseTransitionTimestamp',
  'startTime',
  'startedAt',
  'finishedAt',
  'containerID',
  'imageID',
  'ipAddress',
  'podIP',
  'hostIP',
  'ip',
  'mac',
  'macAddress',
  'serial',
  'message',
]);

const NODE_STATUS_DROPPED = new Set(['images', 'volumesInUse', 'volumesAttached']);

/**
 * The cache's copy of `o` (which the caller hands over: a freshly decoded object): projected for its kind, strings
 * shared. Built in place, replacing whole properties: spreading or rest-destructuring an object makes V8 copies
 * that cost more memory than the decoded original (measured: ~40 % more per VM).
 */
export function project(kind: CachedKind, o: KObject, strings: Interner): KObject {
  if ('managedFields' in o.metadata || (o.metadata.annotations && LAST_APPLIED in o.metadata.annotations))
    o.metadata = projectMeta(o.metadata);
  if (kind === 'Pod' && o.spec) o.spec = podSpec(o.spec);
  if (kind === 'Node' && o.status) o.status = without(o.status, NODE_STATUS_DROPPED);
  share(o, o.metadata.name ?? '', strings);
  return o;
}

const META_DROPPED = new Set(['managedFields']);
const ANNOTATIONS_DROPPED = new Set([LAST_APPLIED]);

function projectMeta(m: KMeta): KMeta {
  const out = without(m, META_DROPPED) as KMeta;
  if (m.annotations) out.annotations = without(m.annotations, ANNOTATIONS_DROPPED) as Record<string, string>;
  return out;
}

function podSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (spec.nodeName !== undefined) out.nodeName = spec.nodeName;
  if (spec.hostname !== undefined) out.hostname = spec.hostname;
  if (Array.isArray(spec.containers))
    out.containers = (spec.containers as Record<string, unknown>[]).map((c) => ({ name: c.name, image: c.image }));
  return out;
}

function without<T extends object>(o: T, dropped: Set<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (!dropped.has(k)) out[k] = (o as Record<string, unknown>)[k];
  return out;
}

/** Replaces, in place, every short string of `v` (not under a unique field) by its shared copy. */
function share(v: object, name: string, strings: Interner): void {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'string') v[i] = shared(x, name, strings);
      else if (x !== null && typeof x === 'object') share(x, name, strings);
    }
    return;
  }
  const o = v as Record<string, unknown>;
  for (const k in o) {
    const x = o[k];
    if (typeof x === 'string') {
      if (!UNIQUE_FIELDS.has(k)) o[k] = shared(x, name, strings);
    } else if (x !== null && typeof x === 'object') share(x, name, strings);
  }
}

function shared(s: string, name: string, strings: Interner): string {
  if (s === name) return name;
  return s.length <= MAX_INTERNED ? strings.intern(s) : s;
}
