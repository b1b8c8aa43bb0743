'use client';
// The raw VirtualMachine object (vms.get) for the YAML tab and for facts the list row does not carry
// (live-migratability, guest agent). Refetched when the live stream changes the VM's row — event-driven,
// never on a timer.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import type { VmRow } from './model';
import { useTRPC } from './trpc';
import { inContext } from './cluster-links';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export function conditionsOf(manifest: Record<string, unknown> | undefined): Condition[] {
  const status = manifest?.status as { conditions?: unknown } | undefined;
  return Array.isArray(status?.conditions) ? (status.conditions as Condition[]) : [];
}

/** KubeVirt copies the VMI's LiveMigratable condition onto the VM; undefined when it is not there. */
export function liveMigratable(
  manifest: Record<string, unknown> | undefined,
): { ok: boolean; reason: string } | undefined {
  const c = conditionsOf(manifest).find((x) => x.type === 'LiveMigratable');
  if (!c) return undefined;
  const reason = c.message || c.reason || 'KubeVirt says no';
  return { ok: c.status === 'True', reason: c.status === 'True' ? '' : reason };
}

export function agentConnected(manifest: Record<string, unknown> | undefined): boolean | undefined {
  const c = conditionsOf(manifest).find((x) => x.type === 'AgentConnected');
  return c ? c.status === 'True' : undefined;
}

export function useVmManifest(namespace: string, name: string, row: VmRow | undefined) {
  const trpc = useTRPC();
  const queryClient = useQueryClient();
  const options = trpc.vms.get.queryOptions(
    { namespace, name, ...inContext(row?.context) },
    { enabled: row !== undefined, retry: false },
  );
  useEffect(() => {
    if (row) void queryClient.invalidateQueries({ queryKey: options.queryKey });
    // The row object is replaced on every change to the VM, which is exactly when to refetch.
  }, [row]);
  return useQuery(options);
}
