/**
 * The typed SDK: `createCorralClient(baseUrl)` is a tRPC client (superjson) for TypeScript programs, typed by the
 * server's AppRouter. Queries and mutations go over HTTP batching; `live.fleet` over SSE.
 *
 *   const corral = createCorralClient('http://localhost:8006');
 *   const vms = await corral.vms.list.query();
 *   await corral.vms.action.mutate({ namespace: 'tailvm', name: 'web', action: 'start' });
 */
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import superjson from 'superjson';
import type { AppRouter } from './routers/_app';

export type { AppRouter } from './routers/_app';

export interface CorralClientOptions {
  /** Extra headers on every query/mutation (e.g. Tailscale identity headers behind a trusted proxy). */
  headers?: Record<string, string>;
  /**
   * An EventSource implementation for `live.fleet` where there is no global one (Node ≤ 24 without
   * --experimental-eventsource). Browsers and Deno have it built in.
   */
  EventSource?: typeof globalThis.EventSource;
}

export function createCorralClient(baseUrl: string, options: CorralClientOptions = {}) {
  const url = `${baseUrl.replace(/\/+$/, '')}/trpc`;
  return createTRPCClient<AppRouter>({
    links: [
      splitLink({
        condition: (op) => op.type === 'subscription',
        true: httpSubscriptionLink({
          url,
          transformer: superjson,
          EventSource: options.EventSource ?? globalThis.EventSource,
        }),
        false: httpBatchLink({ url, transformer: superjson, headers: () => ({ ...options.headers }) }),
      }),
    ],
  });
}

export type CorralClient = ReturnType<typeof createCorralClient>;

export type VmExportFormat = 'raw.gz' | 'qcow2';

/**
 * The URL of a VM disk export (`GET /api/vms/{ns}/{name}/export`), a streaming download that tRPC cannot carry:
 * fetch it (with the same identity headers) or hand it to a browser.
 *
 *   const res = await fetch(vmExportUrl('http://localhost:8006', 'tailvm', 'web'));   // web.img.gz
 */
export function vmExportUrl(
  baseUrl: string,
  namespace: string,
  name: string,
  format: VmExportFormat = 'raw.gz',
): string {
  const path = `/api/vms/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/export`;
  return `${baseUrl.replace(/\/+$/, '')}${path}${format === 'raw.gz' ? '' : `?format=${format}`}`;
}
