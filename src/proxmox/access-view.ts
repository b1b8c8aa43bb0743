/**
 * The cluster's RBAC bindings as PVE's users, groups and ACL. `User` subjects are `<name>@k8s`, ServiceAccounts
 * `<name>@sa`, `Group` subjects PVE groups; characters PVE ids do not allow become `-` (the original name is the
 * row's comment). A ClusterRoleBinding is an ACL entry on `/`; a RoleBinding one on every guest (`/vms/<vmid>`) of
 * its namespace, since that is what it grants. Roles: Kubernetes' user-facing ClusterRoles and KubeVirt's
 * aggregated ones map onto the translator's four roles; a binding to any other role lists its subjects but gives no
 * ACL entry (its rules are not PVE privileges).
 */
import type { RbacBinding, RbacSubject } from '@/server/domain/rbac-bindings';
import type { Role } from './auth/roles';

const ROLE_OF: Record<string, Role> = {
  'cluster-admin': 'Administrator',
  admin: 'Administrator',
  'kubevirt.io:admin': 'Administrator',
  edit: 'Operator',
  'kubevirt.io:edit': 'Operator',
  view: 'Viewer',
  'kubevirt.io:view': 'Viewer',
};

export function pveRoleOf(role: RbacBinding['role']): Role | undefined {
  return ROLE_OF[role.name];
}

const userPart = (name: string) => name.replace(/[\s:/]+/g, '-');
export const groupId = (name: string): string => name.replace(/[^A-Za-z0-9._-]+/g, '-');

export function userIdOf(s: RbacSubject): string | undefined {
  if (s.kind === 'User') return `${userPart(s.name)}@k8s`;
  if (s.kind === 'ServiceAccount') return `${userPart(s.name)}@sa`;
  return undefined;
}

export interface AccessUser {
  userid: string;
  enable: 1;
  expire: 0;
  realm: string;
  'realm-type': string;
  comment?: string;
  groups: string;
}

export interface AccessGroup {
  groupid: string;
  comment: string;
  users: string;
}

/** ServiceAccounts belong to `system:serviceaccounts` and `system:serviceaccounts:<namespace>` (Kubernetes' rule). */
function implicitGroups(s: RbacSubject): string[] {
  return s.kind === 'ServiceAccount' ? ['system:serviceaccounts', `system:serviceaccounts:${s.namespace ?? ''}`] : [];
}

export function accessGroups(bindings: RbacBinding[]): AccessGroup[] {
  const names = new Set<string>();
  for (const b of bindings) for (const s of b.subjects) if (s.kind === 'Group') names.add(s.name);
  const members = new Map<string, Set<string>>();
  for (const b of bindings)
    for (const s of b.subjects)
      for (const g of implicitGroups(s))
        if (names.has(g)) {
          const set = members.get(g) ?? new Set<string>();
          set.add(userIdOf(s) ?? '');
          members.set(g, set);
        }
  return [...names].sort().map((name) => ({
    groupid: groupId(name),
    comment: `Kubernetes group ${name}`,
    users: [...(members.get(name) ?? [])].sort().join(','),
  }));
}

/** Users from the bindings (subjects of one name in several namespaces are one user; the comment names them all). */
export function accessUsers(bindings: RbacBinding[], others: string[]): AccessUser[] {
  const groups = new Set(accessGroups(bindings).map((g) => g.groupid));
  const users = new Map<string, { comment: Set<string>; groups: Set<string> }>();
  const add = (userid: string, comment?: string, memberOf: string[] = []) => {
    const entry = users.get(userid) ?? { comment: new Set<string>(), groups: new Set<string>() };
    if (comment) entry.comment.add(comment);
    for (const g of memberOf) if (groups.has(groupId(g))) entry.groups.add(groupId(g));
    users.set(userid, entry);
  };
  for (const id of others) add(id);
  for (const b of bindings)
    for (const s of b.subjects) {
      const id = userIdOf(s);
      if (!id) continue;
      add(
        id,
        s.kind === 'User' ? `Kubernetes user ${s.name}` : `ServiceAccount ${s.namespace ?? ''}/${s.name}`,
        implicitGroups(s),
      );
    }
  return [...users.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([userid, e]) => {
      const realm = userid.slice(userid.lastIndexOf('@') + 1) || 'pam';
      return {
        userid,
        enable: 1,
        expire: 0,
        realm,
        'realm-type': realm,
        ...(e.comment.size ? { comment: [...e.comment].sort().join('; ') } : {}),
        groups: [...e.groups].sort().join(','),
      };
    });
}

export interface AclEntry {
  path: string;
  roleid: Role;
  type: 'user' | 'group';
  ugid: string;
  propagate: 1;
}

/** ACL entries; `vmidsIn` lists the guest vmids of a namespace (a RoleBinding's reach). */
export function accessAcl(bindings: RbacBinding[], vmidsIn: (namespace: string) => number[]): AclEntry[] {
  const out = new Map<string, AclEntry>();
  for (const b of bindings) {
    const roleid = pveRoleOf(b.role);
    if (!roleid) continue;
    const paths = b.kind === 'ClusterRoleBinding' ? ['/'] : vmidsIn(b.namespace ?? '').map((v) => `/vms/${v}`);
    for (const s of b.subjects) {
      const ugid = s.kind === 'Group' ? groupId(s.name) : (userIdOf(s) ?? '');
      const type = s.kind === 'Group' ? 'group' : 'user';
      for (const path of paths)
        out.set(`${path} ${type} ${ugid} ${roleid}`, { path, roleid, type, ugid, propagate: 1 });
    }
  }
  return [...out.values()].sort(
    (a, b) => a.path.localeCompare(b.path) || a.ugid.localeCompare(b.ugid) || a.roleid.localeCompare(b.roleid),
  );
}
