/**
 * The embedded cluster's authentication and RBAC, kept to what a test of "Corral running as a ServiceAccount that
 * lacks some verbs" needs — and honest about it: what an access review answers is what a request is allowed to do.
 *
 * - **Who**: a bearer token equal to the `token` of a `kubernetes.io/service-account-token` Secret (the legacy token
 *   Secret, annotated `kubernetes.io/service-account.name`) is that ServiceAccount
 *   (`system:serviceaccount:<ns>:<name>`, groups `system:serviceaccounts`, `system:serviceaccounts:<ns>`,
 *   `system:authenticated`). Any other token, or none, is the kubeconfig's admin (`system:masters`), as before.
 * - **What**: for a ServiceAccount, a request is allowed when a rule of a ClusterRole bound by a ClusterRoleBinding,
 *   or of a Role/ClusterRole bound by a RoleBinding in the request's namespace, matches its verb, API group,
 *   resource (`resource/subresource`) and name. Discovery, `/version`, health and access reviews are open to every
 *   authenticated caller (the `system:discovery` and `system:basic-user` roles of a real cluster).
 */
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../store/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import type { KObject } from '../store/types.js';
import { resourceKey } from '../store/types.js';

export interface SimUser {
  username: string;
  groups: string[];
  /** The kubeconfig's admin: RBAC is not consulted. */
  admin: boolean;
}

export const ADMIN_USER: SimUser = {
  username: 'corral-sim-admin',
  groups: ['system:masters', 'system:authenticated'],
  admin: true,
};

/** A request as RBAC sees it (a SelfSubjectAccessReview's resourceAttributes). */
export interface ResourceAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
}

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

const SECRETS = resourceKey('', 'secrets');
const CLUSTER_ROLES = resourceKey('rbac.authorization.k8s.io', 'clusterroles');
const CLUSTER_ROLE_BINDINGS = resourceKey('rbac.authorization.k8s.io', 'clusterrolebindings');
const ROLES = resourceKey('rbac.authorization.k8s.io', 'roles');
const ROLE_BINDINGS = resourceKey('rbac.authorization.k8s.io', 'rolebindings');

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  const m = header ? /^Bearer\s+(.+)$/i.exec(header.trim()) : null;
  return m?.[1];
}

/** Who sent the request (see the header). */
export function userOf(store: ObjectStore, req: IncomingMessage): SimUser {
  const token = bearer(req);
  if (!token || token === 'sim-admin-token') return ADMIN_USER;
  for (const secret of store.list(SECRETS)) {
    if (secret.type !== 'kubernetes.io/service-account-token') continue;
    const data = (secret.data ?? {}) as Record<string, string>;
    if (!data.token || Buffer.from(data.token, 'base64').toString('utf8') !== token) continue;
    const sa = secret.metadata.annotations?.['kubernetes.io/service-account.name'];
    const ns = secret.metadata.namespace;
    if (!sa || !ns) continue;
    return {
      username: `system:serviceaccount:${ns}:${sa}`,
      groups: ['system:serviceaccounts', `system:serviceaccounts:${ns}`, 'system:authenticated'],
      admin: false,
    };
  }
  return ADMIN_USER;
}

interface Subject {
  kind?: string;
  name?: string;
  namespace?: string;
}

function boundTo(binding: KObject, user: SimUser): boolean {
  const subjects = Array.isArray(binding.subjects) ? (binding.subjects as Subject[]) : [];
  return subjects.some((s) => {
    if (s.kind === 'ServiceAccount') return user.username === `system:serviceaccount:${s.namespace}:${s.name}`;
    if (s.kind === 'User') return s.name === user.username;
    if (s.kind === 'Group') return !!s.name && user.groups.includes(s.name);
    return false;
  });
}

function rulesOf(role: KObject | undefined): PolicyRule[] {
  return role && Array.isArray(role.rules) ? (role.rules as PolicyRule[]) : [];
}

function roleRefRules(store: ObjectStore, binding: KObject, namespace?: string): PolicyRule[] {
  const ref = (binding.roleRef ?? {}) as { kind?: string; name?: string };
  if (!ref.name) return [];
  if (ref.kind === 'ClusterRole') return rulesOf(store.get(CLUSTER_ROLES, undefined, ref.name));
  if (ref.kind === 'Role' && namespace) return rulesOf(store.get(ROLES, namespace, ref.name));
  return [];
}

const has = (list: string[] | undefined, value: string) => !!list && (list.includes('*') || list.includes(value));

function ruleAllows(rule: PolicyRule, a: ResourceAttributes): boolean {
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const resourceMatch =
    has(rule.resources, resource) || (!!a.subresource && !!rule.resources?.includes(`*/${a.subresource}`));
  return (
    has(rule.verbs, a.verb) &&
    has(rule.apiGroups, a.group) &&
    resourceMatch &&
    (!rule.resourceNames?.length || (!!a.name && rule.resourceNames.includes(a.name)))
  );
}

/** Whether RBAC lets `user` do `a`. */
export function allowed(store: ObjectStore, user: SimUser, a: ResourceAttributes): boolean {
  if (user.admin) return true;
  for (const crb of store.list(CLUSTER_ROLE_BINDINGS)) {
    if (boundTo(crb, user) && roleRefRules(store, crb).some((r) => ruleAllows(r, a))) return true;
  }
  if (a.namespace) {
    for (const rb of store.list(ROLE_BINDINGS, a.namespace)) {
      if (boundTo(rb, user) && roleRefRules(store, rb, a.namespace).some((r) => ruleAllows(r, a))) return true;
    }
  }
  return false;
}

/**
 * The rules `user` holds in `namespace` (a SelfSubjectRulesReview): those of its ClusterRoleBindings plus its
 * RoleBindings there, as the bound roles spell them. The admin holds `*` on everything.
 */
export function rulesFor(store: ObjectStore, user: SimUser, namespace: string): PolicyRule[] {
  if (user.admin) return [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }];
  const out: PolicyRule[] = [];
  for (const crb of store.list(CLUSTER_ROLE_BINDINGS)) if (boundTo(crb, user)) out.push(...roleRefRules(store, crb));
  if (namespace)
    for (const rb of store.list(ROLE_BINDINGS, namespace))
      if (boundTo(rb, user)) out.push(...roleRefRules(store, rb, namespace));
  return out;
}

/** Throws the apiserver's 403 when RBAC refuses `a` to `user`. */
export function authorize(store: ObjectStore, user: SimUser, a: ResourceAttributes): void {
  if (allowed(store, user, a)) return;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
  const subject = a.name ? `${qualified} "${a.name}"` : qualified;
  const scope = a.namespace ? ` in the namespace "${a.namespace}"` : ' at the cluster scope';
  throw new ApiError(
    403,
    'Forbidden',
    `${subject} is forbidden: User "${user.username}" cannot ${a.verb} resource "${resource}" in API group "${a.group}"${scope}`,
    { ...(a.name ? { name: a.name } : {}), group: a.group, kind: a.resource },
  );
}

/** The RBAC verb of a resource request (get/list/watch/create/update/patch/delete/deletecollection). */
export function verbOf(method: string, named: boolean, watch: boolean): string {
  switch (method) {
    case 'GET':
    case 'HEAD':
      return named ? 'get' : watch ? 'watch' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
