/**
 * The four fixed Proxmox roles Corral serves (the original's ADR-0001) and their privileges. Permission checks
 * name a Proxmox ACL path and a privilege, and fail with PVE's own words:
 * `403 Permission check failed (/vms/100, VM.PowerMgmt)`.
 */
import { ProxmoxError } from '../wire';

export const ROLES = ['Administrator', 'Operator', 'Viewer', 'NoAccess'] as const;
export type Role = (typeof ROLES)[number];

const VM_PRIVS = [
  'VM.Allocate',
  'VM.Audit',
  'VM.Backup',
  'VM.Clone',
  'VM.Config.CDROM',
  'VM.Config.CPU',
  'VM.Config.Cloudinit',
  'VM.Config.Disk',
  'VM.Config.HWType',
  'VM.Config.Memory',
  'VM.Config.Network',
  'VM.Config.Options',
  'VM.Console',
  'VM.Migrate',
  'VM.Monitor',
  'VM.PowerMgmt',
  'VM.Snapshot',
  'VM.Snapshot.Rollback',
] as const;

const ADMIN_ONLY = [
  'Datastore.AllocateTemplate',
  'Permissions.Modify',
  'Pool.Allocate',
  'Pool.Audit',
  'Realm.Allocate',
  'Realm.AllocateUser',
  'SDN.Allocate',
  'SDN.Audit',
  'SDN.Use',
  'Sys.Incoming',
  'Sys.Modify',
  'Sys.PowerMgmt',
  'Sys.Syslog',
  'User.Modify',
] as const;

export const ROLE_PRIVILEGES: Record<Role, readonly string[]> = {
  Administrator: [
    ...VM_PRIVS,
    'Datastore.Allocate',
    'Datastore.AllocateSpace',
    'Datastore.Audit',
    'Sys.Audit',
    'Sys.Console',
    ...ADMIN_ONLY,
  ].sort(),
  Operator: [
    ...VM_PRIVS,
    'Datastore.Allocate',
    'Datastore.AllocateSpace',
    'Datastore.Audit',
    'Sys.Audit',
    'Sys.Console',
  ].sort(),
  Viewer: ['Datastore.Audit', 'Sys.Audit', 'VM.Audit'],
  NoAccess: [],
};

const PRIV_SETS: Record<Role, ReadonlySet<string>> = {
  Administrator: new Set(ROLE_PRIVILEGES.Administrator),
  Operator: new Set(ROLE_PRIVILEGES.Operator),
  Viewer: new Set(ROLE_PRIVILEGES.Viewer),
  NoAccess: new Set(),
};

export function isRole(text: string): text is Role {
  return (ROLES as readonly string[]).includes(text);
}

/** Rank for "the lesser of two roles" (CORRAL_ADMINS caps a non-admin at Viewer). */
const RANK: Record<Role, number> = { NoAccess: 0, Viewer: 1, Operator: 2, Administrator: 3 };

export function lesserRole(a: Role, b: Role): Role {
  return RANK[a] <= RANK[b] ? a : b;
}

export function hasPrivilege(role: Role, privilege: string): boolean {
  return PRIV_SETS[role].has(privilege);
}

export function requirePrivilege(role: Role, path: string, privilege: string): void {
  if (!hasPrivilege(role, privilege)) throw new ProxmoxError(403, `Permission check failed (${path}, ${privilege})`);
}

/** Which privilege family lives under which top-level ACL path (for `cap` and `/access/permissions`). */
const CAP_GROUPS: Record<string, (priv: string) => boolean> = {
  vms: (p) => p.startsWith('VM.'),
  storage: (p) => p.startsWith('Datastore.'),
  nodes: (p) => p.startsWith('Sys.'),
  access: (p) => p.startsWith('User.') || p.startsWith('Permissions.') || p.startsWith('Realm.'),
  dc: (p) => p.startsWith('Sys.Audit') || p.startsWith('SDN.'),
  sdn: (p) => p.startsWith('SDN.'),
  mapping: () => false,
};

/** The `cap` object of a ticket answer: privilege → 1 per group (bpg decodes objects). */
export function capabilities(role: Role): Record<string, Record<string, 1>> {
  const caps: Record<string, Record<string, 1>> = {};
  for (const [group, match] of Object.entries(CAP_GROUPS)) {
    caps[group] = Object.fromEntries(ROLE_PRIVILEGES[role].filter(match).map((p) => [p, 1 as const]));
  }
  return caps;
}

/** `GET /access/permissions`: ACL path → privilege → 1 (propagating), the way PVE answers for the caller. */
export function permissions(role: Role): Record<string, Record<string, 1>> {
  const all = Object.fromEntries(ROLE_PRIVILEGES[role].map((p) => [p, 1 as const]));
  if (ROLE_PRIVILEGES[role].length === 0) return {};
  const pick = (match: (p: string) => boolean) =>
    Object.fromEntries(ROLE_PRIVILEGES[role].filter(match).map((p) => [p, 1 as const]));
  return {
    '/': all,
    '/vms': pick((p) => p.startsWith('VM.')),
    '/storage': pick((p) => p.startsWith('Datastore.')),
    '/nodes': pick((p) => p.startsWith('Sys.')),
    '/pool': pick((p) => p.startsWith('Pool.') || p.startsWith('VM.') || p.startsWith('Datastore.')),
  };
}
