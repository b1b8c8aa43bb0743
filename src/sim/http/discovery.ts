/**
 * Legacy discovery documents (kube-sim-spec §2.2): `/api`, `/apis`, `/apis/<g>`, `/api/v1`, `/apis/<g>/<v>`.
 * Built from the kind registry plus the extra API groups modules contribute (subresources.kubevirt.io,
 * metrics.k8s.io), so `kubectl api-resources` and client-node's KubernetesObjectApi resolve every kind.
 */
import type { KindSpec } from '../resources/kinds.js';
import { STREAMING_SUBRESOURCES } from '../resources/kinds.js';
import type { SubresourceRoute } from '../module.js';
import { AUTHORIZATION_GROUP, REVIEW_RESOURCES, RULES_REVIEW } from './access-reviews.js';

export const SUBRESOURCES_GROUP = 'subresources.kubevirt.io';
export const METRICS_GROUP = 'metrics.k8s.io';

export interface DiscoveryInput {
  kinds: KindSpec[];
  subresourceRoutes: SubresourceRoute[];
  metricsEnabled: boolean;
  serverAddress: string;
}

interface GroupVersions {
  name: string;
  versions: string[];
  preferred: string;
}

export function apiVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

function groups(input: DiscoveryInput): GroupVersions[] {
  const out = new Map<string, GroupVersions>();
  for (const k of input.kinds) {
    if (!k.group) continue;
    const g = out.get(k.group) ?? { name: k.group, versions: [], preferred: k.version };
    for (const v of [k.version, ...(k.aliasVersions ?? [])]) if (!g.versions.includes(v)) g.versions.push(v);
    out.set(k.group, g);
  }
  out.set(SUBRESOURCES_GROUP, { name: SUBRESOURCES_GROUP, versions: ['v1'], preferred: 'v1' });
  for (const name of Object.keys(REVIEW_RESOURCES)) out.set(name, { name, versions: ['v1'], preferred: 'v1' });
  if (input.metricsEnabled)
    out.set(METRICS_GROUP, { name: METRICS_GROUP, versions: ['v1beta1'], preferred: 'v1beta1' });
  return [...out.values()];
}

function groupDoc(g: GroupVersions): Record<string, unknown> {
  return {
    name: g.name,
    versions: g.versions.map((v) => ({ groupVersion: `${g.name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${g.name}/${g.preferred}`, version: g.preferred },
  };
}

export function apiGroupList(input: DiscoveryInput): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: groups(input).map(groupDoc) };
}

export function apiGroup(input: DiscoveryInput, name: string): Record<string, unknown> | undefined {
  const g = groups(input).find((x) => x.name === name);
  return g ? { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(g) } : undefined;
}

/** Whether `<group>/<version>` is served (core is group ""). */
export function servesGroupVersion(input: DiscoveryInput, group: string, version: string): boolean {
  if (!group) return version === 'v1';
  return groups(input).some((g) => g.name === group && g.versions.includes(version));
}

/** A stable fake storageVersionHash (kubectl only compares it for cache invalidation). */
function hash(text: string): string {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = ((h << 5) + h + text.charCodeAt(i)) | 0;
  return Buffer.from(String(h >>> 0))
    .toString('base64')
    .slice(0, 11);
}

function kindResources(k: KindSpec): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: k.plural,
    singularName: k.singular,
    namespaced: k.namespaced,
    kind: k.kind,
    verbs: k.verbs,
    ...(k.shortNames ? { shortNames: k.shortNames } : {}),
    ...(k.categories ? { categories: k.categories } : {}),
    storageVersionHash: hash(`${k.group}/${k.version}/${k.kind}`),
  };
  const subs: Record<string, unknown>[] = [];
  if (k.hasStatus)
    subs.push({
      name: `${k.plural}/status`,
      singularName: '',
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: ['get', 'patch', 'update'],
    });
  for (const s of k.extraSubresources ?? []) {
    subs.push({
      name: `${k.plural}/${s.name}`,
      singularName: '',
      namespaced: k.namespaced,
      ...(s.group !== undefined ? { group: s.group, version: s.version } : {}),
      kind: s.kind ?? k.kind,
      verbs: s.verbs,
    });
  }
  return [main, ...subs];
}

function resourceList(groupVersion: string, resources: Record<string, unknown>[]): Record<string, unknown> {
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources };
}

export function apiResourceList(
  input: DiscoveryInput,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  if (!servesGroupVersion(input, group, version)) return undefined;
  const gv = group ? `${group}/${version}` : version;
  if (group === SUBRESOURCES_GROUP) {
    // The aggregated KubeVirt API lists bare names (no kind/verbs), as virt-api does.
    const names = new Set([
      ...input.subresourceRoutes.map((r) => `${r.resource}/${r.verb}`),
      ...STREAMING_SUBRESOURCES,
    ]);
    return resourceList(
      gv,
      [...names].sort().map((name) => ({ name, namespaced: true })),
    );
  }
  const review = REVIEW_RESOURCES[group];
  if (review)
    return resourceList(gv, [
      { name: review.plural, singularName: '', namespaced: false, kind: review.kind, verbs: ['create'] },
      ...(group === AUTHORIZATION_GROUP
        ? [
            {
              name: RULES_REVIEW.plural,
              singularName: '',
              namespaced: false,
              kind: RULES_REVIEW.kind,
              verbs: ['create'],
            },
          ]
        : []),
    ]);
  if (group === METRICS_GROUP) {
    return resourceList(gv, [
      { name: 'nodes', singularName: '', namespaced: false, kind: 'NodeMetrics', verbs: ['get', 'list'] },
      { name: 'pods', singularName: '', namespaced: true, kind: 'PodMetrics', verbs: ['get', 'list'] },
    ]);
  }
  const kinds = input.kinds.filter(
    (k) => k.group === group && (k.version === version || k.aliasVersions?.includes(version)),
  );
  return resourceList(gv, kinds.flatMap(kindResources));
}
