'use client';
// Containers (CTs) for the tree and the CT page. The live stream carries VMs only, so CT rows are polled from
// `cts.list` / `cts.get` (each answered from Corral's watch cache, no cluster call) every few seconds.
import { useQuery } from '@tanstack/react-query';
import type { CtRow } from '../../lib/model';
import { useTRPC } from '../../lib/trpc';

export const CT_POLL_MS = 2000;

export function ctHref(namespace: string, name: string, tab?: string): string {
  return `/cts/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}${tab ? `?tab=${tab}` : ''}`;
}

export function useCts(): CtRow[] {
  const trpc = useTRPC();
  const q = useQuery(trpc.cts.list.queryOptions(undefined, { refetchInterval: CT_POLL_MS }));
  return q.data ?? [];
}

export function useCt(namespace: string, name: string) {
  const trpc = useTRPC();
  return useQuery(trpc.cts.get.queryOptions({ namespace, name }, { refetchInterval: CT_POLL_MS, retry: false }));
}

/** A CT's status word for the status dot: its phase, or the reason its pod cannot start (an error tone). */
export function ctStatus(ct: Pick<CtRow, 'phase' | 'reason'>): string {
  return ct.reason ? (ct.reason.split(':')[0] ?? ct.phase) : ct.phase;
}
