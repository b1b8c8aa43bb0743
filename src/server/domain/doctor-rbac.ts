/**
 * Doctor check of Corral's own RBAC: every verb Corral uses, for all namespaces (Corral watches and acts across
 * namespaces), checked against one SelfSubjectRulesReview (with a SelfSubjectAccessReview per verb where the rules
 * review is not served or not complete), and the row lists exactly the ones refused. Corral cannot grant
 * itself permissions, so the row is not fixable: the message names what a cluster admin must bind.
 */
import { describeError } from '../errors';
import type { AccessQuery, ResourceRule } from './cluster-port';
import type { DomainDeps } from './deps';
import { finding, type Finding } from './doctor-types';

interface Need {
  group: string;
  resource: string;
  verbs: string[];
  /** Subresources of `resource` and the verb each needs. */
  sub?: Record<string, string>;
  /** The rule is limited to these objects (`resourceNames`): asked once per name. */
  names?: string[];
}

const WATCHED = ['get', 'list', 'watch'];

/**
 * What Corral does, by API resource: the same rules as the ClusterRole in deploy/base/rbac.yaml (doctor-rbac.test.ts
 * keeps the two equal), so a Corral deployed with it reads ok.
 */
export const NEEDS: Need[] = [
  { group: 'kubevirt.io', resource: 'virtualmachines', verbs: [...WATCHED, 'create', 'patch', 'update', 'delete'] },
  { group: 'kubevirt.io', resource: 'virtualmachineinstances', verbs: WATCHED },
  // The doctor: the operators' CRs (health, versions) and the feature-gate fix.
  { group: 'kubevirt.io', resource: 'kubevirts', verbs: ['get', 'list', 'patch'] },
  { group: 'cdi.kubevirt.io', resource: 'cdis', verbs: ['list'] },
  { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations', verbs: WATCHED },
  {
    group: 'subresources.kubevirt.io',
    resource: 'virtualmachines',
    verbs: [],
    sub: {
      start: 'update',
      stop: 'update',
      restart: 'update',
      migrate: 'update',
      addvolume: 'update',
      removevolume: 'update',
    },
  },
  {
    group: 'subresources.kubevirt.io',
    resource: 'virtualmachineinstances',
    verbs: [],
    sub: {
      pause: 'update',
      unpause: 'update',
      freeze: 'update',
      unfreeze: 'update',
      vnc: 'get',
      console: 'get',
      guestosinfo: 'get',
    },
  },
  {
    group: 'cdi.kubevirt.io',
    resource: 'datavolumes',
    verbs: [...WATCHED, 'create', 'delete'],
    sub: { source: 'create' },
  },
  { group: 'upload.cdi.kubevirt.io', resource: 'uploadtokenrequests', verbs: ['create'] },
  { group: '', resource: 'persistentvolumeclaims', verbs: [...WATCHED, 'create', 'patch', 'delete'] },
  { group: '', resource: 'nodes', verbs: WATCHED, sub: { proxy: 'get' } },
  { group: '', resource: 'pods', verbs: [...WATCHED, 'create', 'delete'], sub: { exec: 'create' } },
  { group: '', resource: 'events', verbs: ['list', 'watch'] },
  { group: '', resource: 'namespaces', verbs: ['get', 'create'] },
  { group: '', resource: 'secrets', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  { group: '', resource: 'configmaps', verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] },
  { group: 'coordination.k8s.io', resource: 'leases', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  { group: '', resource: 'services', verbs: ['get', 'list', 'delete'] },
  { group: 'batch', resource: 'jobs', verbs: ['get', 'list', 'create', 'delete'] },
  // Snapshot and power schedules (schedules.ts): a CronJob each.
  { group: 'batch', resource: 'cronjobs', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  { group: 'snapshot.kubevirt.io', resource: 'virtualmachinesnapshots', verbs: ['get', 'list', 'create', 'delete'] },
  { group: 'snapshot.kubevirt.io', resource: 'virtualmachinerestores', verbs: ['get', 'list', 'create', 'delete'] },
  { group: 'clone.kubevirt.io', resource: 'virtualmachineclones', verbs: ['get', 'list', 'create', 'delete'] },
  { group: 'export.kubevirt.io', resource: 'virtualmachineexports', verbs: ['get', 'list', 'create', 'delete'] },
  { group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['get', 'list'] },
  { group: 'storage.k8s.io', resource: 'csistoragecapacities', verbs: ['list'] },
  { group: 'snapshot.storage.k8s.io', resource: 'volumesnapshotclasses', verbs: ['get', 'list', 'create'] },
  { group: 'instancetype.kubevirt.io', resource: 'virtualmachineclusterinstancetypes', verbs: ['get', 'list'] },
  { group: 'instancetype.kubevirt.io', resource: 'virtualmachineclusterpreferences', verbs: ['get', 'list'] },
  { group: 'k8s.cni.cncf.io', resource: 'network-attachment-definitions', verbs: ['get', 'list'] },
  // Extensions (extensions-catalog.ts): their objects are applied (server-side apply is a patch, and creates),
  // found by label and removed.
  { group: '', resource: 'serviceaccounts', verbs: ['get', 'list', 'create', 'patch', 'delete'] },
  {
    group: 'rbac.authorization.k8s.io',
    resource: 'roles',
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  {
    group: 'rbac.authorization.k8s.io',
    resource: 'rolebindings',
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  // The schedule extensions' runners read VMs in every namespace: a ClusterRole and its binding. (list of
  // clusterrolebindings is also the Proxmox door's /access/users, /groups and /acl, rbac-bindings.ts.)
  {
    group: 'rbac.authorization.k8s.io',
    resource: 'clusterroles',
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  {
    group: 'rbac.authorization.k8s.io',
    resource: 'clusterrolebindings',
    verbs: ['get', 'list', 'create', 'patch', 'delete'],
  },
  // The bootc extension's Role lets its builder use OpenShift's privileged SCC; the apiserver lets Corral create
  // such a Role (and bind it) only if Corral holds that permission itself.
  { group: 'security.openshift.io', resource: 'securitycontextconstraints', verbs: ['use'], names: ['privileged'] },
  { group: 'metrics.k8s.io', resource: 'pods', verbs: ['get', 'list'] },
  { group: 'metrics.k8s.io', resource: 'nodes', verbs: ['get', 'list'] },
];

/** Every (verb, resource) Corral needs, as access-review questions. */
export function accessQueries(needs: Need[] = NEEDS): AccessQuery[] {
  const out: AccessQuery[] = [];
  for (const n of needs) {
    for (const verb of n.verbs)
      for (const name of n.names ?? [undefined])
        out.push({ verb, group: n.group, resource: n.resource, ...(name ? { name } : {}) });
    for (const [subresource, verb] of Object.entries(n.sub ?? {}))
      out.push({ verb, group: n.group, resource: n.resource, subresource });
  }
  return out;
}

/**
 * `delete virtualmachines.kubevirt.io`, `create pods/exec`, `use securitycontextconstraints.security.openshift.io
 * privileged` — how a missing permission is named.
 */
export function permissionName(q: AccessQuery): string {
  const resource = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
  return `${q.verb} ${resource}${q.group ? `.${q.group}` : ''}${q.name ? ` ${q.name}` : ''}`;
}

/**
 * The namespace the rules review asks about: one no role is bound in, so the rules it returns are exactly those of
 * Corral's ClusterRoleBindings — the grants that hold in all namespaces, which is what Corral needs. (The namespace
 * need not exist; the apiserver only looks up RoleBindings in it.)
 */
export const RULES_PROBE_NAMESPACE = 'corral-rbac-probe';

const has = (list: string[] | undefined, value: string) => !!list && (list.includes('*') || list.includes(value));

/** Whether a rule grants the query, as RBAC's rule matcher reads it (wildcards, a `*` resource with a subresource, resourceNames). */
export function ruleCovers(rule: ResourceRule, q: AccessQuery): boolean {
  const resource = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
  const resourceMatch =
    has(rule.resources, resource) || (!!q.subresource && !!rule.resources?.includes(`*/${q.subresource}`));
  return (
    has(rule.verbs, q.verb) &&
    has(rule.apiGroups, q.group) &&
    resourceMatch &&
    (!rule.resourceNames?.length || (!!q.name && rule.resourceNames.includes(q.name)))
  );
}

/**
 * Which of `queries` are refused. One SelfSubjectRulesReview answers all of them when the apiserver serves it and
 * its answer is complete; otherwise (not served, failed, or `incomplete` because another authorizer such as a
 * webhook may grant more) the queries it does not cover are asked one SelfSubjectAccessReview each.
 */
export async function refusedQueries(
  deps: DomainDeps,
  queries: AccessQuery[],
): Promise<{ refused: AccessQuery[]; via: string }> {
  let unsure = queries;
  if (deps.cluster.rulesReview) {
    try {
      const review = await deps.cluster.rulesReview(RULES_PROBE_NAMESPACE);
      const uncovered = queries.filter((q) => !review.rules.some((r) => ruleCovers(r, q)));
      if (!review.incomplete) return { refused: uncovered, via: 'one SelfSubjectRulesReview' };
      unsure = uncovered;
    } catch {
      // Not served (older or restricted apiservers): ask per verb below.
    }
  }
  const answers = await Promise.all(unsure.map((q) => deps.cluster.canI(q)));
  const via =
    unsure === queries
      ? `${queries.length} SelfSubjectAccessReviews`
      : `a SelfSubjectRulesReview and ${unsure.length} SelfSubjectAccessReviews`;
  return { refused: unsure.filter((_, i) => !answers[i]!.allowed), via };
}

export async function rbacChecks(deps: DomainDeps): Promise<Finding[]> {
  const base = { name: 'rbac', area: 'access' as const, title: "Corral's permissions" };
  const queries = accessQueries();
  let result;
  try {
    result = await refusedQueries(deps, queries);
  } catch (err) {
    return [
      finding({
        ...base,
        status: 'warn',
        message: `could not ask the apiserver (SelfSubjectAccessReview): ${describeError(err)}`,
      }),
    ];
  }
  const missing = result.refused.map(permissionName);
  if (missing.length === 0)
    return [
      finding({
        ...base,
        status: 'ok',
        message: `all ${queries.length} permissions Corral uses are granted (checked with ${result.via})`,
      }),
    ];
  return [
    finding({
      ...base,
      status: 'fail',
      message: `${missing.length} of ${queries.length} permissions are missing in all namespaces: ${missing.join(', ')}. A cluster admin must grant them (Corral cannot grant itself; checked with ${result.via})`,
      details: missing,
    }),
  ];
}
