/**
 * Kubernetes Events as controllers emit them (`kubectl describe` shows them; Corral's task log reads them).
 * Repeats of the same reason for the same object bump `count` instead of piling up.
 */
import type { ObjectStore } from './store/object-store.js';
import { nowTimestamp } from './store/object-store.js';
import type { KObject } from './store/types.js';

const EVENTS = '/events';

export function recordEvent(
  store: ObjectStore,
  involved: KObject,
  reason: string,
  message: string,
  options: { type?: 'Normal' | 'Warning'; component?: string } = {},
): void {
  const namespace = involved.metadata.namespace ?? 'default';
  if (!store.get('/namespaces', undefined, namespace)) return;
  const base = `${involved.metadata.name}.${reason.toLowerCase()}`;
  const seen = seenEvents(store);
  const dedupeKey = `${involved.metadata.uid}\u0000${reason}\u0000${message}`;
  const existingName = seen.get(dedupeKey);
  const now = nowTimestamp();
  if (existingName && store.get(EVENTS, namespace, existingName)) {
    store.mutate(EVENTS, namespace, existingName, (e) => {
      e.count = ((e.count as number | undefined) ?? 1) + 1;
      e.lastTimestamp = now;
    });
    return;
  }
  const created = store.create(EVENTS, {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { generateName: `${base}.`, namespace },
    involvedObject: {
      apiVersion: involved.apiVersion,
      kind: involved.kind,
      name: involved.metadata.name,
      namespace: involved.metadata.namespace,
      uid: involved.metadata.uid,
      resourceVersion: involved.metadata.resourceVersion,
    },
    reason,
    message,
    type: options.type ?? 'Normal',
    source: { component: options.component ?? 'virt-controller' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 1,
  });
  seen.set(dedupeKey, created.metadata.name);
  if (seen.size > 50_000) seen.delete(seen.keys().next().value!);
}

/** Index of recent events by (object uid, reason, message), so repeats are found without scanning. */
const indexes = new WeakMap<ObjectStore, Map<string, string>>();
function seenEvents(store: ObjectStore): Map<string, string> {
  let index = indexes.get(store);
  if (!index) indexes.set(store, (index = new Map()));
  return index;
}
