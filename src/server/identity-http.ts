/** Identity of an HTTP caller, for every transport (REST, /trpc, console WebSockets, the Proxmox mount). */
import type { IncomingMessage } from 'node:http';
import { identityFromHeaders, parseAdmins, type AdminPolicy, type Identity } from './domain/identity';
import type { CorralServices } from './domain/services';

let policy: { raw: string | undefined; parsed: AdminPolicy } | undefined;

/** CORRAL_ADMINS is read per request (cheap, cached by value) so tests and operators can change it at runtime. */
export function adminPolicy(env: NodeJS.ProcessEnv = process.env): AdminPolicy {
  const raw = env.CORRAL_ADMINS;
  if (!policy || policy.raw !== raw) policy = { raw, parsed: parseAdmins(raw) };
  return policy.parsed;
}

export function identityFor(req: IncomingMessage, _services?: CorralServices): Identity {
  return identityFromHeaders(req.headers, adminPolicy());
}
