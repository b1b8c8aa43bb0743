/**
 * The Kubernetes events of one VM and of what belongs to it — its VMI, its virt-launcher pods, its PVCs and
 * DataVolumes — newest first, as the VM page's Events tab and `GET …/events` show them.
 *
 * Events are not in the watch cache (they are many and short-lived), so a request reads them live, narrowed by the
 * apiserver: one list per involved NAME (`fieldSelector=involvedObject.name=<n>`; the VM and its VMI share one, a
 * PVC and its DataVolume another, plus each launcher pod the cache knows), run in parallel and then filtered by kind
 * here. A field selector cannot say "any of these names" (its terms are ANDed), and one list of the whole namespace
 * costs what the namespace holds: with 10,000 events in it that list took 120 ms at the embedded apiserver, one
 * field-selected list 1.8 ms. The answer is bounded. Launcher pods of earlier runs (gone from the cache) are not
 * asked for; their events age out within the hour anyway.
 *
 * Live updates (`watchVmEvents`) are a Kubernetes watch on the namespace's events, opened for one open Events tab
 * and closed when it goes (its AbortSignal): every matching ADDED/MODIFIED is pushed as a row.
 */
import type { VmEvent, VmEventsLiveMessage, VmEventType } from '../schemas/vm-observe';
import { EVENT_LIMIT } from '../schemas/vm-observe';
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { requireVm } from './vm-actions';
import { dataVolumeTemplate, vmVolumes } from './vm-facts';

type Dict = Record<string, unknown>;
const obj = (v: unknown): Dict => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Dict) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Which involved objects are the VM's: kind → names, plus the launcher pod name prefix. */
export interface VmObjects {
  names: Map<string, Set<string>>;
  podPrefix: string;
}

export function vmObjects(deps: DomainDeps, namespace: string, name: string): VmObjects {
  const vm = requireVm(deps, namespace, name);
  const names = new Map<string, Set<string>>([
    ['VirtualMachine', new Set([name])],
    ['VirtualMachineInstance', new Set([name])],
    ['Pod', new Set()],
    ['PersistentVolumeClaim', new Set()],
    ['DataVolume', new Set()],
  ]);
  const add = (kind: string, n: string) => {
    if (n) names.get(kind)?.add(n);
  };
  for (const v of vmVolumes(vm)) {
    if (v.kind !== 'dataVolume' && v.kind !== 'persistentVolumeClaim') continue;
    add('PersistentVolumeClaim', v.claim);
    if (v.kind === 'dataVolume' || dataVolumeTemplate(vm, v.claim)) add('DataVolume', v.claim);
  }
  const cache = deps.cluster.cache;
  for (const kind of ['Pod', 'PersistentVolumeClaim', 'DataVolume'] as const)
    for (const o of cache.ofVm(kind, namespace, name)) add(kind, o.metadata.name ?? '');
  return { names, podPrefix: `virt-launcher-${name}-` };
}

export function involves(objects: VmObjects, event: KObject): boolean {
  const involved = obj(event.involvedObject);
  const kind = str(involved.kind);
  const n = str(involved.name);
  if (objects.names.get(kind)?.has(n)) return true;
  return kind === 'Pod' && n.startsWith(objects.podPrefix);
}

const isoOrUndefined = (v: unknown): string | undefined => {
  const s = str(v);
  return s && Number.isFinite(Date.parse(s)) ? s : undefined;
};

export function eventRow(event: KObject): VmEvent {
  const involved = obj(event.involvedObject);
  const series = obj(event.series);
  const time =
    isoOrUndefined(series.lastObservedTime) ??
    isoOrUndefined(event.lastTimestamp) ??
    isoOrUndefined(event.eventTime) ??
    isoOrUndefined(event.metadata.creationTimestamp) ??
    new Date(0).toISOString();
  const first = isoOrUndefined(event.firstTimestamp) ?? isoOrUndefined(event.eventTime);
  const count = typeof event.count === 'number' ? event.count : typeof series.count === 'number' ? series.count : 1;
  return {
    id: event.metadata.name ?? event.metadata.uid ?? '',
    type: str(event.type) === 'Warning' ? 'Warning' : 'Normal',
    reason: str(event.reason),
    message: str(event.message) || str(event.note),
    count,
    object: { kind: str(involved.kind), name: str(involved.name) },
    time,
    ...(first && first !== time ? { firstTime: first } : {}),
  };
}

/** Newest first; events of the same second by resourceVersion (the later write first) when it is numeric. */
function newestFirst(a: { row: VmEvent; rv: number }, b: { row: VmEvent; rv: number }): number {
  return Date.parse(b.row.time) - Date.parse(a.row.time) || b.rv - a.rv;
}

/** The names to ask the apiserver about: the VM's (also its VMI's), its claims' (PVC and DataVolume), its pods'. */
export function involvedNames(objects: VmObjects): string[] {
  const names = new Set<string>();
  for (const set of objects.names.values()) for (const n of set) names.add(n);
  return [...names];
}

export async function vmEvents(
  deps: DomainDeps,
  namespace: string,
  name: string,
  options: { type?: VmEventType; limit?: number } = {},
): Promise<VmEvent[]> {
  const objects = vmObjects(deps, namespace, name);
  const pages = await Promise.all(
    involvedNames(objects).map((n) =>
      deps.cluster.listPage('Event', {
        namespace,
        fieldSelector: `involvedObject.name=${n}${options.type ? `,type=${options.type}` : ''}`,
      }),
    ),
  );
  const seen = new Set<string>();
  return pages
    .flatMap((p) => p.items)
    .filter((e) => {
      const key = e.metadata.uid ?? e.metadata.name ?? '';
      if (seen.has(key)) return false;
      seen.add(key);
      return involves(objects, e) && (!options.type || e.type === options.type);
    })
    .map((e) => ({ row: eventRow(e), rv: Number(e.metadata.resourceVersion) || 0 }))
    .sort(newestFirst)
    .slice(0, options.limit ?? EVENT_LIMIT)
    .map((e) => e.row);
}

/**
 * Pushes the VM's new and updated events until `signal` aborts. First a `resync` once the watch is open (the
 * caller reads the list again, so nothing between its list and the watch is lost), then one `event` per change.
 * A watch the apiserver ends is resumed from the last version seen; an expired version or a failed watch starts
 * over (after a back-off) with a resync. Only the signal ends it.
 */
export async function* watchVmEvents(
  deps: DomainDeps,
  namespace: string,
  name: string,
  signal: AbortSignal,
): AsyncGenerator<VmEventsLiveMessage> {
  requireVm(deps, namespace, name);
  const queue: VmEventsLiveMessage[] = [];
  let wake: (() => void) | undefined;
  const push = (m: VmEventsLiveMessage) => {
    queue.push(m);
    wake?.();
  };
  const run = async () => {
    let version = '';
    let backoffMs = 0;
    while (!signal.aborted) {
      let delivered = false;
      try {
        if (!version) {
          // A one-row list gives the collection's current version without reading the namespace's events.
          version = (await deps.cluster.listPage('Event', { namespace, limit: 1 })).resourceVersion;
          push({ kind: 'resync' });
        }
        const end = await deps.cluster.watch(
          'Event',
          { namespace, resourceVersion: version },
          (change) => {
            delivered = true;
            version = change.object.metadata.resourceVersion ?? version;
            if (change.type === 'DELETED') return;
            // The VM's objects change (a new launcher pod, a hot-plugged disk): look them up per event.
            if (!deps.cluster.cache.get('VirtualMachine', namespace, name)) return;
            if (involves(vmObjects(deps, namespace, name), change.object))
              push({ kind: 'event', event: eventRow(change.object) });
          },
          signal,
        );
        if (end === 'expired') version = '';
      } catch {
        // The cluster went away or refused the watch: try again later from a fresh list (and a resync).
        version = '';
      }
      // A stream that ends at once without news must not spin: back off, up to 30 s.
      backoffMs = delivered ? 0 : Math.min(30_000, Math.max(1_000, backoffMs * 2));
      if (!signal.aborted && backoffMs) await abortableSleep(backoffMs, signal);
    }
  };
  let ended = false;
  void run().finally(() => {
    ended = true;
    wake?.();
  });
  while (true) {
    while (queue.length) yield queue.shift()!;
    if (ended) return;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
}

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}
