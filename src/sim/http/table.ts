/**
 * `kubectl get` Table rendering (kube-sim-spec §9): columns from the kind registry, ages rendered server-side with
 * apimachinery's HumanDuration, rows carrying PartialObjectMetadata.
 */
import type { KObject } from '../store/types.js';
import type { KindSpec, PrinterColumn } from '../resources/kinds.js';

export const TABLE_CONTENT_TYPE = 'application/json;as=Table;v=v1;g=meta.k8s.io';

export function wantsTable(accept: string | undefined): boolean {
  return !!accept && /as=Table/.test(accept) && /g=meta\.k8s\.io/.test(accept);
}

/** apimachinery duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.floor(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (days < 365 * 2) return `${days}d`;
  const years = Math.floor(days / 365);
  if (years < 8) {
    const d = days % 365;
    return d === 0 ? `${years}y` : `${years}y${d}d`;
  }
  return `${years}y`;
}

/**
 * The JSONPath subset CRD printer columns use: `.a.b`, `[0]`, `[?(@.type=="Ready")]` (single or double quotes).
 * Returns undefined when the path finds nothing.
 */
export function evalJsonPath(obj: unknown, path: string): unknown {
  const tokens = path.match(/\.[^.[]+|\[\?\(@\.[^=]+==\s*(?:"[^"]*"|'[^']*')\)\]|\[\d+\]/g) ?? [];
  let cur: unknown = obj;
  for (const t of tokens) {
    if (cur === undefined || cur === null) return undefined;
    if (t.startsWith('.')) cur = (cur as Record<string, unknown>)[t.slice(1)];
    else if (t.startsWith('[?')) {
      const m = /^\[\?\(@\.([^=]+?)\s*==\s*(?:"([^"]*)"|'([^']*)')\)\]$/.exec(t)!;
      const field = m[1]!;
      const want = m[2] ?? m[3];
      cur = Array.isArray(cur)
        ? cur.find((item) => (item as Record<string, unknown> | null)?.[field] === want)
        : undefined;
    } else cur = Array.isArray(cur) ? cur[Number(t.slice(1, -1))] : undefined;
  }
  return cur;
}

const NAME_COLUMN = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description:
    'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.',
  priority: 0,
};

function columnsOf(type: KindSpec): PrinterColumn[] {
  return type.columns ?? [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }];
}

function cell(col: PrinterColumn, obj: KObject, now: number): unknown {
  const raw = col.value ? col.value(obj) : col.jsonPath ? evalJsonPath(obj, col.jsonPath) : undefined;
  if (raw === undefined || raw === null) return null;
  if (col.type === 'date') {
    const t = Date.parse(String(raw as string));
    return Number.isNaN(t) ? null : humanDuration(now - t);
  }
  return raw;
}

function rowName(type: KindSpec, obj: KObject): string {
  const nameCol =
    type.kind === 'StorageClass' &&
    obj.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'] === 'true';
  return nameCol ? `${obj.metadata.name} (default)` : obj.metadata.name;
}

export function tableRow(type: KindSpec, obj: KObject, now = Date.now()): Record<string, unknown> {
  const cells = columnsOf(type).map((c) => cell(c, obj, now));
  return {
    cells: type.nameColumn === 'wide' ? [...cells, rowName(type, obj)] : [rowName(type, obj), ...cells],
    object: { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata },
  };
}

function columnDefinitions(type: KindSpec): Record<string, unknown>[] {
  const columns = columnsOf(type).map((c) => ({
    name: c.name,
    type: c.type,
    format: '',
    description: c.description ?? '',
    priority: c.priority ?? 0,
  }));
  return type.nameColumn === 'wide' ? [...columns, { ...NAME_COLUMN, priority: 1 }] : [NAME_COLUMN, ...columns];
}

export function table(type: KindSpec, objects: KObject[], resourceVersion: string): Record<string, unknown> {
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: { resourceVersion },
    columnDefinitions: columnDefinitions(type),
    rows: objects.map((o) => tableRow(type, o, now)),
  };
}
