/**
 * Doctor check of Corral's own RBAC: one SelfSubjectAccessReview per verb Corral uses, asked for all namespaces
 * (Corral watches and acts across namespaces), and the row lists exactly the ones refused. Corral cannot grant
 * itself permissions, so the row is not fixable: the message names what a cluster admin must bind.
 */
import { describeError } from '../errors';
import type { AccessQuery } from './cluster-port';
import type { DomainDeps } from './deps';
import { finding, type Finding } from './doctor-types';

interface Need {
  group: string;
  resource: string;
  verbs: string[];
  /** Subresources of `resource` and the verb each needs. */
  sub?: Record<string, string>;
}

const WATCHED = ['get', 'list', 'watch'];

/** What Corral does, by API resource (read from the domain's create/patch/remove/read calls). */
export const NEEDS: Need[] = [
  { group: 'kubevirt.io', resource: 'virtualmachines', verbs: [...WATCHED, 'create', 'patch', 'delete'] },
  { group: 'kubevirt.io', resource: 'virtualmachineinstances', verbs: [...WATCHED, 'delete'] },
  { group: 'kubevirt.io', resource: 'virtualmachineinstancemigrations', verbs: [...WATCHED, 'create'] },
  {
    group: 'subresources.kubevirt.io',
    resource: 'virtualmachines',
    verbs: [],
    sub: { start: 'update', stop: 'update', restart: 'update' },
  },
  {
    group: 'subresources.kubevirt.io',
    resource: 'virtualmachineinstances',
    verbs: [],
    sub: { pause: 'update', unpause: 'update', vnc: 'get', console: 'get', guestosinfo: 'get' },
  },
  { group: '', resource: 'pods', verbs: [...WATCHED, 'create', 'delete'], sub: { exec: 'create', log: 'get' } },
  { group: '', resource: 'nodes', verbs: WATCHED },
  { group: '', resource: 'persistentvolumeclaims', verbs: [...WATCHED, 'create', 'patch', 'delete'] },
  { group: '', resource: 'namespaces', verbs: ['get', 'create'] },
  { group: '', resource: 'configmaps', verbs: ['get', 'create', 'patch'] },
  { group: '', resource: 'secrets', verbs: ['get', 'list', 'create'] },
  { group: '', resource: 'services', verbs: ['list'] },
  { group: '', resource: 'events', verbs: ['list', 'watch'] },
  { group: 'batch', resource: 'jobs', verbs: ['get', 'create'] },
  { group: 'cdi.kubevirt.io', resource: 'datavolumes', verbs: [...WATCHED, 'create', 'delete'] },
  { group: 'upload.cdi.kubevirt.io', resource: 'uploadtokenrequests', verbs: ['create'] },
  { group: 'snapshot.kubevirt.io', resource: 'virtualmachinesnapshots', verbs: ['get', 'list', 'create', 'delete'] },
  { group: 'snapshot.kubevirt.io', resource: 'virtualmachinerestores', verbs: ['get', 'create'] },
  { group: 'clone.kubevirt.io', resource: 'virtualmachineclones', verbs: ['get', 'create'] },
  { group: 'export.kubevirt.io', resource: 'virtualmachineexports', verbs: ['get', 'create', 'delete'] },
  { group: 'storage.k8s.io', resource: 'storageclasses', verbs: ['list'] },
  { group: 'snapshot.storage.k8s.io', resource: 'volumesnapshotclasses', verbs: ['list'] },
  { group: 'instancetype.kubevirt.io', resource: 'virtualmachineclusterinstancetypes', verbs: ['list'] },
  { group: 'instancetype.kubevirt.io', resource: 'virtualmachineclusterpreferences', verbs: ['list'] },
  { group: 'k8s.cni.cncf.io', resource: 'network-attachment-definitions', verbs: ['get', 'list'] },
  { group: 'metrics.k8s.io', resource: 'pods', verbs: ['list'] },
  { group: 'metrics.k8s.io', resource: 'nodes', verbs: ['list'] },
];

/** Every (verb, resource) Corral needs, as access-review questions. */
export function accessQueries(needs: Need[] = NEEDS): AccessQuery[] {
  const out: AccessQuery[] = [];
  for (const n of needs) {
    for (const verb of n.verbs) out.push({ verb, group: n.group, resource: n.resource });
    for (const [subresource, verb] of Object.entries(n.sub ?? {}))
      out.push({ verb, group: n.group, resource: n.resource, subresource });
  }
  return out;
}

/** `delete virtualmachines.kubevirt.io`, `create pods/exec` — how a missing permission is named. */
export function permissionName(q: AccessQuery): string {
  const resource = q.subresource ? `${q.resource}/${q.subresource}` : q.resource;
  return `${q.verb} ${resource}${q.group ? `.${q.group}` : ''}`;
}

export async function rbacChecks(deps: DomainDeps): Promise<Finding[]> {
  const base = { name: 'rbac', area: 'access' as const, title: "Corral's permissions" };
  const queries = accessQueries();
  let answers;
  try {
    answers = await Promise.all(queries.map((q) => deps.cluster.canI(q)));
  } catch (err) {
    return [
      finding({
        ...base,
        status: 'warn',
        message: `could not ask the apiserver (SelfSubjectAccessReview): ${describeError(err)}`,
      }),
    ];
  }
  const missing = queries.filter((_, i) => !answers[i]!.allowed).map(permissionName);
  if (missing.length === 0)
    return [finding({ ...base, status: 'ok', message: `all ${queries.length} permissions Corral uses are granted` })];
  return [
    finding({
      ...base,
      status: 'fail',
      message: `${missing.length} of ${queries.length} permissions are missing in all namespaces: ${missing.join(', ')}. A cluster admin must grant them (Corral cannot grant itself)`,
      details: missing,
    }),
  ];
}
