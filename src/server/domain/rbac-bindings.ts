/**
 * Who the cluster grants what: every ClusterRoleBinding and RoleBinding with its role and subjects, read live (RBAC
 * objects are not in the watch cache) and kept for a few seconds, since clients such as Ansible's proxmox_user_info
 * ask for users, groups and ACLs one after the other. The Proxmox door shows these as `/access/users|groups|acl`.
 */
import type { KObject } from './cluster-port';
import type { DomainDeps } from './deps';
import { asArray, asDict, asString } from './vm-facts';

export interface RbacSubject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  name: string;
  /** ServiceAccounts only. */
  namespace?: string;
}

export interface RbacBinding {
  kind: 'ClusterRoleBinding' | 'RoleBinding';
  name: string;
  /** RoleBindings only: the namespace the grant is limited to. */
  namespace?: string;
  role: { kind: 'ClusterRole' | 'Role'; name: string };
  subjects: RbacSubject[];
}

const TTL_MS = 5_000;
const cached = new WeakMap<DomainDeps, { at: number; bindings: Promise<RbacBinding[]> }>();

function binding(kind: RbacBinding['kind'], o: KObject): RbacBinding | undefined {
  const ref = asDict(o.roleRef);
  const roleKind = asString(ref.kind);
  if (roleKind !== 'ClusterRole' && roleKind !== 'Role') return undefined;
  const subjects: RbacSubject[] = [];
  for (const raw of asArray(o.subjects)) {
    const s = asDict(raw);
    const k = asString(s.kind);
    const name = asString(s.name);
    if (!name || (k !== 'User' && k !== 'Group' && k !== 'ServiceAccount')) continue;
    const namespace = asString(s.namespace) || (k === 'ServiceAccount' ? (o.metadata.namespace ?? '') : '');
    subjects.push({ kind: k, name, ...(namespace && k === 'ServiceAccount' ? { namespace } : {}) });
  }
  return {
    kind,
    name: o.metadata.name ?? '',
    ...(kind === 'RoleBinding' && o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
    role: { kind: roleKind, name: asString(ref.name) },
    subjects,
  };
}

async function load(deps: DomainDeps): Promise<RbacBinding[]> {
  const [cluster, namespaced] = await Promise.all([
    deps.cluster.fetchList('ClusterRoleBinding'),
    deps.cluster.fetchList('RoleBinding'),
  ]);
  const out: RbacBinding[] = [];
  for (const o of cluster) {
    const b = binding('ClusterRoleBinding', o);
    if (b) out.push(b);
  }
  for (const o of namespaced) {
    const b = binding('RoleBinding', o);
    if (b) out.push(b);
  }
  return out.sort(
    (a, b) =>
      a.kind.localeCompare(b.kind) ||
      (a.namespace ?? '').localeCompare(b.namespace ?? '') ||
      a.name.localeCompare(b.name),
  );
}

/** Every binding with its subjects (cluster-wide first), at most TTL_MS old. A failed read is not kept. */
export function rbacBindings(deps: DomainDeps, now = Date.now()): Promise<RbacBinding[]> {
  const hit = cached.get(deps);
  if (hit && now - hit.at < TTL_MS) return hit.bindings;
  const bindings = load(deps);
  cached.set(deps, { at: now, bindings });
  bindings.catch(() => cached.delete(deps));
  return bindings;
}
