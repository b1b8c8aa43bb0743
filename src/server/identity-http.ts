/**
 * Identity of an HTTP caller, for every transport (REST, /trpc, console WebSockets, the Proxmox mount).
 * Identity headers count only when the front door found the peer to be a trusted proxy (http/trust.ts).
 */
import type { IncomingMessage } from 'node:http';
import { identityFromHeaders, parseAdmins, type AdminPolicy, type Identity } from './domain/identity';
import type { CorralServices } from './domain/services';
import { trustOf, type TrustConfig } from './http/trust';

let policy: { raw: string | undefined; parsed: AdminPolicy } | undefined;

/** CORRAL_ADMINS is read per request (cheap, cached by value) so tests and operators can change it at runtime. */
export function adminPolicy(env: NodeJS.ProcessEnv = process.env): AdminPolicy {
  const raw = env.CORRAL_ADMINS;
  if (!policy || policy.raw !== raw) policy = { raw, parsed: parseAdmins(raw) };
  return policy.parsed;
}

export const REMOTE_READ_ONLY =
  'remote callers are read-only: Corral listens beyond loopback without CORRAL_ADMINS (set CORRAL_ADMINS, or start with --open)';

export function identityFor(req: IncomingMessage, _services?: CorralServices): Identity {
  const trust = trustOf(req);
  // The front door already dropped identity headers from untrusted peers; a request that bypassed it is checked here.
  const headers = trust.trustedPeer ? req.headers : {};
  const admins = adminPolicy();
  const identity = identityFromHeaders(headers, admins);
  if (admins.enforced || trust.local || trust.config.open || !trust.config.exposed) return identity;
  return { ...identity, admin: false, readOnlyReason: REMOTE_READ_ONLY };
}

/** One line for the startup log: who may change state, and who is believed about identity. */
export function accessModeLine(trust: TrustConfig, env: NodeJS.ProcessEnv = process.env): string {
  const admins = adminPolicy(env);
  const who = admins.enforced
    ? `only CORRAL_ADMINS (${[...admins.admins].join(', ')}) may change state`
    : !trust.exposed
      ? 'single-user mode: every caller may change state (listening on loopback only)'
      : trust.open
        ? 'OPEN mode (--open): every caller from any address may change state'
        : 'local callers may change state; remote callers are read-only (set CORRAL_ADMINS or --open)';
  const hosts = trust.allowedHosts.has('*')
    ? 'any Host (CORRAL_ALLOWED_HOSTS=*)'
    : `Host ${[...trust.allowedHosts, ...trust.allowedSuffixes.map((s) => `*${s}`)].join(', ')}`;
  return `access: ${who}; identity headers trusted from ${trust.trustedProxyText}; answering ${hosts}`;
}
