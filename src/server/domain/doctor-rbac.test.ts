/** The doctor's RBAC check asks for exactly what deploy/base/rbac.yaml grants, so a Corral deployed with it reads ok. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { AccessQuery, ClusterPort, ResourceRule, RulesReview } from './cluster-port';
import type { DomainDeps } from './deps';
import { accessQueries, permissionName, refusedQueries, ruleCovers, RULES_PROBE_NAMESPACE } from './doctor-rbac';

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}

function deployedPermissions(): string[] {
  const file = fileURLToPath(new URL('../../../deploy/base/rbac.yaml', import.meta.url));
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).map(
    (d) => d.toJSON() as { kind?: string; rules?: Rule[] },
  );
  const role = docs.find((d) => d.kind === 'ClusterRole');
  const out: string[] = [];
  for (const rule of role?.rules ?? [])
    for (const group of rule.apiGroups)
      for (const resource of rule.resources)
        for (const verb of rule.verbs)
          for (const name of rule.resourceNames ?? [undefined]) {
            const [res, sub] = resource.split('/');
            out.push(
              permissionName({
                verb,
                group,
                resource: res!,
                ...(sub ? { subresource: sub } : {}),
                ...(name ? { name } : {}),
              }),
            );
          }
  return out.sort();
}

describe('the RBAC check', () => {
  it('asks for the permissions of deploy/base/rbac.yaml, no more and no fewer', () => {
    expect(accessQueries().map(permissionName).sort()).toEqual(deployedPermissions());
  });

  it('names a permission as verb resource[/subresource].group', () => {
    expect(permissionName({ verb: 'create', group: '', resource: 'pods', subresource: 'exec' })).toBe(
      'create pods/exec',
    );
    expect(permissionName({ verb: 'delete', group: 'kubevirt.io', resource: 'virtualmachines' })).toBe(
      'delete virtualmachines.kubevirt.io',
    );
  });

  it('matches rules as RBAC does: wildcards, */subresource, resourceNames', () => {
    const q = (verb: string, resource: string, extra: Partial<AccessQuery> = {}): AccessQuery => ({
      verb,
      group: '',
      resource,
      ...extra,
    });
    expect(ruleCovers({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, q('delete', 'pods'))).toBe(true);
    expect(ruleCovers({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, q('delete', 'pods'))).toBe(false);
    expect(
      ruleCovers(
        { verbs: ['create'], apiGroups: [''], resources: ['*/exec'] },
        q('create', 'pods', { subresource: 'exec' }),
      ),
    ).toBe(true);
    expect(
      ruleCovers(
        { verbs: ['create'], apiGroups: [''], resources: ['pods'] },
        q('create', 'pods', { subresource: 'exec' }),
      ),
    ).toBe(false);
    const named: ResourceRule = {
      verbs: ['use'],
      apiGroups: ['x'],
      resources: ['sccs'],
      resourceNames: ['privileged'],
    };
    expect(ruleCovers(named, q('use', 'sccs', { group: 'x', name: 'privileged' }))).toBe(true);
    expect(ruleCovers(named, q('use', 'sccs', { group: 'x' }))).toBe(false);
  });

  const deps = (cluster: Partial<ClusterPort>) => ({ cluster }) as unknown as DomainDeps;
  const queries: AccessQuery[] = [
    { verb: 'get', group: '', resource: 'pods' },
    { verb: 'delete', group: '', resource: 'pods' },
    { verb: 'create', group: 'batch', resource: 'cronjobs' },
  ];

  it('answers from one rules review (asked about a namespace nobody binds in) when it is complete', async () => {
    const asked: string[] = [];
    const result = await refusedQueries(
      deps({
        rulesReview: async (ns: string): Promise<RulesReview> => {
          asked.push(ns);
          return { rules: [{ verbs: ['get', 'list'], apiGroups: [''], resources: ['pods'] }], incomplete: false };
        },
        canI: async () => {
          throw new Error('no access review expected');
        },
      }),
      queries,
    );
    expect(asked).toEqual([RULES_PROBE_NAMESPACE]);
    expect(result.refused.map(permissionName)).toEqual(['delete pods', 'create cronjobs.batch']);
    expect(result.via).toBe('one SelfSubjectRulesReview');
  });

  it('asks an access review per verb the rules do not cover when the review is incomplete, and for all without one', async () => {
    const canI = async (q: AccessQuery) => ({ allowed: q.resource === 'cronjobs' });
    const incomplete = await refusedQueries(
      deps({
        rulesReview: async () => ({
          rules: [{ verbs: ['get'], apiGroups: [''], resources: ['pods'] }],
          incomplete: true,
        }),
        canI,
      }),
      queries,
    );
    expect(incomplete.refused.map(permissionName)).toEqual(['delete pods']);
    expect(incomplete.via).toBe('a SelfSubjectRulesReview and 2 SelfSubjectAccessReviews');
    const failing = await refusedQueries(
      deps({
        rulesReview: async () => {
          throw new Error('404');
        },
        canI,
      }),
      queries,
    );
    expect(failing.refused.map(permissionName)).toEqual(['get pods', 'delete pods']);
    const none = await refusedQueries(deps({ canI }), queries);
    expect(none.via).toBe('3 SelfSubjectAccessReviews');
  });
});
