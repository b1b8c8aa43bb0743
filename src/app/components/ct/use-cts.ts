'use client';
// Containers (CTs) for the tree, the Datacenter table and the CT page. Rows come from the one live stream (the
// `ct` events of `live.fleet`, see lib/live.tsx), like VM rows: nothing here polls.
import { useQuery } from '@tanstack/react-query';
import { useEffect } from 'react';
import { useCtRow, useCts as useLiveCts } from '../../lib/live';
import type { CtRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';
import { inContext } from '../../lib/cluster-links';

export function ctHref(namespace: string, name: string, tab?: string): string {
  return `/cts/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${tab ? `?tab=${tab}` : ''}`;
}

export function useCts(): CtRow[] {
  return useLiveCts();
}

/**
 * The stored pod and data volume of one CT (the YAML tab), asked for once and again whenever the pushed row
 * changes, so it follows Stop/Start without a timer. `enabled` is false until the row is known.
 */
export function useCtObjects(namespace: string, name: string, row: CtRow | undefined) {
  const trpc = useTRPC();
  const q = useQuery(
    trpc.cts.get.queryOptions(
      { namespace, name, ...inContext(row?.context) },
      { enabled: row !== undefined, retry: false },
    ),
  );
  const { refetch } = q;
  const fingerprint = row ? `${row.phase}/${row.node}/${row.ip}/${row.ready}/${row.cpu}/${row.mem}/${row.disk}` : '';
  useEffect(() => {
    if (fingerprint) void refetch();
  }, [fingerprint, refetch]);
  return q;
}

export { useCtRow };

/** A CT's status word for the status dot: its phase, or the reason its pod cannot start (an error tone). */
export function ctStatus(ct: Pick<CtRow, 'phase' | 'reason'>): string {
  return ct.reason ? (ct.reason.split(':')[0] ?? ct.phase) : ct.phase;
}
