/**
 * The embedded cluster's RBAC for ServiceAccount tokens (src/sim/http/rbac.ts): a RoleBinding grants within its
 * namespace only, a Group subject and resourceNames are honoured, access reviews answer what requests get, and the
 * admin token is unaffected.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from './harness';

const RBAC = 'rbac.authorization.k8s.io';
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
  const store = h.cluster.store;
  for (const ns of ['team', 'other'])
    store.create('/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  store.create('/secrets', {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/service-account-token',
    metadata: { name: 'bot-token', namespace: 'team', annotations: { 'kubernetes.io/service-account.name': 'bot' } },
    data: { token: Buffer.from('bot-secret').toString('base64') },
  });
  // Read configmaps in "team" (a Role through a RoleBinding), and get one named secret in every namespace (a
  // ClusterRole bound to the ServiceAccounts group of "team").
  store.create(`${RBAC}/roles`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'Role',
    metadata: { name: 'cm-reader', namespace: 'team' },
    rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list'] }],
  });
  store.create(`${RBAC}/rolebindings`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'RoleBinding',
    metadata: { name: 'bot-cm', namespace: 'team' },
    roleRef: { apiGroup: RBAC, kind: 'Role', name: 'cm-reader' },
    subjects: [{ kind: 'ServiceAccount', name: 'bot', namespace: 'team' }],
  });
  store.create(`${RBAC}/clusterroles`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRole',
    metadata: { name: 'one-secret' },
    rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['shared'], verbs: ['get'] }],
  });
  store.create(`${RBAC}/clusterrolebindings`, {
    apiVersion: `${RBAC}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'team-one-secret' },
    roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: 'one-secret' },
    subjects: [{ kind: 'Group', name: 'system:serviceaccounts:team' }],
  });
});

afterAll(async () => {
  await h?.cluster.close();
});

const as = (token: string, path: string, init: RequestInit = {}) =>
  fetch(`${h.url}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });

async function review(token: string, attrs: Record<string, string>): Promise<boolean> {
  const r = await as(token, '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ spec: { resourceAttributes: attrs } }),
  });
  expect(r.status).toBe(201);
  return ((await r.json()) as { status: { allowed: boolean } }).status.allowed;
}

describe('ServiceAccount RBAC', () => {
  it('a RoleBinding grants within its namespace only', async () => {
    expect((await as('bot-secret', '/api/v1/namespaces/team/configmaps')).status).toBe(200);
    const other = await as('bot-secret', '/api/v1/namespaces/other/configmaps');
    expect(other.status).toBe(403);
    expect(((await other.json()) as { message: string }).message).toBe(
      'configmaps is forbidden: User "system:serviceaccount:team:bot" cannot list resource "configmaps" in API group "" in the namespace "other"',
    );
    expect(await review('bot-secret', { verb: 'list', resource: 'configmaps', namespace: 'team' })).toBe(true);
    expect(await review('bot-secret', { verb: 'list', resource: 'configmaps', namespace: 'other' })).toBe(false);
    expect(await review('bot-secret', { verb: 'delete', resource: 'configmaps', namespace: 'team' })).toBe(false);
  });

  it('honours Group subjects and resourceNames', async () => {
    expect(await review('bot-secret', { verb: 'get', resource: 'secrets', namespace: 'other', name: 'shared' })).toBe(
      true,
    );
    expect(await review('bot-secret', { verb: 'get', resource: 'secrets', namespace: 'other', name: 'private' })).toBe(
      false,
    );
    // A 404 for a permitted get of a missing object: authorization comes first, then the lookup.
    expect((await as('bot-secret', '/api/v1/namespaces/other/secrets/shared')).status).toBe(404);
    expect((await as('bot-secret', '/api/v1/namespaces/other/secrets/private')).status).toBe(403);
  });

  it('whoami names the ServiceAccount; the admin token and unknown tokens may do anything', async () => {
    const who = await as('bot-secret', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(((await who.json()) as { status: { userInfo: { username: string } } }).status.userInfo.username).toBe(
      'system:serviceaccount:team:bot',
    );
    expect((await as('sim-admin-token', '/api/v1/namespaces/other/configmaps')).status).toBe(200);
    expect(await review('anything-else', { verb: 'delete', resource: 'nodes' })).toBe(true);
  });
});
