// Bulk actions from the Datacenter table go to the server's `bulk.start` (POST /api/bulk/runs) — one run per chunk
// of the selected guests of one cluster, VMs and CTs mixed, sent to that cluster — whose progress the UI follows
// (bulk.get) and can cancel (bulk.cancel); a run ends with each guest's own outcome: a bulk Stop of 50 guests where 3
// fail must say which 3 and why, not "some requests failed". This turns those answers into the result list.
import { guestKey, otherCluster, type GuestType } from './guest-rows';

export interface BulkResult {
  /** The table's selection key: `namespace/name` for a VM, `ct:namespace/name` for a CT, `lab//…` on cluster lab. */
  key: string;
  type: GuestType;
  namespace: string;
  name: string;
  /** The guest's cluster when it is not the default one ('' on the default cluster). */
  cluster: string;
  ok: boolean;
  message: string;
}

export interface BulkTarget {
  type: GuestType;
  namespace: string;
  name: string;
  /** The guest's kube context; none = the default cluster. */
  context?: string;
}

/** What the server allows in one request (schemas/bulk.ts BULK_MAX_TARGETS). */
export const BULK_CHUNK = 1000;

/** Splits a selection into requests the server accepts. */
export function chunks<T>(items: readonly T[], size = BULK_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The guests of one cluster in a selection, with where each stood in it. */
export interface ClusterGroup {
  /** undefined = the default cluster (targets that name none). */
  context: string | undefined;
  targets: BulkTarget[];
  /** Each target's index in the whole selection, so the results come back in the order asked. */
  indices: number[];
}

/**
 * One bulk run acts in one cluster (`POST /api/bulk` takes one `context`), so a selection spanning clusters is split
 * per cluster, in the order each cluster first appears; a target without a context goes to the default cluster.
 */
export function groupByCluster(targets: readonly BulkTarget[]): ClusterGroup[] {
  const groups = new Map<string, ClusterGroup>();
  targets.forEach((t, i) => {
    const id = t.context ?? '';
    let g = groups.get(id);
    if (!g) groups.set(id, (g = { context: t.context, targets: [], indices: [] }));
    g.targets.push({ type: t.type, namespace: t.namespace, name: t.name });
    g.indices.push(i);
  });
  return [...groups.values()];
}

/** The server's per-guest results (which do not name their cluster) as the table's result lines, in the order asked. */
export function toResults(
  results: readonly (BulkTarget & { ok: boolean; message: string })[],
  context?: string,
  defaultContext = '',
): BulkResult[] {
  return results.map((r) => ({
    key: guestKey({ type: r.type, namespace: r.namespace, name: r.name, context }, defaultContext),
    type: r.type,
    namespace: r.namespace,
    name: r.name,
    cluster: otherCluster(context, defaultContext),
    ok: r.ok,
    message: r.message,
  }));
}

type ServerResult = BulkTarget & { ok: boolean; message: string };

/** What the UI needs of the server's bulk procedures (bulk.start, bulk.get, bulk.cancel), each in one cluster. */
export interface BulkApi {
  start(chunk: BulkTarget[], context: string | undefined): Promise<{ task: string }>;
  get(
    task: string,
    context: string | undefined,
  ): Promise<{ status: string; finished: number; results: ServerResult[] }>;
}

export interface BulkProgress {
  /** The server task of the chunk being worked on (what Cancel cancels) and the cluster it runs in. */
  task: string;
  context?: string;
  finished: number;
  total: number;
}

export const CANCELLED = 'cancelled before it was sent';

/**
 * Runs the selection cluster by cluster (groupByCluster) and each cluster's chunks one after the other, each as a
 * server-side run in that cluster followed every `pollMs` for its progress (a 1,000-guest run takes about 1,000 /
 * the cluster's QPS seconds). A chunk the server refuses as a whole fails each of its guests with why; once
 * `stopped()` says so, the chunks not yet started end as cancelled without a request. The results are merged back
 * into the order of `targets`, each keyed with its own cluster (`defaultContext`: the default cluster's name).
 */
export async function runBulk(
  targets: readonly BulkTarget[],
  api: BulkApi,
  onProgress: (p: BulkProgress) => void = () => undefined,
  stopped: () => boolean = () => false,
  pollMs = 500,
  defaultContext = '',
): Promise<BulkResult[]> {
  const out: BulkResult[] = new Array<BulkResult>(targets.length);
  let done = 0;
  for (const group of groupByCluster(targets)) {
    const { context } = group;
    const indexChunks = chunks(group.indices);
    for (const [n, chunk] of chunks(group.targets).entries()) {
      const place = (results: BulkResult[]) => {
        const at = indexChunks[n] ?? [];
        results.forEach((r, i) => {
          const index = at[i];
          if (index !== undefined) out[index] = r;
        });
        done += results.length;
      };
      if (stopped()) {
        place(
          toResults(
            chunk.map((t) => ({ ...t, ok: false, message: CANCELLED })),
            context,
            defaultContext,
          ),
        );
        continue;
      }
      try {
        const { task } = await api.start(chunk, context);
        for (;;) {
          const run = await api.get(task, context);
          onProgress({ task, ...(context ? { context } : {}), finished: done + run.finished, total: targets.length });
          if (run.status !== 'running') {
            place(toResults(run.results, context, defaultContext));
            break;
          }
          await new Promise((r) => setTimeout(r, pollMs));
        }
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        place(
          toResults(
            chunk.map((t) => ({ ...t, ok: false, message })),
            context,
            defaultContext,
          ),
        );
      }
    }
  }
  return out.filter((r): r is BulkResult => r !== undefined);
}
