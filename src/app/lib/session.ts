'use client';
// Who is calling and what the cluster offers: fetched once per page load (they change only on restart).
import { useQuery } from '@tanstack/react-query';
import { useTRPC } from './trpc';

export function useSession() {
  const trpc = useTRPC();
  const who = useQuery({ ...trpc.whoami.queryOptions(), staleTime: Infinity });
  const caps = useQuery({ ...trpc.capabilities.queryOptions(), staleTime: Infinity });
  const admin = who.data?.admin ?? false;
  return {
    loaded: who.isSuccess,
    login: who.data?.login ?? '',
    name: who.data?.name ?? '',
    admin,
    enforced: who.data?.enforced ?? false,
    readOnlyReason: who.data?.readOnlyReason,
    /** Read-only: an allowlist exists and the caller is not on it. Until whoami answers, assume read-only so
     *  controls never flash up for a caller who may not use them. */
    readOnly: !who.isSuccess || !admin,
    demo: caps.data?.demo ?? who.data?.demo ?? false,
    capabilities: caps.data,
  };
}
