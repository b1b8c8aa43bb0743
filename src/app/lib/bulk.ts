// Bulk actions from the Datacenter table go to the server's `bulk.run` (POST /api/bulk) — one request per chunk of
// selected guests, VMs and CTs mixed — which answers with each guest's own outcome: a bulk Stop of 50 guests where
// 3 fail must say which 3 and why, not "some requests failed". This turns those answers into the result list.
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

/** Runs the chunks one after the other; a chunk the server refuses as a whole fails each of its guests with why. */
export async function runBulk(
  targets: readonly BulkTarget[],
  send: (chunk: BulkTarget[]) => Promise<{ results: (BulkTarget & { ok: boolean; message: string })[] }>,
): Promise<BulkResult[]> {
  const out: BulkResult[] = [];
  for (const chunk of chunks(targets)) {
    try {
      out.push(...toResults((await send(chunk)).results));
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      out.push(...toResults(chunk.map((t) => ({ ...t, ok: false, message }))));
    }
  }
  return out;
}
