/**
 * CT rows kept current by the watch cache's change events, for the live feed: a change of a CT's data PVC or pod
 * (both carry `corral.dev/ct-name`) rebuilds that one CT's row and, when its JSON changed, emits an upsert or a
 * delete. After each metrics round the rows are rebuilt too, because the data volume usage comes from the kubelet
 * readings rather than from an object; again only rows that changed are emitted. Nothing here asks the apiserver.
 */
import type { ChangeEvent } from './cluster-port';
import type { DomainDeps } from './deps';
import { ctRowOf, findCt, listCts, type CtRow } from './ct-rows';
import { LABEL_CT, LABEL_CT_NAME } from './ct-spec';

export type CtDelta =
  { type: 'ct'; op: 'upsert'; ct: CtRow } | { type: 'ct'; op: 'delete'; namespace: string; name: string };

interface Cached {
  row: CtRow;
  json: string;
}

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

/** The CT a cache event is about, or undefined for objects that belong to no CT. */
export function ctOfEvent(e: ChangeEvent): { namespace: string; name: string } | undefined {
  if (e.kind !== 'Pod' && e.kind !== 'PersistentVolumeClaim') return undefined;
  const labels = e.object.metadata.labels ?? {};
  const name = labels[LABEL_CT_NAME];
  if (labels[LABEL_CT] !== 'true' || !name) return undefined;
  return { namespace: e.object.metadata.namespace ?? '', name };
}

export class CtFleet {
  private rows: Map<string, Cached> | undefined;
  private readonly listeners = new Set<(delta: CtDelta) => void>();
  private readonly stops: (() => void)[] = [];

  constructor(private readonly deps: DomainDeps) {
    this.stops.push(deps.cluster.onChange((e) => this.apply(e)));
    const onSample = deps.cluster.metrics?.onSample;
    if (onSample) this.stops.push(onSample.call(deps.cluster.metrics, () => this.refreshAll()));
  }

  close(): void {
    for (const stop of this.stops) stop();
    this.listeners.clear();
  }

  subscribe(listener: (delta: CtDelta) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Every CT, in namespace/name order. */
  list(): CtRow[] {
    return [...this.map().values()].map((c) => c.row).sort(byRef);
  }

  private map(): Map<string, Cached> {
    this.rows ??= new Map(
      listCts(this.deps).map((row) => [keyOf(row.namespace, row.name), { row, json: JSON.stringify(row) }]),
    );
    return this.rows;
  }

  private apply(e: ChangeEvent): void {
    const ct = ctOfEvent(e);
    if (ct) this.refresh(ct.namespace, ct.name);
  }

  private refreshAll(): void {
    if (!this.rows) return; // nothing built yet: the first read builds every row with the newest readings
    for (const { row } of [...this.rows.values()]) this.refresh(row.namespace, row.name);
  }

  private refresh(namespace: string, name: string): void {
    if (!this.rows && this.listeners.size === 0) return; // nothing built, nobody listening: build lazily later
    const map = this.map();
    const key = keyOf(namespace, name);
    const before = map.get(key);
    const state = findCt(this.deps, namespace, name);
    if (!state) {
      if (before) {
        map.delete(key);
        this.emit({ type: 'ct', op: 'delete', namespace, name });
      }
      return;
    }
    const row = ctRowOf(this.deps, state);
    const json = JSON.stringify(row);
    if (before?.json === json) return;
    map.set(key, { row, json });
    this.emit({ type: 'ct', op: 'upsert', ct: row });
  }

  private emit(delta: CtDelta): void {
    for (const l of this.listeners) l(delta);
  }
}

function byRef(a: CtRow, b: CtRow): number {
  return a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
}
