// Bulk actions from the Datacenter table go to the server's `bulk.start` (POST /api/bulk/runs) — one run per chunk
// of selected guests, VMs and CTs mixed — whose progress the UI follows (bulk.get) and can cancel (bulk.cancel); a
// run ends with each guest's own outcome: a bulk Stop of 50 guests where 3 fail must say which 3 and why, not "some
// requests failed". This turns those answers into the result list.
import type { GuestType } from './guest-rows';

export interface BulkResult {
  /** `namespace/name` for a VM, `ct:namespace/name` for a CT (the table's selection key). */
  key: string;
  type: GuestType;
  ok: boolean;
  message: string;
}

export interface BulkTarget {
  type: GuestType;
  namespace: string;
  name: string;
}

/** What the server allows in one request (schemas/bulk.ts BULK_MAX_TARGETS). */
export const BULK_CHUNK = 1000;

/** Splits a selection into requests the server accepts. */
export function chunks<T>(items: readonly T[], size = BULK_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** The server's per-guest results as the table's result lines, in the order asked. */
export function toResults(results: readonly (BulkTarget & { ok: boolean; message: string })[]): BulkResult[] {
  return results.map((r) => ({
    key: r.type === 'ct' ? `ct:${r.namespace}/${r.name}` : `${r.namespace}/${r.name}`,
    type: r.type,
    ok: r.ok,
    message: r.message,
  }));
}

type ServerResult = BulkTarget & { ok: boolean; message: string };

/** What the UI needs of the server's bulk procedures (bulk.start, bulk.get, bulk.cancel). */
export interface BulkApi {
  start(chunk: BulkTarget[]): Promise<{ task: string }>;
  get(task: string): Promise<{ status: string; finished: number; results: ServerResult[] }>;
}

export interface BulkProgress {
  /** The server task of the chunk being worked on (what Cancel cancels). */
  task: string;
  finished: number;
  total: number;
}

export const CANCELLED = 'cancelled before it was sent';

/**
 * Runs the chunks one after the other, each as a server-side run followed every `pollMs` for its progress (a
 * 1,000-guest run takes about 1,000 / the cluster's QPS seconds). A chunk the server refuses as a whole fails each
 * of its guests with why; once `stopped()` says so, the chunks not yet started end as cancelled without a request.
 */
export async function runBulk(
  targets: readonly BulkTarget[],
  api: BulkApi,
  onProgress: (p: BulkProgress) => void = () => undefined,
  stopped: () => boolean = () => false,
  pollMs = 500,
): Promise<BulkResult[]> {
  const out: BulkResult[] = [];
  for (const chunk of chunks(targets)) {
    if (stopped()) {
      out.push(...toResults(chunk.map((t) => ({ ...t, ok: false, message: CANCELLED }))));
      continue;
    }
    try {
      const { task } = await api.start(chunk);
      for (;;) {
        const run = await api.get(task);
        onProgress({ task, finished: out.length + run.finished, total: targets.length });
        if (run.status !== 'running') {
          out.push(...toResults(run.results));
          break;
        }
        await new Promise((r) => setTimeout(r, pollMs));
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      out.push(...toResults(chunk.map((t) => ({ ...t, ok: false, message }))));
    }
  }
  return out;
}
