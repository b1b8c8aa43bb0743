/**
 * Paginated lists (kube-sim-spec §4 chunking): `?limit=N` answers at most N items and, when more remain,
 * `metadata.continue` (an opaque token) and `metadata.remainingItemCount`; `?limit=N&continue=<token>` answers the
 * next page. Every page of one list carries the first page's resourceVersion, so a client that watches from it
 * after the last page misses nothing.
 *
 * Deviation: the real apiserver serves every page from the snapshot at that resourceVersion (etcd's MVCC); here a
 * later page shows objects as they are now. A client watching from the list's resourceVersion still converges:
 * the watch replays every change after that version in order (and a DELETED for an object it never saw is a
 * no-op). An old token is not expired with 410 either.
 */
import { ApiError } from '../store/errors.js';
import { objectKey } from '../store/object-store.js';
import type { KObject } from '../store/types.js';

export interface PageRequest {
  limit: number;
  /** Serve objects whose key sorts after this ('' for the first page). */
  after: string;
  /** The resourceVersion every page reports (the first page's). */
  resourceVersion: string;
}

interface Token {
  rv: string;
  after: string;
}

/** The paging the query asks for, or undefined for a whole list (no `limit`, or 0). 400 for a bad value. */
export function parsePaging(query: URLSearchParams, currentRv: string): PageRequest | undefined {
  const rawLimit = query.get('limit');
  const rawContinue = query.get('continue');
  if (rawLimit !== null && !/^\d+$/.test(rawLimit))
    throw new ApiError(400, 'BadRequest', `limit: Invalid value: "${rawLimit}": must be a non-negative integer`);
  const limit = rawLimit === null ? 0 : Number(rawLimit);
  if (!rawContinue) return limit > 0 ? { limit, after: '', resourceVersion: currentRv } : undefined;
  let token: Token;
  try {
    token = JSON.parse(Buffer.from(rawContinue, 'base64url').toString('utf8')) as Token;
    if (typeof token.rv !== 'string' || typeof token.after !== 'string') throw new Error('shape');
  } catch {
    throw new ApiError(400, 'BadRequest', 'continue key is not valid: could not decode it');
  }
  return { limit: limit > 0 ? limit : Number.MAX_SAFE_INTEGER, after: token.after, resourceVersion: token.rv };
}

/** The page of `entries` (in key order, as the store lists them) and the list metadata for it. */
export function pageOf<T extends { object: KObject }>(
  entries: readonly T[],
  page: PageRequest,
): { items: T[]; metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number } } {
  const keyOf = (e: T) => objectKey(e.object.metadata.namespace, e.object.metadata.name ?? '');
  // Binary search for the first key after `after` (entries are sorted by key).
  let lo = 0;
  let hi = entries.length;
  if (page.after)
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (keyOf(entries[mid] as T) <= page.after) lo = mid + 1;
      else hi = mid;
    }
  const items = entries.slice(lo, lo + page.limit);
  const remaining = entries.length - lo - items.length;
  const last = items[items.length - 1];
  if (remaining <= 0 || !last) return { items, metadata: { resourceVersion: page.resourceVersion } };
  const token: Token = { rv: page.resourceVersion, after: keyOf(last) };
  return {
    items,
    metadata: {
      resourceVersion: page.resourceVersion,
      continue: Buffer.from(JSON.stringify(token)).toString('base64url'),
      remainingItemCount: remaining,
    },
  };
}
