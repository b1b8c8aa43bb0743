'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import type { FirstScreenSeed } from './lib/first-screen';
import { LiveProvider } from './lib/live';
import { makeTrpcClient, TRPCProvider } from './lib/trpc';

/** `seed`: the Datacenter's first screen when the server rendered one into this document (lib/first-screen.ts). */
export function Providers({ children, seed }: { children: ReactNode; seed?: FirstScreenSeed }) {
  const [queryClient] = useState(
    () =>
      new QueryClient({
        // Fleet data comes from the live stream; queries are for details (YAML, catalog, plans) that rarely
        // change, so no refetch on focus and a short retry.
        defaultOptions: { queries: { staleTime: 30_000, retry: 1, refetchOnWindowFocus: false } },
      }),
  );
  const [trpcClient] = useState(makeTrpcClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        <LiveProvider seed={seed}>{children}</LiveProvider>
      </TRPCProvider>
    </QueryClientProvider>
  );
}
