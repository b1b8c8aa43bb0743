/**
 * Who is calling (ADR-0003): the Tailscale ingress injects `Tailscale-User-Login` / `Tailscale-User-Name`.
 * CORRAL_ADMINS unset = single-user mode, everybody is admin; set = only listed logins may change state.
 */
export interface Identity {
  login: string;
  name: string;
  admin: boolean;
  enforced: boolean;
  /** Why a caller is read-only when CORRAL_ADMINS is not what decided it (e.g. remote callers of an exposed server). */
  readOnlyReason?: string;
}

export type AdminPolicy = { enforced: false } | { enforced: true; admins: ReadonlySet<string> };

export function parseAdmins(raw: string | undefined): AdminPolicy {
  const logins = (raw ?? '')
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
  return logins.length === 0 ? { enforced: false } : { enforced: true, admins: new Set(logins) };
}

type HeaderBag = Record<string, string | string[] | undefined>;
const header = (h: HeaderBag, key: string): string => {
  const v = h[key];
  return (Array.isArray(v) ? v[0] : v)?.trim() ?? '';
};

export function identityFromHeaders(headers: HeaderBag, policy: AdminPolicy): Identity {
  const login = header(headers, 'tailscale-user-login');
  const name = header(headers, 'tailscale-user-name') || login;
  if (!policy.enforced) return { login: login || 'local', name: name || 'local user', admin: true, enforced: false };
  return {
    login: login || 'anonymous',
    name: name || 'anonymous',
    admin: login !== '' && policy.admins.has(login),
    enforced: true,
  };
}

/** The identity of in-process callers (tests, the Proxmox translator acting for an already-checked user). */
export function systemIdentity(login = 'system'): Identity {
  return { login, name: login, admin: true, enforced: false };
}
