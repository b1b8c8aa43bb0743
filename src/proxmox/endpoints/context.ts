/** What every endpoint receives, and how endpoints declare the privilege they need. */
import type { IncomingMessage } from 'node:http';
import type { AuthConfig, Principal, RequestFacts } from '../auth/authenticate';
import type { Params } from '../params';
import type { HttpMethod, RouteTable } from '../routing';
import type { ProxmoxState } from '../state';

export interface EndpointContext {
  state: ProxmoxState;
  auth: AuthConfig;
  /** Path parameters, decoded. */
  path: Record<string, string>;
  /** Query parameters merged with the form/JSON body. */
  args: Params;
  principal: Principal;
  facts: RequestFacts;
  /** The request itself, for endpoints that read their own body (`streamsBody`). */
  request?: IncomingMessage;
}

export interface Endpoint {
  /** Privilege checked before the handler runs, on the ACL path built from the path parameters. */
  privilege?: { name: string; path: (p: Record<string, string>, args: Params) => string };
  /** Served without authentication (login). */
  public?: boolean;
  /** The endpoint streams the request body itself (uploads): only the query string is parsed into `args`. */
  streamsBody?: boolean;
  handle(ctx: EndpointContext): unknown;
}

export type Routes = RouteTable<Endpoint>;

export function define(table: Routes, method: HttpMethod, pattern: string, endpoint: Endpoint): void {
  table.add(method, pattern, endpoint);
}

export const vmAcl = (p: Record<string, string>): string => `/vms/${p.vmid ?? ''}`;
export const storageAcl = (p: Record<string, string>): string => `/storage/${p.storage ?? ''}`;
export const nodeAcl = (p: Record<string, string>): string => `/nodes/${p.node ?? ''}`;
export const rootAcl = (): string => '/';
