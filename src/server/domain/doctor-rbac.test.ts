/** The doctor's RBAC check asks for exactly what deploy/base/rbac.yaml grants, so a Corral deployed with it reads ok. */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { accessQueries, permissionName } from './doctor-rbac';

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
});
