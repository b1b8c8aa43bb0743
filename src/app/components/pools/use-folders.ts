'use client';
// Pools for the Pool view and the pool page: `GET /api/folders` (pools.list) as one query, refreshed after every
// pool write and every few seconds (member states follow the fleet), plus the writes themselves. Drag-and-drop
// carries a guest as `namespace/name` under its own type, so drops from anywhere else are ignored.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import type { DragEvent } from 'react';
import type { FolderListing } from '@/server/schemas/pools';
import { useTRPC } from '../../lib/trpc';

export type Listing = FolderListing;
export type Folder = FolderListing['folders'][number];
export type Member = FolderListing['unfoldered'][number];

export const DRAG_TYPE = 'application/x-corral-guest';

export function poolHref(path: string): string {
  return `/pools?path=${encodeURIComponent(path)}`;
}

export function memberHref(m: Pick<Member, 'type' | 'namespace' | 'name'>): string {
  return `/${m.type === 'ct' ? 'cts' : 'vms'}/${encodeURIComponent(m.namespace)}/${encodeURIComponent(m.name)}`;
}

export function dragGuest(e: DragEvent, m: Pick<Member, 'ref'>): void {
  e.dataTransfer.setData(DRAG_TYPE, m.ref);
  e.dataTransfer.effectAllowed = 'move';
}

export function draggedRef(e: DragEvent): string | undefined {
  return e.dataTransfer.types.includes(DRAG_TYPE) ? e.dataTransfer.getData(DRAG_TYPE) : undefined;
}

export function useFolders() {
  const trpc = useTRPC();
  return useQuery(trpc.pools.list.queryOptions(undefined, { refetchInterval: 5000 }));
}

/** The pool writes; each refreshes the listing when it settles. */
export function usePoolWrites() {
  const trpc = useTRPC();
  const client = useQueryClient();
  const settle = { onSettled: () => client.invalidateQueries({ queryKey: trpc.pools.list.queryKey() }) };
  const add = useMutation(trpc.pools.addMember.mutationOptions(settle));
  const remove = useMutation(trpc.pools.removeMember.mutationOptions(settle));
  return {
    create: useMutation(trpc.pools.create.mutationOptions(settle)),
    remove: useMutation(trpc.pools.remove.mutationOptions(settle)),
    move: useMutation(trpc.pools.move.mutationOptions(settle)),
    action: useMutation(trpc.pools.action.mutationOptions(settle)),
    removeMember: remove,
    /** Files `ref` in `path` ('' takes it out of any pool), leaving the pool it was in first. */
    async place(listing: Listing | undefined, ref: string, path: string): Promise<void> {
      const current = listing?.folders.find((f) => f.members.some((m) => m.ref === ref))?.path ?? '';
      if (current === path) return;
      if (current) await remove.mutateAsync({ ref });
      if (path) await add.mutateAsync({ path, ref });
    },
    placing: add.isPending || remove.isPending,
    placeError: add.error ?? remove.error,
  };
}

export function formatBytes(n: number): string {
  if (n <= 0) return '0';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${n >= 10 || i === 0 ? Math.round(n) : n.toFixed(1)} ${units[i]}`;
}
